import type { RunStatus, StreamingState, TamboComponentContent } from "@tambo-effect/client"
import { isRecord } from "effect/Predicate"
import type { PropStatus, StreamStatus } from "../types.js"

const hasValue = (value: unknown): boolean => value !== undefined && value !== null && value !== ""

const SUCCESS: PropStatus = { isPending: false, isStreaming: false, isSuccess: true }
const STREAMING: PropStatus = { isPending: false, isStreaming: true, isSuccess: false }
const PENDING: PropStatus = { isPending: true, isStreaming: false, isSuccess: false }

/**
 * Derives the statuses from the block alone. The model writes the props
 * as one JSON object, key after key, and the API adds each key when it
 * starts and replaces its value as it grows: so while the block streams,
 * every key but the last one present is complete, and the last one may
 * still grow. Once the block is done (or carries no streaming state, as
 * loaded messages do), every prop is complete.
 *
 * @since 0.1.0
 * @category Internal
 */
export const deriveStreamStatus = (
  content: TamboComponentContent,
  runStatus: RunStatus,
  runError: StreamingState["error"]
): { readonly streamStatus: StreamStatus; readonly propStatus: Readonly<Record<string, PropStatus>> } => {
  const props = isRecord(content.props) ? content.props : {}
  const keys = Object.keys(props)
  const done = content.streamingState === undefined || content.streamingState === "done"
  // A block left open by a run that ended never completes.
  const interrupted = !done && runStatus === "idle"
  const streamError = interrupted
    ? new Error(runError?.message ?? "The run ended before the component's props were complete")
    : undefined

  const propStatus: Record<string, PropStatus> = {}
  let last = -1
  keys.forEach((key, index) => {
    if (hasValue(props[key])) last = index
  })
  keys.forEach((key, index) => {
    if (done) propStatus[key] = SUCCESS
    else if (!hasValue(props[key])) propStatus[key] = interrupted ? { ...PENDING, error: streamError } : PENDING
    else if (index < last) propStatus[key] = SUCCESS
    else propStatus[key] = interrupted ? { isPending: false, isStreaming: false, isSuccess: false, error: streamError } : STREAMING
  })

  const streamStatus: StreamStatus = {
    isPending: !done && !interrupted && last < 0,
    isStreaming: !done && !interrupted && last >= 0,
    isSuccess: done,
    isError: interrupted,
    streamError
  }
  return { streamStatus, propStatus }
}
