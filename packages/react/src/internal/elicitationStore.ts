import type { TamboClient } from "@tambo-effect/client"
import type {
  ElicitationHandler,
  ElicitationRequest,
  ElicitationRequestedSchema,
  ElicitationResult,
  McpRequestContext
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

interface Waiting {
  readonly request: PendingElicitation
  readonly resolve: (result: ElicitationResult) => void
}

/**
 * The elicitations waiting for the user, in order, for
 * `useTamboMcpElicitation`. The provider attaches it to its client for as
 * long as it is mounted: an elicitation that arrives while no component
 * shows them waits here until one does (or until the server gives up on it;
 * it is cancelled when the provider unmounts or its client changes). A
 * handler the app set on the client itself is left in place, and answers
 * instead.
 *
 * @since 0.1.0
 * @category Internal
 */
export class ElicitationStore {
  #queue: ReadonlyArray<Waiting> = []
  readonly #listeners = new Set<() => void>()
  /** Answers instead of the queue (`TamboMcpProvider`'s `handlers.elicitation`). */
  #override: ElicitationHandler | undefined

  /** Has `handler` answer the elicitations the queue would, until the returned function is called. */
  override(handler: ElicitationHandler): () => void {
    this.#override = handler
    return () => {
      if (this.#override === handler) this.#override = undefined
    }
  }

  readonly subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener)
    return () => {
      this.#listeners.delete(listener)
    }
  }

  /** The request to show: the oldest one waiting. */
  readonly getSnapshot = (): PendingElicitation | undefined => this.#queue[0]?.request

  /** Answers the request shown. */
  respond(result: ElicitationResult): void {
    const [first, ...rest] = this.#queue
    if (first === undefined) return
    this.#queue = rest
    first.resolve(result)
    this.#emit()
  }

  /** Handles the client's elicitations (unless the app handles them) until the returned function is called. */
  attach(handle: ClientHandle): () => void {
    const release = handle.retain()
    const client = handle.client()
    try {
      if (client.getMcpElicitationHandler() === undefined) client.setMcpElicitationHandler(this.#handler)
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
      if (client.getMcpElicitationHandler() === this.#handler) client.setMcpElicitationHandler(undefined)
    } catch {
      // The client is already destroyed: nothing to undo.
    }
    // Nobody is left to answer: what waits is cancelled.
    const waiting = this.#queue
    this.#queue = []
    for (const w of waiting) w.resolve({ action: "cancel" })
    if (waiting.length > 0) this.#emit()
  }

  readonly #handler: ElicitationHandler = (request, context: McpRequestContext) =>
    this.#override !== undefined ? this.#override(request, context) : this.#enqueue(request, context)

  #enqueue(request: ElicitationRequest, context: McpRequestContext): Promise<ElicitationResult> {
    return new Promise<ElicitationResult>((resolve) => {
      const waiting: Waiting = {
        request: {
          serverKey: context.serverKey,
          message: request.params.message,
          requestedSchema: request.params.requestedSchema,
          signal: context.signal
        },
        resolve
      }
      // The server gave up on it (or the connection closed): it leaves the queue.
      context.signal.addEventListener("abort", () => {
        if (!this.#queue.includes(waiting)) return
        this.#queue = this.#queue.filter((w) => w !== waiting)
        resolve({ action: "cancel" })
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
