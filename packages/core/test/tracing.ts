/** An in-memory tracer for tests: every span it makes, with its parent, attributes and exit. */
import type * as Context from "effect/Context"
import type * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"

export class RecordedSpan implements Tracer.Span {
  readonly _tag = "Span"
  readonly sampled = true
  readonly attributes = new Map<string, unknown>()
  readonly events: Array<{ readonly name: string; readonly attributes: Record<string, unknown> | undefined }> = []
  readonly links: Array<Tracer.SpanLink>
  status: Tracer.SpanStatus
  exit: Exit.Exit<unknown, unknown> | undefined
  /** How many times the span was ended: once, for a well-made span. */
  ends = 0

  constructor(
    readonly name: string,
    readonly spanId: string,
    readonly traceId: string,
    readonly parent: Option.Option<Tracer.AnySpan>,
    readonly context: Context.Context<never>,
    links: ReadonlyArray<Tracer.SpanLink>,
    startTime: bigint,
    readonly kind: Tracer.SpanKind
  ) {
    this.links = [...links]
    this.status = { _tag: "Started", startTime }
  }

  end(endTime: bigint, exit: Exit.Exit<unknown, unknown>): void {
    this.status = { _tag: "Ended", startTime: this.status.startTime, endTime, exit }
    this.exit = exit
    this.ends++
  }

  attribute(key: string, value: unknown): void {
    this.attributes.set(key, value)
  }

  event(name: string, _startTime: bigint, attributes?: Record<string, unknown>): void {
    this.events.push({ name, attributes })
  }

  addLinks(links: ReadonlyArray<Tracer.SpanLink>): void {
    this.links.push(...links)
  }
}

export const makeTracer = () => {
  const spans: Array<RecordedSpan> = []
  let ids = 0
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind) => {
      const id = `span-${++ids}`
      const traceId = Option.match(parent, { onNone: () => `trace-${id}`, onSome: (p) => p.traceId })
      const span = new RecordedSpan(name, id, traceId, parent, context, links, startTime, kind)
      spans.push(span)
      return span
    },
    context: (f) => f()
  })
  return { spans, layer: Layer.setTracer(tracer) }
}

export const ancestors = (span: RecordedSpan): Array<RecordedSpan> => {
  const out: Array<RecordedSpan> = []
  let parent = span.parent
  while (Option.isSome(parent) && parent.value instanceof RecordedSpan) {
    out.push(parent.value)
    parent = parent.value.parent
  }
  return out
}
