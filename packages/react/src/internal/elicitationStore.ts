import type { TamboClient } from "@tambo-effect/client"
import type {
  ElicitationRequest,
  ElicitationRequestedSchema,
  ElicitationResult,
  HandlerResult,
  McpRequestContext,
  UrlElicitationRequest,
  UrlElicitationResult
} from "@tambo-effect/core/Mcp"
import type { ClientHandle } from "./clientHandle.js"

/**
 * An MCP server's request for input, waiting for the user.
 *
 * @since 0.1.0
 * @category Models
 */
export interface PendingElicitation {
  /** The key of the server that asks. */
  readonly serverKey: string
  readonly message: string
  /** The form: a flat object of primitive fields (JSON Schema). */
  readonly requestedSchema: ElicitationRequestedSchema
  /**
   * Aborted when the server gives up on the request (or its connection
   * closes): it has then left the queue.
   *
   * @since 0.2.0
   */
  readonly signal: AbortSignal
}

/**
 * An MCP server's request that the user go to a URL (to sign in to a third
 * party, to pay), waiting for the user's consent.
 *
 * @since 0.2.0
 * @category Models
 */
export interface PendingUrlElicitation {
  /** The key of the server that asks. */
  readonly serverKey: string
  readonly message: string
  /** An `http` or `https` URL: show it whole before opening it. */
  readonly url: string
  /** Names the elicitation; the server may say when it finished (`subscribeToMcpElicitationCompletions`). */
  readonly elicitationId: string
  /** Aborted when the server gives up on the request (or its connection closes): it has then left the queue. */
  readonly signal: AbortSignal
}

type Handler<Request, Result> = (request: Request, context: McpRequestContext) => HandlerResult<Result>

/** What a queue of one kind of request needs: the client's handler of that kind, and what the user is shown. */
interface Kind<Request, Pending, Result> {
  readonly get: (client: TamboClient) => Handler<Request, Result> | undefined
  readonly set: (client: TamboClient, handler: Handler<Request, Result> | undefined) => void
  readonly pending: (request: Request, context: McpRequestContext) => Pending
  /** The answer when nobody is left to give one. */
  readonly cancelled: Result
}

interface Waiting<Pending, Result> {
  readonly request: Pending
  readonly resolve: (result: Result) => void
}

/**
 * Requests of one kind waiting for the user, in order. The provider
 * attaches it to its client for as long as it is mounted: a request that
 * arrives while no component shows them waits here until one does (or
 * until the server gives up on it; it is cancelled when the provider
 * unmounts or its client changes). A handler the app set on the client
 * itself is left in place, and answers instead.
 */
class RequestQueue<Request, Pending, Result> {
  readonly #kind: Kind<Request, Pending, Result>
  #queue: ReadonlyArray<Waiting<Pending, Result>> = []
  readonly #listeners = new Set<() => void>()
  /** Answer instead of the queue, the last one given first (`TamboMcpProvider`s' `handlers.elicitation`). */
  #overrides: ReadonlyArray<Handler<Request, Result>> = []

  constructor(kind: Kind<Request, Pending, Result>) {
    this.#kind = kind
  }

  /**
   * Has `handler` answer the requests the queue would, until the returned function is called;
   * then the one given before it that is still in place answers, or the queue.
   */
  override(handler: Handler<Request, Result>): () => void {
    this.#overrides = [...this.#overrides, handler]
    let removed = false
    return () => {
      if (removed) return
      removed = true
      const at = this.#overrides.lastIndexOf(handler)
      if (at !== -1) this.#overrides = this.#overrides.filter((_, i) => i !== at)
    }
  }

  readonly subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener)
    return () => {
      this.#listeners.delete(listener)
    }
  }

  /** The request to show: the oldest one waiting. */
  readonly getSnapshot = (): Pending | undefined => this.#queue[0]?.request

  /**
   * Answers `request` if it still waits (one the server gave up on has left: a late answer
   * must not go to the next one); without it, the request shown.
   */
  respond(result: Result, request?: Pending): void {
    const answered = request === undefined ? this.#queue[0] : this.#queue.find((w) => w.request === request)
    if (answered === undefined) return
    this.#queue = this.#queue.filter((w) => w !== answered)
    answered.resolve(result)
    this.#emit()
  }

  /** Handles the client's requests of this kind (unless the app handles them) until the returned function is called. */
  attach(handle: ClientHandle): () => void {
    const release = handle.retain()
    const client = handle.client()
    try {
      if (this.#kind.get(client) === undefined) this.#kind.set(client, this.handler)
    } catch {
      // A client the app already destroyed: it asks nothing any more.
    }
    let detached = false
    return () => {
      if (detached) return
      detached = true
      this.#release(client)
      release()
    }
  }

  #release(client: TamboClient): void {
    try {
      if (this.#kind.get(client) === this.handler) this.#kind.set(client, undefined)
    } catch {
      // The client is already destroyed: nothing to undo.
    }
    // Nobody is left to answer: what waits is cancelled.
    const waiting = this.#queue
    this.#queue = []
    for (const w of waiting) w.resolve(this.#kind.cancelled)
    if (waiting.length > 0) this.#emit()
  }

  /** The client's handler while attached (also given to a client the provider creates, so its servers are told from their first connection). */
  readonly handler: Handler<Request, Result> = (request, context) => {
    const override = this.#overrides.at(-1)
    return override !== undefined ? override(request, context) : this.#enqueue(request, context)
  }

  #enqueue(request: Request, context: McpRequestContext): Promise<Result> {
    // Given up on before it got here (its cancel came with it): nobody is shown it.
    if (context.signal.aborted) return Promise.resolve(this.#kind.cancelled)
    return new Promise<Result>((resolve) => {
      const waiting: Waiting<Pending, Result> = { request: this.#kind.pending(request, context), resolve }
      // The server gave up on it (or the connection closed): it leaves the queue.
      context.signal.addEventListener("abort", () => {
        if (!this.#queue.includes(waiting)) return
        this.#queue = this.#queue.filter((w) => w !== waiting)
        resolve(this.#kind.cancelled)
        this.#emit()
      }, { once: true })
      this.#queue = [...this.#queue, waiting]
      this.#emit()
    })
  }

  #emit(): void {
    for (const listener of [...this.#listeners]) listener()
  }
}

/**
 * The elicitations (forms) waiting for the user, for `useTamboMcpElicitation`.
 *
 * @since 0.1.0
 * @category Internal
 */
export class ElicitationStore extends RequestQueue<ElicitationRequest, PendingElicitation, ElicitationResult> {
  constructor() {
    super({
      get: (client) => client.getMcpElicitationHandler(),
      set: (client, handler) => client.setMcpElicitationHandler(handler),
      pending: (request, context) => ({
        serverKey: context.serverKey,
        message: request.params.message,
        requestedSchema: request.params.requestedSchema,
        signal: context.signal
      }),
      cancelled: { action: "cancel" }
    })
  }
}

/**
 * The URL elicitations waiting for the user's consent, for `useTamboMcpUrlElicitation`.
 *
 * @since 0.2.0
 * @category Internal
 */
export class UrlElicitationStore
  extends RequestQueue<UrlElicitationRequest, PendingUrlElicitation, UrlElicitationResult>
{
  constructor() {
    super({
      get: (client) => client.getMcpUrlElicitationHandler(),
      set: (client, handler) => client.setMcpUrlElicitationHandler(handler),
      pending: (request, context) => ({
        serverKey: context.serverKey,
        message: request.params.message,
        url: request.params.url,
        elicitationId: request.params.elicitationId,
        signal: context.signal
      }),
      cancelled: { action: "cancel" }
    })
  }
}
