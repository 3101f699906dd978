/**
 * The AG-UI agent as a `TamboTransport` (`AgUi.makeTransport`): each run a
 * POST of the whole conversation to the agent, under ids the client makes
 * (`thr_…`, `run_…`); every other call fails with the "not offered" error
 * (unsupported.ts).
 *
 * @internal
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import type { AgentOptions } from "../../AgUi.js"
import { ConfigError, type TamboError } from "../../TamboError.js"
import * as Transport from "../../TamboTransport.js"
import * as ThreadStore from "../../ThreadStore.js"
import type * as Types from "../../Types.js"
import * as Config from "../config.js"
import { displayUrl } from "../http/connectionFailure.js"
import { onNewThread, onThread } from "./conversation.js"
import { buildRunAgentInput } from "./runAgentInput.js"
import { runAgent } from "./transport.js"
import { unsupported } from "./unsupported.js"

/**
 * The thread is the client's, as `HttpAgent` keeps its own: a `RUN_STARTED` or `RUN_FINISHED`
 * naming another (an agent that makes up an id per run) is read as naming the thread the run was
 * sent for. Adopted, it would move the run's reply off the thread holding its message.
 */
const onThreadSent = (threadId: string) =>
<E, R>(events: Stream.Stream<Transport.RunStreamEvent, E, R>): Stream.Stream<Transport.RunStreamEvent, E, R> =>
  Stream.mapChunks(events, (chunk) => {
    let out: Array<Transport.RunStreamEvent> | undefined
    let i = 0
    for (const event of chunk) {
      if ((event.type === "RUN_STARTED" || event.type === "RUN_FINISHED") && event.threadId !== threadId) {
        out ??= Chunk.toArray(chunk)
        out[i] = { ...event, threadId }
      }
      i++
    }
    return out === undefined ? chunk : Chunk.unsafeFromArray(out)
  })

/** The agent's URL, if it is one a `fetch` can POST to; shown without what may be a password or a token in it. */
const checkUrl = (url: unknown): Effect.Effect<void, ConfigError> => {
  const parsed = typeof url === "string" && URL.canParse(url) ? new URL(url) : undefined
  return parsed !== undefined && (parsed.protocol === "http:" || parsed.protocol === "https:")
    ? Effect.void
    : Effect.fail(
      new ConfigError({
        reason: "InvalidUrl",
        message: `The agent's url is not an http(s) URL: ${displayUrl(String(url))}`
      })
    )
}

/** The agent's options, checked once when its transport is made rather than at every run. */
const checkOptions = (options: AgentOptions): Effect.Effect<void, ConfigError> =>
  Effect.gen(function*() {
    yield* checkUrl(options.url)
    yield* Config.positiveDuration("firstByteTimeout", options.firstByteTimeout, Duration.seconds(60))
    yield* Config.positiveDuration("idleTimeout", options.idleTimeout, Duration.seconds(120))
    yield* Config.positiveDuration("maxRetryAfter", options.maxRetryAfter, Duration.seconds(60))
    yield* Config.retryCount(options.maxRetries)
    if (options.maxFrameBytes !== undefined) yield* Config.positiveFrameBytes(options.maxFrameBytes)
  })

const randomId = (prefix: string) => Effect.sync(() => `${prefix}${crypto.randomUUID().replaceAll("-", "")}`)

/** One run on the agent, its conversation read once its run id is known. */
const run = (
  options: AgentOptions,
  client: HttpClient.HttpClient,
  threadId: string,
  request: Transport.RunRequest,
  hooks: Transport.RunHooks | undefined,
  conversation: (runId: string) => Effect.Effect<ReadonlyArray<Types.TamboThreadMessage>>
): Stream.Stream<Transport.RunStreamEvent, TamboError> =>
  Stream.unwrapScoped(Effect.gen(function*() {
    const runId = yield* randomId("run_")
    const messages = yield* conversation(runId)
    const input = buildRunAgentInput({
      threadId,
      runId,
      parentRunId: request.previousRunId,
      messages,
      tools: request.tools,
      context: request.message.additionalContext,
      state: request.agentState
    })
    // What cannot be sent fails the run before any request: AgUiError (InvalidInput).
    if (Either.isLeft(input)) return yield* input.left
    // `cancelRun` (and a run displacing this one) ends the stream: the request is aborted.
    const aborted = yield* Deferred.make<void>()
    if (hooks?.registerAbort !== undefined) yield* hooks.registerAbort(Deferred.succeed(aborted, undefined))
    // The ids are the client's: the run knows them before any event.
    hooks?.onOpen?.({ threadId, runId })
    return runAgent({
      url: options.url,
      headers: options.headers,
      input: input.right,
      firstByteTimeout: options.firstByteTimeout,
      idleTimeout: options.idleTimeout,
      maxFrameBytes: options.maxFrameBytes,
      maxRetries: options.maxRetries,
      maxRetryAfter: options.maxRetryAfter
    }).pipe(
      onThreadSent(threadId),
      Stream.interruptWhen(Deferred.await(aborted)),
      Stream.provideService(HttpClient.HttpClient, client)
    )
  }))

/** The transport over the agent, reading the conversation from the `ThreadStore` in the context. */
export const makeTransport = (
  options: AgentOptions
): Effect.Effect<Transport.TamboTransport.Service, ConfigError, ThreadStore.ThreadStore | HttpClient.HttpClient> =>
  Effect.gen(function*() {
    yield* checkOptions(options)
    const store = yield* ThreadStore.ThreadStore
    const client = yield* HttpClient.HttpClient
    return Transport.TamboTransport.of({
      conversationFromStore: true,
      // The agent's runs end with their calls: the run pauses for the client's (internal/agui/pause.ts).
      pausesForClientTools: true,
      createRun: (_, request, hooks) =>
        Stream.unwrap(Effect.map(randomId("thr_"), (threadId) =>
          run(options, client, threadId, request, hooks, (runId) => Effect.succeed(onNewThread(request, runId))))),
      runOnThread: (_, threadId, request, hooks) =>
        run(
          options,
          client,
          threadId,
          request,
          hooks,
          (runId) =>
            Effect.map(
              store.getThread(threadId),
              (thread) => onThread(thread?.thread.messages ?? [], request.message, `user_${runId}`)
            )
        ),
      // Interrupting a run aborts its request: there is no run to cancel on a server.
      cancelRun: () => Effect.void,
      ...unsupported
    })
  })
