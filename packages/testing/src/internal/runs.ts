// Runs: `POST /v1/threads/runs`, `POST /v1/threads/{id}/runs` (continuations included) and
// cancellation. The checks, their order and the thread bookkeeping follow the API's V1Service:
// previousRunId, tool results against the pending calls, then the run lock (409).
import * as Script from "../Script.js"
import type * as Wire from "../Wire.js"
import { resolveV1Context } from "./auth.js"
import { EventStream } from "./eventStream.js"
import * as Frames from "./frames.js"
import { corsHeaders, sendJson, type RequestContext } from "./http.js"
import { HttpFailure, notFound, problem } from "./httpError.js"
import { makeId, temporaryId } from "./ids.js"
import { applyPatch } from "./jsonPatch.js"
import { splitRounds, type Round } from "./rounds.js"
import { CreateRunBody, decodeOrFail, RunBody } from "./schemas.js"
import { unstrictValue } from "./strict.js"
import type { ActiveRun, Draft, DraftComponent, ServerState } from "./state.js"
import { messageToDto, type StoredThread } from "./store.js"

type RunBodyFields = typeof RunBody.Type

interface ExtractedToolResult {
  readonly toolUseId: string
  readonly content: ReadonlyArray<Wire.TextContent | Wire.ResourceContent>
  readonly isError: boolean
}

const joinText = (blocks: ReadonlyArray<Wire.InputContent>): string =>
  blocks.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("")

/** The last result for a tool call id wins (the API drops duplicates with a warning). */
const extractToolResults = (message: Wire.InputMessage): Array<ExtractedToolResult> => {
  const byId = new Map<string, ExtractedToolResult>()
  for (const block of message.content) {
    if (block.type === "tool_result") {
      byId.set(block.toolUseId, { toolUseId: block.toolUseId, content: block.content, isError: block.isError ?? false })
    }
  }
  return [...byId.values()]
}

const validateToolResults = (results: ReadonlyArray<ExtractedToolResult>, pending: ReadonlyArray<string>): void => {
  const resultIds = new Set(results.map((result) => result.toolUseId))
  const pendingIds = new Set(pending)
  const missing = pending.filter((id) => !resultIds.has(id))
  if (missing.length > 0) {
    throw problem("INVALID_TOOL_RESULT", `Missing tool results for pending tool calls: ${missing.join(", ")}`, {
      code: "MISSING_RESULTS",
      missingToolCallIds: missing
    })
  }
  const extra = results.map((result) => result.toolUseId).filter((id) => !pendingIds.has(id))
  if (extra.length > 0) {
    throw problem("INVALID_TOOL_RESULT", `Tool results provided for unknown tool calls: ${extra.join(", ")}`, {
      code: "EXTRA_RESULTS",
      extraToolCallIds: extra
    })
  }
}

export const handleCreateRun = async (state: ServerState, ctx: RequestContext): Promise<void> => {
  const body = decodeOrFail(CreateRunBody, ctx.body)
  // The API reads the context from `thread.userKey` only: a top-level `userKey` is ignored here.
  const contextKey = resolveV1Context(body.thread?.userKey, ctx.bearer)
  // The thread is created before the run is validated, so it survives a rejected run.
  const thread = state.store.createThread(contextKey, { metadata: body.threadMetadata ?? body.thread?.metadata })
  for (const initial of body.thread?.initialMessages ?? []) {
    state.store.addMessage(thread, initial.role, [...initial.content], { metadata: initial.metadata })
  }
  await startRun(state, ctx, thread, body, contextKey, true)
}

export const handleRunOnThread = async (state: ServerState, ctx: RequestContext, thread: StoredThread): Promise<void> => {
  const body = decodeOrFail(RunBody, ctx.body)
  const contextKey = resolveV1Context(body.userKey, ctx.bearer)
  await startRun(state, ctx, thread, body, contextKey, false)
}

const startRun = async (
  state: ServerState,
  ctx: RequestContext,
  thread: StoredThread,
  body: RunBodyFields,
  contextKey: string,
  isNewThread: boolean
): Promise<void> => {
  const previousRunId = body.previousRunId
  if (thread.messages.length > 0 && !previousRunId && thread.lastCompletedRunId !== undefined) {
    throw problem("INVALID_PREVIOUS_RUN", "previousRunId is required when continuing a thread with existing messages")
  }
  if (previousRunId && thread.lastCompletedRunId !== previousRunId) {
    throw problem(
      "INVALID_PREVIOUS_RUN",
      `previousRunId ${previousRunId} does not match last completed run ${thread.lastCompletedRunId ?? "(none)"}`
    )
  }
  const results = extractToolResults(body.message)
  validateToolResults(results, thread.pendingToolCallIds ?? [])
  if (thread.runStatus !== "idle") {
    throw problem("CONCURRENT_RUN", `A run is already active on thread ${thread.id}`, {
      threadId: thread.id,
      currentRunId: thread.currentRunId
    })
  }

  // Acquire the run lock (clearing the last run's outcome, as the API does).
  const snapshot = {
    runStatus: thread.runStatus,
    currentRunId: thread.currentRunId,
    statusMessage: thread.statusMessage,
    lastRunCancelled: thread.lastRunCancelled,
    lastRunError: thread.lastRunError,
    pendingToolCallIds: thread.pendingToolCallIds,
    updatedAt: thread.updatedAt
  }
  const runId = makeId("run_")
  const threadRunIndex = thread.runs.size
  thread.runStatus = "waiting"
  thread.currentRunId = runId
  thread.statusMessage = undefined
  thread.lastRunCancelled = undefined
  thread.lastRunError = undefined
  thread.runs.set(runId, { id: runId, previousRunId, createdAt: state.now(), status: "waiting" })
  const run: ActiveRun = {
    thread,
    runId,
    controller: new AbortController(),
    draft: { messageId: makeId("msg_"), started: false, parts: [], text: [], toolUses: [], persisted: false, stored: undefined, version: 0 },
    cancelled: false,
    stream: undefined,
    response: ctx.res
  }
  state.activeRuns.set(runId, run)
  const runIndex = state.runCount++
  // The messages the run stored when it started, removed again if it never starts.
  const stored = new Set<string>()
  const rollback = (): void => {
    state.activeRuns.delete(runId)
    if (thread.currentRunId !== runId) return
    Object.assign(thread, snapshot)
    thread.runs.delete(runId)
    for (let i = thread.messages.length - 1; i >= 0; i--) {
      if (stored.has(thread.messages[i]!.id)) thread.messages.splice(i, 1)
    }
  }

  // Closing the connection before the response finished cancels the run, as the API's close
  // handler does. The API opens the response before the model works, so this holds while the
  // script is computed too.
  const res = ctx.res
  let finished = false
  res.on("finish", () => {
    finished = true
  })
  const noticeClosed = (): void => {
    try {
      // The run is passed along: a dropped connection ends the player before this event.
      cancelRun(state, thread.id, runId, "connection_closed", run)
    } catch {
      // Not current any more: the run completed, failed or was cancelled already.
    }
  }
  const noticedAtOnce = state.noticeClosedConnection === "atOnce"
  res.on("close", () => {
    // Else the model goes on, holding the lock, until the run writes next (after `play`).
    if (finished || noticedAtOnce) run.controller.abort()
    if (!finished && noticedAtOnce) noticeClosed()
  })

  const request: Script.RunRequest = {
    threadId: thread.id,
    runId,
    isNewThread,
    contextKey,
    message: body.message,
    text: joinText(body.message.content),
    toolResults: results.map((result) => ({
      ...result,
      toolName: thread.toolNames.get(result.toolUseId),
      text: joinText(result.content)
    })),
    tools: body.tools ?? [],
    availableComponents: body.availableComponents ?? [],
    toolChoice: body.toolChoice,
    previousRunId,
    additionalContext: body.message.additionalContext,
    model: body.model,
    history: thread.messages.map(messageToDto),
    body: ctx.body
  }

  // Stored as the run starts, as the API does (the tool results with its run lock, the user message
  // before the model works), so a run cancelled meanwhile leaves them in their place: tool results
  // become tool messages and clear the pending calls; the user message is stored without its
  // metadata (the API drops it) and without its tool_result blocks.
  const userContent = body.message.content.filter((block): block is Wire.TextContent | Wire.ResourceContent => block.type !== "tool_result")
  for (const result of results) {
    stored.add(state.store.addMessage(thread, "tool", [{
      type: "tool_result",
      toolUseId: result.toolUseId,
      content: result.content,
      ...(result.isError ? { isError: true } : {})
    }]).id)
  }
  if (results.length > 0) thread.pendingToolCallIds = undefined
  const storeUserMessage = () => {
    if (userContent.length > 0) stored.add(state.store.addMessage(thread, "user", userContent).id)
  }
  // Stored once the script answered instead, as the API stores it once the model starts.
  const userMessageLate = Script.isBeforeUserMessage(state.script)
  if (!userMessageLate) storeUserMessage()

  const stream = new EventStream(res, run.controller.signal, noticedAtOnce)
  const player = new RoundPlayer(state, run, stream, request)
  /** Sends the headers and RUN_STARTED; false when the client left meanwhile. */
  const open = async (): Promise<boolean> => {
    if (res.destroyed) {
      // The client left while the script was being computed.
      noticeClosed()
      return false
    }
    res.writeHead(201, {
      ...corsHeaders,
      "Content-Type": "text/event-stream",
      "Cache-Control": "no-cache",
      Connection: "keep-alive",
      ...(isNewThread ? { "X-Thread-Id": thread.id } : {}),
      "X-Run-Id": runId
    })
    res.flushHeaders()
    run.stream = stream
    await player.start()
    return true
  }
  /** The round's first steps: an HTTP error instead of a stream, while no header was sent. */
  const refused = (round: Round): HttpFailure | undefined => {
    const first = round.steps[0]
    return first?._tag === "HttpError" ? new HttpFailure(first.status, first.body, first.headers) : undefined
  }
  const roundsOf = (script: Script.Script): Round => {
    const rounds = splitRounds(script)
    thread.remainingRounds = rounds.slice(1)
    return rounds[0]!
  }
  /** The script's first round, or none once the run was cancelled while the script worked. */
  const roundOrCancelled = (script: Script.Script | typeof CANCELLED): Round =>
    script === CANCELLED ? { steps: [], finishDelayMillis: 0 } : roundsOf(script)

  try {
    // A message with content of its own beside its tool results is a new turn: the script answers
    // it, rather than the rest of the round the results answer.
    let round: Round | undefined
    let pending: PromiseLike<Script.Script> | undefined
    try {
      if (results.length > 0 && userContent.length === 0 && thread.remainingRounds.length > 0) {
        round = thread.remainingRounds[0]!
        thread.remainingRounds = thread.remainingRounds.slice(1)
      } else {
        const source = state.script
        const script = typeof source === "function"
          ? source(request, { runIndex, threadRunIndex, signal: run.controller.signal })
          : source
        if (!isPromiseLike(script)) round = roundsOf(script)
        else if (Script.isBeforeResponse(source)) round = roundOrCancelled(await untilCancelled(script, run.controller.signal))
        else pending = script
      }
    } catch (error) {
      round = failedScript(run, rollback, error)
    }

    if (round !== undefined) {
      const failure = refused(round)
      if (failure !== undefined) {
        rollback()
        throw failure
      }
      if (!(await open())) return
    } else {
      // The API opens its response, with RUN_STARTED, before the model works.
      if (!(await open())) return
      await stream.flush()
      try {
        round = roundOrCancelled(await untilCancelled(pending!, run.controller.signal))
      } catch (error) {
        if (!run.cancelled) console.error("[@tambo-effect/testing] the script failed:", error)
        round = run.cancelled ? { steps: [], finishDelayMillis: 0 } : { steps: [INTERNAL_ERROR], finishDelayMillis: 0 }
      }
      if (refused(round) !== undefined) {
        console.error(
          "[@tambo-effect/testing] Script.httpError(...) came after the response's headers: a script function that " +
            "returns a promise gets them sent first (as the API sends them before the model works). Wrap it in " +
            "Script.beforeResponse(...) for an HTTP error; the run fails with INTERNAL_ERROR instead."
        )
        round = { steps: [INTERNAL_ERROR], finishDelayMillis: 0 }
      }
    }

    if (userMessageLate && !run.cancelled) storeUserMessage()
    try {
      await player.play(round)
    } catch (error) {
      // A bug of ours: fail the run the way the API fails on an unexpected error.
      console.error("[@tambo-effect/testing] run failed:", error)
      await player.fail(INTERNAL_ERROR)
    }
    // The run's next write found its connection closed (or dropped it: a drop() step), if it was
    // not noticed at once. A run that ended otherwise let go of its lock already.
    if (!noticedAtOnce && (stream.closed || stream.ended)) noticeClosed()
  } finally {
    state.activeRuns.delete(runId)
  }
}

const noop = (): void => undefined

const CANCELLED: unique symbol = Symbol("cancelled")

/**
 * The script's answer, or `CANCELLED` as soon as its run is cancelled: the API stops the model
 * when a run is cancelled, so a script that never settles does not hold the response open.
 */
const untilCancelled = (
  script: PromiseLike<Script.Script>,
  signal: AbortSignal
): Promise<Script.Script | typeof CANCELLED> =>
  signal.aborted ? Promise.resolve(CANCELLED) : new Promise((resolve, reject) => {
    const onAbort = () => resolve(CANCELLED)
    signal.addEventListener("abort", onAbort, { once: true })
    script.then(
      (value) => {
        signal.removeEventListener("abort", onAbort)
        resolve(value)
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort)
        reject(error)
      }
    )
  })

const isPromiseLike = (u: unknown): u is PromiseLike<Script.Script> =>
  typeof u === "object" && u !== null && typeof Reflect.get(u, "then") === "function"

/**
 * The round of a script that failed before the response was open: none for a run cancelled
 * meanwhile (the response then ends as any cancelled run does); otherwise the request fails 500.
 */
const failedScript = (run: ActiveRun, rollback: () => void, error: unknown): Round => {
  if (run.cancelled) {
    // A script that gave up once its run was cancelled (its signal aborted) is no failure: the
    // API's response is open by then, and the run ends as any cancelled run does.
    return { steps: [], finishDelayMillis: 0 }
  }
  rollback()
  console.error("[@tambo-effect/testing] the script failed; answering 500:", error)
  // What NestJS answers for an exception that is not an HttpException.
  throw new HttpFailure(500, { statusCode: 500, message: "Internal server error" })
}

const INTERNAL_ERROR: Script.RunError = {
  _tag: "RunError",
  message: "An internal error occurred",
  code: "INTERNAL_ERROR",
  category: "server_error",
  isRetryable: false,
  status: 500,
  storedMessage: "An internal error occurred",
  twice: true,
  keepPartial: true
}

const draftHasContent = (draft: Draft): boolean =>
  draft.started || draft.parts.length > 0 || draft.toolUses.length > 0

const isJsonObject = (u: unknown): u is Wire.JsonObject => typeof u === "object" && u !== null && !Array.isArray(u)

const parseToolInput = (json: string): Wire.JsonObject => {
  try {
    const parsed: unknown = JSON.parse(json)
    return isJsonObject(parsed) ? parsed : {}
  } catch {
    return {}
  }
}

/**
 * The props a component streamed so far; a scripted patch that does not apply (a fault under test)
 * is skipped.
 */
const streamedProps = (part: DraftComponent): Wire.JsonObject => {
  if (part.streaming === undefined) return part.block.props
  let props: Wire.JsonObject = {}
  for (const delta of part.streaming.deltas.slice(0, part.streaming.sent)) {
    try {
      props = applyPatch(props, delta.operations)
    } catch {
      // Skipped.
    }
  }
  return props
}

/** The API strips its own `_tambo_*` parameters from a component's props before storing them. */
const withoutTamboKeys = (props: Wire.JsonObject): Wire.JsonObject => {
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(props)) if (!key.startsWith("_tambo_")) out[key] = props[key]
  return out
}

/**
 * The API stores a tool call's parameters without its `_tambo_*` ones, and returns the two status
 * messages (kept aside) in the call's input again.
 */
const storedToolInput = (input: Wire.JsonObject): Wire.JsonObject => {
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(input)) {
    if (!key.startsWith("_tambo_") || key === "_tambo_statusMessage" || key === "_tambo_completionStatusMessage") {
      out[key] = input[key]
    }
  }
  return out
}

/**
 * The round's assistant message as the API stores it: its one text block first (the streamed
 * text trimmed, or `" "` when the model wrote none, as for a tool call alone), then the
 * components (props without `_tambo_*` keys, state `{}` when none), then the tool calls.
 */
const draftContent = (draft: Draft): Array<Wire.Content> => {
  const text = draft.text.join("")
  const content: Array<Wire.Content> = [{ type: "text", text: text.length > 0 ? text.trim() : " " }]
  for (const part of draft.parts) {
    if (part.kind === "component") {
      content.push({ ...part.block, props: withoutTamboKeys(streamedProps(part)), state: part.block.state ?? {} })
    }
  }
  for (const use of draft.toolUses) {
    // The API stores a call's arguments with its strict mode undone by the tool's own schema.
    const input = parseToolInput(use.arguments)
    content.push({
      type: "tool_use",
      id: use.id,
      name: use.name,
      input: storedToolInput(use.inputSchema === undefined ? input : unstrictValue(use.inputSchema, input) as Wire.JsonObject)
    })
  }
  return content
}

/**
 * Called before each chunk of the model is streamed. The API stores the run's assistant message
 * at the model's first chunk (`appendNewMessageToThread`) and writes what streamed so far into it
 * as the run goes (the throttled `syncThreadStatus` of `ThreadsService`), so a
 * read of the thread or its messages during a run shows it, not cancelled, with the stream's
 * `messageId` as its id. This server syncs at every chunk: a read shows all that streamed before
 * it. The content is built when read, and kept until the next chunk (a component state written
 * meanwhile lasts until then, as the API's next sync overwrites it).
 */
const syncDraft = (state: ServerState, thread: StoredThread, draft: Draft): void => {
  if (draft.persisted || !draftHasContent(draft)) return
  draft.version++
  if (draft.stored !== undefined) return
  const message = state.store.addMessage(thread, "assistant", [], { id: draft.messageId })
  let cached: { readonly version: number; readonly content: Array<Wire.Content> } | undefined
  Object.defineProperty(message, "content", {
    configurable: true,
    enumerable: true,
    get: () => {
      if (cached?.version !== draft.version) cached = { version: draft.version, content: draftContent(draft) }
      return cached.content
    },
    set: (content: Array<Wire.Content>) => {
      cached = { version: draft.version, content }
    }
  })
  draft.stored = message
}

/** Stores the round's assistant message in its final form (see `draftContent`). */
const persistDraft = (state: ServerState, thread: StoredThread, draft: Draft, isCancelled: boolean): void => {
  if (draft.persisted || !draftHasContent(draft)) return
  syncDraft(state, thread, draft)
  draft.persisted = true
  const message = draft.stored!
  Object.defineProperty(message, "content", { configurable: true, enumerable: true, writable: true, value: draftContent(draft) })
  message.isCancelled = isCancelled
}

/** A run that fails without keeping what it streamed removes its message again. */
const discardDraft = (thread: StoredThread, draft: Draft): void => {
  if (draft.persisted) return
  draft.persisted = true
  const stored = draft.stored
  if (stored === undefined) return
  const index = thread.messages.indexOf(stored)
  if (index >= 0) thread.messages.splice(index, 1)
}

/** `DELETE /v1/threads/{id}/runs/{runId}`, and what a closed connection does. */
export const cancelRun = (
  state: ServerState,
  threadId: string,
  runId: string,
  reason: "user_cancelled" | "connection_closed",
  run?: ActiveRun
): { readonly runId: string; readonly status: "cancelled" } => {
  const thread = state.store.threads.get(threadId)
  const record = thread?.runs.get(runId)
  // Only the current run can be cancelled; anything else is "not found".
  if (thread === undefined || record === undefined || thread.currentRunId !== runId) {
    throw notFound(`Run ${runId} not found on thread ${threadId}`)
  }
  thread.runStatus = "idle"
  thread.currentRunId = undefined
  thread.lastRunCancelled = true
  thread.lastRunError = undefined
  thread.pendingToolCallIds = undefined
  thread.lastCompletedRunId = runId
  thread.generationStage = "CANCELLED"
  state.store.touch(thread)
  record.status = "cancelled"
  const active = state.activeRuns.get(runId) ?? run
  if (active !== undefined && draftHasContent(active.draft) && !active.draft.persisted) {
    // The API stored the run's message as the model streamed it, and marks it as the latest
    // assistant message.
    persistDraft(state, thread, active.draft, true)
  } else {
    // Before the model streamed anything the latest assistant message is an older run's, and the
    // API marks that one.
    const latest = [...thread.messages].reverse().find((message) => message.role === "assistant")
    if (latest !== undefined) latest.isCancelled = true
  }
  state.cancels.push({ threadId, runId, reason, time: state.now() })
  if (active !== undefined) {
    active.cancelled = true
    active.controller.abort()
  }
  return { runId, status: "cancelled" }
}

export const handleCancelRun = (state: ServerState, ctx: RequestContext, threadId: string, runId: string): void => {
  sendJson(ctx.res, 200, cancelRun(state, threadId, runId, "user_cancelled"))
}

/** A step after which the tool calls before it still end their round with the steps that follow. */
const endsWithCalls = (step: Script.Step): boolean => step._tag === "ToolCall" || step._tag === "KeepLock"

/** Lets go of the thread's run lock, if the run `runId` still holds it. */
const releaseLock = (state: ServerState, thread: StoredThread, runId: string): void => {
  if (thread.currentRunId !== runId) return
  thread.runStatus = "idle"
  thread.currentRunId = undefined
  state.store.touch(thread)
}

/** Plays one round of a script on an open SSE response. */
class RoundPlayer {
  private readonly messageIdJson: string
  /** The model client's id for the text message; tool calls keep pointing at it. */
  private readonly temporaryMessageId = temporaryId()
  /** The input schema of each tool the request declared, by name. */
  private readonly clientTools: ReadonlyMap<string, Wire.JsonObject>
  private readonly pending: Array<Wire.PendingToolCall> = []
  private textOpen = false
  private textStarted = false
  /** What the run's lock waits for after the round's end (`Script.keepLock`). */
  private lockKeptUntil: PromiseLike<unknown> | undefined

  constructor(
    private readonly state: ServerState,
    private readonly run: ActiveRun,
    private readonly stream: EventStream,
    request: Script.RunRequest
  ) {
    this.messageIdJson = JSON.stringify(run.draft.messageId)
    this.clientTools = new Map(request.tools.map((tool) => [tool.name, tool.inputSchema]))
  }

  private get interrupted(): boolean {
    return this.run.cancelled || this.stream.closed || this.stream.ended
  }

  /** The run's assistant message as stored so far (see `syncDraft`). */
  private sync(): void {
    syncDraft(this.state, this.run.thread, this.run.draft)
  }

  private send(event: object): Promise<void> | undefined {
    return this.stream.send(Frames.dataFrame({ ...event, timestamp: this.state.now() }))
  }

  /** The response's first event; sent at once, before the model works. */
  async start(): Promise<void> {
    const { thread, runId } = this.run
    await this.send({ type: "RUN_STARTED", threadId: thread.id, runId })
    if (thread.currentRunId === runId) {
      thread.runStatus = "streaming"
      thread.generationStage = "STREAMING_RESPONSE"
      const record = thread.runs.get(runId)
      if (record !== undefined) record.status = "streaming"
    }
  }

  async play(round: Round): Promise<void> {
    const { thread } = this.run
    const steps = round.steps
    let finishDelayMillis = round.finishDelayMillis
    for (let i = 0; i < steps.length; i++) {
      if (this.interrupted) break
      const step = steps[i]!
      const done = await this.step(step)
      if (done) return
      // A client tool call ends the round (after any tool calls, or a keepLock, streamed with it):
      // what follows plays when the client continues with the results.
      const next = steps[i + 1]
      if (endsWithCalls(step) && this.pending.length > 0 && next !== undefined && !endsWithCalls(next)) {
        thread.remainingRounds = [{ steps: steps.slice(i + 1), finishDelayMillis }, ...thread.remainingRounds]
        finishDelayMillis = 0
        break
      }
    }
    if (this.interrupted) return this.stopAfterCancel()
    await this.finish(finishDelayMillis)
  }

  /** A cancelled run whose connection is still open ends with the API's CANCELLED error. */
  private async stopAfterCancel(): Promise<void> {
    if (!this.run.cancelled || this.stream.closed || this.stream.ended) return
    await this.send({ type: "RUN_ERROR", message: "Run cancelled", code: "CANCELLED" })
    this.stream.end()
  }

  /** Returns true when the step ended the response. */
  private async step(step: Script.Step): Promise<boolean> {
    const { stream, state, run } = this
    switch (step._tag) {
      case "Text": {
        run.draft.started = true
        if (!this.textOpen) {
          if (!this.textStarted) run.draft.parts.push({ kind: "text" })
          this.textStarted = true
          this.sync()
          await this.send({ type: "TEXT_MESSAGE_START", messageId: run.draft.messageId, role: "assistant" })
          this.textOpen = true
        }
        for (const delta of step.deltas) {
          if (this.interrupted) return false
          run.draft.text.push(delta)
          this.sync()
          const wait = stream.send(Frames.textContentFrame(this.messageIdJson, delta, state.now()))
          if (wait !== undefined) await wait
        }
        if (step.close) {
          await this.send({ type: "TEXT_MESSAGE_END", messageId: run.draft.messageId })
          this.textOpen = false
        }
        return false
      }
      case "Reasoning": {
        run.draft.started = true
        this.sync()
        await this.send({ type: "THINKING_TEXT_MESSAGE_START" })
        for (const delta of step.deltas) {
          if (this.interrupted) return false
          const wait = stream.send(Frames.thinkingContentFrame(delta, state.now()))
          if (wait !== undefined) await wait
        }
        await this.send({ type: "THINKING_TEXT_MESSAGE_END" })
        return false
      }
      case "ToolCall": {
        const toolCallId = step.id ?? makeId("call_")
        const idJson = JSON.stringify(toolCallId)
        run.thread.toolNames.set(toolCallId, step.name)
        run.draft.started = true
        this.sync()
        await this.send({
          type: "TOOL_CALL_START",
          toolCallId,
          toolCallName: step.name,
          // The API maps text message ids to stored ids but leaves this one as the model client made it.
          ...(this.textStarted ? { parentMessageId: this.temporaryMessageId } : {})
        })
        for (const delta of step.argumentDeltas) {
          if (this.interrupted) return false
          const wait = stream.send(Frames.toolCallArgsFrame(idJson, delta, state.now()))
          if (wait !== undefined) await wait
        }
        const args = step.argumentDeltas.join("")
        const inputSchema = this.clientTools.get(step.name)
        run.draft.toolUses.push({ id: toolCallId, name: step.name, arguments: args, ...(inputSchema === undefined ? {} : { inputSchema }) })
        this.sync()
        await this.send({ type: "TOOL_CALL_END", toolCallId })
        if (step.pending ?? this.clientTools.has(step.name)) {
          this.pending.push({ toolCallId, toolName: step.name, arguments: args })
        }
        return false
      }
      case "Component": {
        const componentId = step.id ?? temporaryId()
        run.draft.started = true
        // Stored with the props streamed so far until it ends, as the API stores a partial message.
        const streaming = { deltas: step.deltas, sent: 0 }
        const block = { type: "component" as const, id: componentId, name: step.name, ...(step.state !== undefined ? { state: step.state } : {}) }
        const part: DraftComponent = { kind: "component", block: { ...block, props: {} }, streaming }
        run.draft.parts.push(part)
        this.sync()
        await this.send({
          type: "CUSTOM",
          name: "tambo.component.start",
          value: { messageId: run.draft.messageId, componentId, componentName: step.name }
        })
        for (const delta of step.deltas) {
          if (this.interrupted) return false
          streaming.sent++
          this.sync()
          const wait = stream.send(Frames.customFrame(
            "tambo.component.props_delta",
            { componentId, operations: delta.operations, streamingStatus: delta.streamingStatus },
            state.now()
          ))
          if (wait !== undefined) await wait
        }
        part.block = { ...block, props: step.finalProps }
        part.streaming = undefined
        this.sync()
        await this.send({ type: "CUSTOM", name: "tambo.component.end", value: { componentId, finalProps: step.finalProps } })
        return false
      }
      case "Event": {
        await stream.send(Frames.dataFrame(step.event))
        return false
      }
      case "Frame": {
        await stream.send(step.raw)
        return false
      }
      case "RunError": {
        await this.fail(step)
        return true
      }
      case "HttpError": {
        // Rejected by splitRounds unless first, and a first one never reaches the player.
        return false
      }
      case "Delay": {
        await stream.flush()
        await stream.sleep(step.millis)
        return false
      }
      case "Pace": {
        stream.pace = step.millis
        return false
      }
      case "Drop": {
        if (step.afterEvents === undefined || stream.frames >= step.afterEvents) {
          await stream.drop()
          return true
        }
        stream.dropAfter = step.afterEvents
        return false
      }
      case "Hang": {
        await stream.flush()
        await stream.untilStopped()
        return false
      }
      case "Hold": {
        await stream.flush()
        // A promise that rejects lets the run go on too: the test said "now", not "fail".
        await Promise.race([Promise.resolve(step.until).then(noop, noop), stream.untilStopped()])
        return false
      }
      case "KeepLock": {
        this.lockKeptUntil = step.until
        return false
      }
      case "CloseStream": {
        this.complete()
        stream.end()
        return true
      }
      case "AwaitToolResults": {
        // splitRounds turns these into round boundaries.
        return false
      }
    }
  }

  private async finish(finishDelayMillis: number): Promise<void> {
    const { thread, runId } = this.run
    if (this.textOpen) {
      // The text message stays open until the model's stream ends, after any tool call or component.
      await this.send({ type: "TEXT_MESSAGE_END", messageId: this.run.draft.messageId })
      this.textOpen = false
    }
    if (this.pending.length > 0) {
      await this.stream.send(Frames.awaitingInputFrame(this.pending, this.state.now()))
    }
    if (finishDelayMillis > 0) {
      await this.stream.flush()
      await this.stream.sleep(finishDelayMillis)
      if (this.stream.closed) return
    }
    this.complete()
    // Sent even if the run was cancelled meanwhile: the API's run loop is over by then.
    await this.send({ type: "RUN_FINISHED", threadId: thread.id, runId })
    this.stream.end()
  }

  /**
   * Records the run's end if it still holds the run lock, storing the assistant message, and lets
   * go of the lock, at once or once what `Script.keepLock` gave settled.
   */
  private complete(): void {
    const { thread, runId, draft } = this.run
    if (thread.currentRunId !== runId) return
    persistDraft(this.state, thread, draft, false)
    const release = () => releaseLock(this.state, thread, runId)
    if (this.lockKeptUntil === undefined) release()
    else void Promise.resolve(this.lockKeptUntil).then(release, release)
    thread.lastRunCancelled = undefined
    thread.lastRunError = undefined
    thread.pendingToolCallIds = this.pending.length > 0 ? this.pending.map((call) => call.toolCallId) : undefined
    thread.lastCompletedRunId = runId
    thread.generationStage = "COMPLETE"
    this.state.store.touch(thread)
    const record = thread.runs.get(runId)
    if (record !== undefined) record.status = "completed"
  }

  async fail(step: Script.RunError): Promise<void> {
    const { thread, runId, draft } = this.run
    const event = {
      type: "RUN_ERROR",
      message: step.message,
      code: step.code,
      category: step.category,
      isRetryable: step.isRetryable,
      ...(step.status !== undefined ? { status: step.status } : {})
    }
    await this.send(event)
    if (thread.currentRunId === runId) {
      if (step.keepPartial) persistDraft(this.state, thread, draft, false)
      else discardDraft(thread, draft)
      thread.runStatus = "idle"
      thread.currentRunId = undefined
      thread.lastRunCancelled = undefined
      thread.lastRunError = { code: step.code, message: step.storedMessage }
      thread.pendingToolCallIds = undefined
      thread.lastCompletedRunId = runId
      thread.generationStage = "ERROR"
      this.state.store.touch(thread)
      const record = thread.runs.get(runId)
      if (record !== undefined) record.status = "failed"
    }
    // The service writes the error, rethrows, and the controller writes it again.
    if (step.twice) await this.send(event)
    this.stream.end()
  }
}
