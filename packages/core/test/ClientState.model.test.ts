// A model-based test of the reducer's bookkeeping of open things: generated sequences of one
// thread's run events (text, reasoning, tool calls with their arguments, valid JSON, blank or not, cut
// anywhere, components and their patches, refused ones among them, pauses, custom and unknown
// events, ends of a run and starts of the next, in any order, repeated, for ids nobody started),
// in chunks, with the local ending among them. Each sequence is reduced three ways: one event per
// `reduce`, one `EVENTS` action per chunk, and every chunk in one `reduce`; the three agree after
// every chunk. After every step: the reducer did not throw; every text delta and props patch it
// took is still there, once, and nothing of a refused patch; a call's input is what the arguments
// it took parse to, and once they ended, until the call is answered or its run ends without
// pausing for it, arguments that are not a JSON object are recorded as such (no tool runs on them); a
// result is kept, and one for a call nobody started is an anomaly, as is the end of a call whose arguments do not stream, or of a component that does not; ids are unique; and from a run's end to the next run's start,
// whatever events come, nothing shows as streaming or open. Seeded, so a failure reproduces; MODEL_RUNS (default 300) and MODEL_SEED
// (default 17) override. A counterexample it shrinks to goes to ClientState.test.ts as a named test.
import { describe, expect, it } from "@effect/vitest"
import * as fc from "effect/FastCheck"
import * as ClientState from "../src/ClientState.js"
import type { Action, ClientState as State, ThreadState } from "../src/ClientState.js"
import type * as Events from "../src/Events.js"
import { parsePartialJson } from "../src/internal/partialJson.js"
import type { Content } from "../src/Types.js"

const runs = Number(process.env.MODEL_RUNS ?? 300)
const seed = Number(process.env.MODEL_SEED ?? 17)

type AnyEvent = Events.TamboEvent | Events.UnknownEvent

// ---------------------------------------------------------------------------
// Commands: abstract, made concrete (unique text tokens, the next piece of a call's arguments)
// when a sequence is built.
// ---------------------------------------------------------------------------

const messageId = fc.constantFrom("m1", "m2", "u1")
const callId = fc.constantFrom("c1", "c2")
const componentId = fc.constantFrom("k1", "k2")

type Command =
  | { readonly kind: "runStarted" }
  | { readonly kind: "runFinished"; readonly cancelled: boolean }
  | { readonly kind: "runError"; readonly cancelled: boolean }
  | { readonly kind: "endedLocally"; readonly cancelled: boolean }
  | { readonly kind: "awaiting"; readonly call: string }
  | { readonly kind: "textStart"; readonly message: string; readonly user: boolean }
  | { readonly kind: "text"; readonly message: string }
  | { readonly kind: "textEnd"; readonly message: string }
  | { readonly kind: "thinkingStart" }
  | { readonly kind: "thinking" }
  | { readonly kind: "thinkingEnd" }
  | { readonly kind: "reasoningStart"; readonly message: string }
  | { readonly kind: "reasoning"; readonly message: string }
  | { readonly kind: "reasoningEnd"; readonly message: string }
  | { readonly kind: "toolStart"; readonly call: string; readonly parent: string | undefined; readonly script: number }
  | { readonly kind: "toolArgs"; readonly call: string; readonly cut: number }
  | { readonly kind: "toolBlank"; readonly call: string; readonly blank: number }
  | { readonly kind: "toolEnd"; readonly call: string }
  | { readonly kind: "toolResult"; readonly call: string }
  | { readonly kind: "componentStart"; readonly message: string; readonly component: string }
  | { readonly kind: "props"; readonly component: string }
  | { readonly kind: "badProps"; readonly component: string; readonly patch: number }
  | { readonly kind: "state"; readonly component: string }
  | { readonly kind: "componentEnd"; readonly component: string }
  | { readonly kind: "parent"; readonly message: string }
  | { readonly kind: "custom" }
  | { readonly kind: "unknown" }

// The arguments a call streams: valid JSON, or text that is not (cut short, malformed, a value
// that is no object, text after a complete value). A call's deltas are its script cut anywhere;
// past its end, each delta is one more "}".
const ARGS_SCRIPTS = [
  "{\"q\":\"abc\",\"n\":[1,2],\"o\":{\"x\":true}}",
  "{\"a\":1}}",
  "{\"a\":tru",
  "{\"a\":trux}",
  "[1,]",
  "{\"a\" 1}",
  "nul",
  "{\"a\":1} {\"b\":2}",
  "}",
  "{\"a\":\"\\x\"}",
  "{\"a\":1,}",
  "{\"a\":[1,2}",
  "{\"a\":-}",
  "{\"a\":1.}",
  "  ",
  "{\"a\":\"b\\u12",
  "[1]",
  // Blank: no arguments, `{}`, whether the call ends on them or more comes.
  "\n",
  " \t\r\n"
]

const BLANK_SCRIPTS = ARGS_SCRIPTS.flatMap((text, i) => (text.trim() === "" ? [i] : []))

// Whitespace a call's arguments may get as a delta of its own (toolBlank): the whole of them
// when it comes first, blank arguments a call can end on.
const BLANKS = [" ", "  ", "\n", " \t\r\n"]

// Props patches a component refuses as a whole; `key` is a key of this patch's own, which must
// not show, since none of the patch is applied.
const badPatch = (i: number, key: string): ReadonlyArray<Events.JsonPatchOperation> => {
  switch (i) {
    case 0:
      return [{ op: "replace", path: "/missing", value: key }]
    case 1:
      return [{ op: "remove", path: "/missing" }]
    case 2:
      return [{ op: "add", path: key, value: "no slash" }]
    case 3:
      return [{ op: "add", path: `/missing/${key}`, value: "deep" }]
    case 4:
      return [{ op: "add", path: `/__proto__/${key}`, value: "polluted" }]
    case 5:
      return [{ op: "add", path: `/${key}`, value: "first" }, { op: "replace", path: "/missing", value: 1 }]
    case 6:
      return [{ op: "add", path: `/${key}`, value: "first" }, { op: "test", path: `/${key}`, value: "other" }]
    default:
      return [{ op: "move", from: "/missing", path: `/${key}` }]
  }
}
const BAD_PATCHES = 8

const kind = <K extends Command["kind"]>(k: K) => fc.constant(k)

const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ kind: kind("runStarted") }) },
  { weight: 2, arbitrary: fc.record({ kind: kind("runFinished"), cancelled: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: kind("runError"), cancelled: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: kind("endedLocally"), cancelled: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: kind("awaiting"), call: callId }) },
  { weight: 3, arbitrary: fc.record({ kind: kind("textStart"), message: messageId, user: fc.boolean() }) },
  { weight: 5, arbitrary: fc.record({ kind: kind("text"), message: messageId }) },
  { weight: 2, arbitrary: fc.record({ kind: kind("textEnd"), message: messageId }) },
  { weight: 1, arbitrary: fc.record({ kind: kind("thinkingStart") }) },
  { weight: 2, arbitrary: fc.record({ kind: kind("thinking") }) },
  { weight: 1, arbitrary: fc.record({ kind: kind("thinkingEnd") }) },
  { weight: 1, arbitrary: fc.record({ kind: kind("reasoningStart"), message: messageId }) },
  { weight: 2, arbitrary: fc.record({ kind: kind("reasoning"), message: messageId }) },
  { weight: 1, arbitrary: fc.record({ kind: kind("reasoningEnd"), message: messageId }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: kind("toolStart"),
      call: callId,
      parent: fc.option(messageId, { nil: undefined }),
      // One call in five streams blank arguments.
      script: fc.oneof(
        { weight: 4, arbitrary: fc.nat(ARGS_SCRIPTS.length - 1) },
        { weight: 1, arbitrary: fc.constantFrom(...BLANK_SCRIPTS) }
      )
    })
  },
  { weight: 5, arbitrary: fc.record({ kind: kind("toolArgs"), call: callId, cut: fc.nat(12) }) },
  { weight: 3, arbitrary: fc.record({ kind: kind("toolBlank"), call: callId, blank: fc.nat(BLANKS.length - 1) }) },
  { weight: 2, arbitrary: fc.record({ kind: kind("toolEnd"), call: callId }) },
  { weight: 1, arbitrary: fc.record({ kind: kind("toolResult"), call: callId }) },
  { weight: 3, arbitrary: fc.record({ kind: kind("componentStart"), message: messageId, component: componentId }) },
  { weight: 4, arbitrary: fc.record({ kind: kind("props"), component: componentId }) },
  { weight: 2, arbitrary: fc.record({ kind: kind("badProps"), component: componentId, patch: fc.nat(BAD_PATCHES - 1) }) },
  { weight: 1, arbitrary: fc.record({ kind: kind("state"), component: componentId }) },
  { weight: 2, arbitrary: fc.record({ kind: kind("componentEnd"), component: componentId }) },
  { weight: 1, arbitrary: fc.record({ kind: kind("parent"), message: messageId }) },
  { weight: 1, arbitrary: fc.record({ kind: kind("custom") }) },
  { weight: 1, arbitrary: fc.record({ kind: kind("unknown") }) }
)

/** Commands and where chunks end: `true` after a command ends its chunk. */
const sequence = fc.array(fc.tuple(command, fc.boolean()), { minLength: 1, maxLength: 40 })

const ENDINGS = new Set(["RUN_FINISHED", "RUN_ERROR", "RUN_ENDED_LOCALLY"])

interface Step {
  /** An event of the run, or the local ending. */
  readonly event: AnyEvent | { readonly type: "RUN_ENDED_LOCALLY"; readonly cancelled: boolean }
}

const THREAD = "t1"

/** Turns commands into concrete events, grouped in chunks. */
const build = (commands: ReadonlyArray<readonly [Command, boolean]>): ReadonlyArray<ReadonlyArray<Step>> => {
  let token = 0
  let run = 1
  const script = new Map<string, { readonly text: string; pos: number }>()
  const chunks: Array<Array<Step>> = []
  let chunk: Array<Step> = []
  const close = () => {
    if (chunk.length > 0) chunks.push(chunk)
    chunk = []
  }
  for (const [c, endsChunk] of commands) {
    const next = () => `<${token++}>`
    let event: Step["event"]
    switch (c.kind) {
      case "runStarted":
        event = { type: "RUN_STARTED", threadId: THREAD, runId: `run${++run}` }
        break
      case "runFinished":
        event = c.cancelled
          ? { type: "RUN_FINISHED", threadId: THREAD, runId: `run${run}`, outcome: { type: "cancelled" } }
          : { type: "RUN_FINISHED", threadId: THREAD, runId: `run${run}` }
        break
      case "runError":
        event = c.cancelled ? { type: "RUN_ERROR", message: "Run cancelled", code: "CANCELLED" } : { type: "RUN_ERROR", message: "boom" }
        break
      case "endedLocally":
        event = { type: "RUN_ENDED_LOCALLY", cancelled: c.cancelled }
        break
      case "awaiting":
        event = {
          type: "CUSTOM",
          name: "tambo.run.awaiting_input",
          value: { pendingToolCalls: [{ toolCallId: c.call, toolName: "f", arguments: "{}" }] }
        }
        break
      case "textStart":
        event = { type: "TEXT_MESSAGE_START", messageId: c.message, role: c.user ? "user" : "assistant" }
        break
      case "text":
        event = { type: "TEXT_MESSAGE_CONTENT", messageId: c.message, delta: next() }
        break
      case "textEnd":
        event = { type: "TEXT_MESSAGE_END", messageId: c.message }
        break
      case "thinkingStart":
        event = { type: "THINKING_TEXT_MESSAGE_START" }
        break
      case "thinking":
        event = { type: "THINKING_TEXT_MESSAGE_CONTENT", delta: next() }
        break
      case "thinkingEnd":
        event = { type: "THINKING_TEXT_MESSAGE_END" }
        break
      case "reasoningStart":
        event = { type: "REASONING_MESSAGE_START", messageId: c.message, role: "reasoning" }
        break
      case "reasoning":
        event = { type: "REASONING_MESSAGE_CONTENT", messageId: c.message, delta: next() }
        break
      case "reasoningEnd":
        event = { type: "REASONING_MESSAGE_END", messageId: c.message }
        break
      case "toolStart":
        script.set(c.call, { text: ARGS_SCRIPTS[c.script]!, pos: 0 })
        event = c.parent === undefined
          ? { type: "TOOL_CALL_START", toolCallId: c.call, toolCallName: "f" }
          : { type: "TOOL_CALL_START", toolCallId: c.call, toolCallName: "f", parentMessageId: c.parent }
        break
      case "toolArgs": {
        const args = script.get(c.call) ?? { text: ARGS_SCRIPTS[0]!, pos: 0 }
        script.set(c.call, args)
        const delta = args.pos < args.text.length ? args.text.slice(args.pos, args.pos + 1 + c.cut) : "}"
        args.pos += delta.length
        event = { type: "TOOL_CALL_ARGS", toolCallId: c.call, delta }
        break
      }
      case "toolBlank":
        event = { type: "TOOL_CALL_ARGS", toolCallId: c.call, delta: BLANKS[c.blank]! }
        break
      case "toolEnd":
        event = { type: "TOOL_CALL_END", toolCallId: c.call }
        break
      case "toolResult":
        event = { type: "TOOL_CALL_RESULT", messageId: `r_${c.call}`, toolCallId: c.call, content: next() }
        break
      case "componentStart":
        event = { type: "CUSTOM", name: "tambo.component.start", value: { messageId: c.message, componentId: c.component, componentName: "Card" } }
        break
      case "props": {
        const key = `p${token}`
        event = { type: "CUSTOM", name: "tambo.component.props_delta", value: { componentId: c.component, operations: [{ op: "add", path: `/${key}`, value: next() }] } }
        break
      }
      case "badProps": {
        const key = `bad${token++}`
        event = { type: "CUSTOM", name: "tambo.component.props_delta", value: { componentId: c.component, operations: badPatch(c.patch, key) } }
        break
      }
      case "state":
        event = { type: "CUSTOM", name: "tambo.component.state_delta", value: { componentId: c.component, operations: [{ op: "add", path: "/s", value: next() }] } }
        break
      case "componentEnd":
        event = { type: "CUSTOM", name: "tambo.component.end", value: { componentId: c.component } }
        break
      case "parent":
        event = { type: "CUSTOM", name: "tambo.message.parent", value: { messageId: c.message, parentMessageId: "u1" } }
        break
      case "custom":
        event = { type: "UNKNOWN", eventType: "CUSTOM", name: "app.something", event: { type: "CUSTOM", name: "app.something", value: { n: 1 } } }
        break
      case "unknown":
        event = { type: "UNKNOWN", eventType: "FUTURE_EVENT", event: { type: "FUTURE_EVENT" } }
        break
    }
    // The local ending is an action of its own: it ends a chunk.
    if (event.type === "RUN_ENDED_LOCALLY") close()
    chunk.push({ event })
    if (endsChunk || event.type === "RUN_ENDED_LOCALLY") close()
  }
  close()
  return chunks
}

const chunkAt = (index: number): number => 10_000 + index * 100

const actionsOf = (steps: ReadonlyArray<Step>, at: number, oneByOne: boolean): Array<Action> => {
  const first = steps[0]!.event
  if (first.type === "RUN_ENDED_LOCALLY") {
    return [{ type: "RUN_ENDED_LOCALLY", threadId: THREAD, outcome: first.cancelled ? "cancelled" : "error", at }]
  }
  const events = steps.map((step) => step.event as AnyEvent)
  return oneByOne
    ? events.map((event) => ({ type: "EVENT", threadId: THREAD, event, at }))
    : [{ type: "EVENTS", threadId: THREAD, events, at }]
}

// ---------------------------------------------------------------------------
// The model: what the reducer took, and must keep.
// ---------------------------------------------------------------------------

interface Model {
  /** Text deltas taken (no anomaly). */
  readonly text: Set<string>
  /** Reasoning deltas (always taken). */
  readonly reasoning: Set<string>
  /** Props patches taken: key → value. */
  readonly props: Map<string, { readonly component: string; readonly value: string }>
  /** Keys of props patches refused: none of them shows. */
  readonly refused: Set<string>
  /**
   * Each call's arguments taken since its start, whether they still stream, whether they ended
   * (its TOOL_CALL_END, its run's end, the next run's start), and whether it is settled: a result
   * answered it, or its run ended without pausing for it.
   */
  readonly calls: Map<string, { raw: string; open: boolean; ended: boolean; settled: boolean }>
  /** The calls the thread waits on (`tambo.run.awaiting_input`, until answered or the run ends without pausing). */
  readonly pending: Set<string>
  /**
   * Each component started, and whether it streams: from its start, or a patch while its run goes
   * on, until its end or its run's.
   */
  readonly components: Map<string, { open: boolean }>
  /** The run paused: its RUN_FINISHED keeps the pending calls. */
  waiting: boolean
}

const threadOf = (state: State): ThreadState => {
  const t = ClientState.getThreadState(state, THREAD)
  if (t === undefined) throw new Error("no thread")
  return t
}

const blocks = (t: ThreadState): ReadonlyArray<Content> => t.thread.messages.flatMap((m) => m.content)

const newAnomalies = (before: ThreadState, after: ThreadState) => after.anomalies.slice(before.anomalies.length)

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** What a call's input shows for the arguments taken: what they parse to, as far as they go, when that is an object. */
const expectedInput = (raw: string): unknown => {
  if (raw.trim() === "") return {}
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    parsed = parsePartialJson(raw)
  }
  return isObject(parsed) ? parsed : {}
}

/** Arguments no tool may run on: text that is not a JSON object (none at all, or blank, is `{}`). */
const isInvalidArgs = (raw: string): boolean => {
  if (raw.trim() === "") return false
  try {
    return !isObject(JSON.parse(raw))
  } catch {
    return true
  }
}

const closeCalls = (model: Model): void => {
  for (const call of model.calls.values()) {
    if (call.open) call.ended = true
    call.open = false
  }
}

/**
 * A run's end (`paused`: a RUN_FINISHED after a pause): what streams ends, and the arguments of a
 * call nobody will answer (not pending) are no longer recorded: no tool runs on it anyway.
 */
const endRun = (model: Model, paused: boolean): void => {
  closeCalls(model)
  for (const component of model.components.values()) component.open = false
  if (!paused) model.pending.clear()
  model.waiting = false
  for (const [id, call] of model.calls) {
    if (call.ended && !model.pending.has(id)) call.settled = true
  }
}

/** `ended`: the event came between a run's end and the next RUN_STARTED, where what it opens closes at once. */
const observe = (model: Model, event: AnyEvent, before: ThreadState, after: ThreadState, ended: boolean): void => {
  const anomalies = newAnomalies(before, after)
  for (const anomaly of anomalies) {
    expect(anomaly.reason, "the reducer threw").not.toMatch(/internal error/)
  }
  const taken = anomalies.length === 0
  switch (event.type) {
    case "TEXT_MESSAGE_CONTENT":
      if (taken) model.text.add(event.delta)
      return
    case "THINKING_TEXT_MESSAGE_CONTENT":
    case "REASONING_MESSAGE_CONTENT":
      model.reasoning.add(event.delta)
      return
    case "RUN_STARTED":
      closeCalls(model)
      model.pending.clear()
      model.waiting = false
      return
    case "RUN_FINISHED":
      return endRun(model, model.waiting)
    case "RUN_ERROR":
      return endRun(model, false)
    case "TOOL_CALL_START":
      if (taken) model.calls.set(event.toolCallId, { raw: "", open: !ended, ended, settled: false })
      return
    case "TOOL_CALL_RESULT": {
      // A result is kept, and one for a call nobody started is also an anomaly.
      const call = model.calls.get(event.toolCallId)
      expect(
        anomalies.some((a) => a.reason === `result for unknown tool call ${event.toolCallId}`),
        `the result of ${event.toolCallId} recorded as for an unknown call`
      ).toBe(call === undefined)
      expect(
        blocks(after).some((b) => b.type === "tool_result" && b.toolUseId === event.toolCallId),
        `the result of ${event.toolCallId} kept`
      ).toBe(true)
      // A result forgets what its call's ended arguments were; arguments still streaming end later.
      if (call !== undefined && !call.open) call.settled = true
      model.pending.delete(event.toolCallId)
      return
    }
    case "TOOL_CALL_ARGS": {
      const call = model.calls.get(event.toolCallId)
      // Arguments of a call that streams are taken; any other's are an anomaly.
      expect(taken, `arguments of ${event.toolCallId} taken`).toBe(call?.open === true)
      if (call?.open === true) call.raw += event.delta
      return
    }
    case "TOOL_CALL_END": {
      const call = model.calls.get(event.toolCallId)
      // Only the end of a call whose arguments stream is taken; any other end is an anomaly.
      expect(
        anomalies.some((a) =>
          a.reason === `tool call ${event.toolCallId} already ended` || a.reason === `unknown tool call ${event.toolCallId}`
        ),
        `the end of ${event.toolCallId} refused`
      ).toBe(call?.open !== true)
      if (call?.open === true) {
        call.open = false
        call.ended = true
      }
      return
    }
    case "CUSTOM":
      if (event.name === "tambo.run.awaiting_input") {
        model.pending.clear()
        for (const call of event.value.pendingToolCalls) model.pending.add(call.toolCallId)
        // After a run's end the thread stays idle: the next RUN_FINISHED is no paused run's.
        model.waiting = !ended
        return
      }
      if (event.name === "tambo.component.start") {
        const refused = anomalies.some((a) => a.reason === `component ${event.value.componentId} started twice`)
        if (!refused) model.components.set(event.value.componentId, { open: !ended })
        return
      }
      if (event.name === "tambo.component.end") {
        // Only the end of a component that streams is taken; any other end is an anomaly.
        const component = model.components.get(event.value.componentId)
        expect(
          anomalies.some((a) =>
            a.reason === `component ${event.value.componentId} already ended` ||
            a.reason === `unknown component ${event.value.componentId}`
          ),
          `the end of ${event.value.componentId} refused`
        ).toBe(component?.open !== true)
        if (component !== undefined) component.open = false
        return
      }
      // A patch taken while the run goes on streams its component again.
      const patched = event.name === "tambo.component.props_delta" || event.name === "tambo.component.state_delta"
        ? model.components.get(event.value.componentId)
        : undefined
      if (patched !== undefined && taken && !ended) patched.open = true
      if (event.name !== "tambo.component.props_delta") return
      if (event.value.operations.length === 1 && event.value.operations[0]!.op === "add" && event.value.operations[0]!.path.startsWith("/p")) {
        const operation = event.value.operations[0] as { readonly path: string; readonly value: string }
        if (taken) model.props.set(operation.path.slice(1), { component: event.value.componentId, value: operation.value })
      } else {
        expect(taken, `a refused patch ${JSON.stringify(event.value.operations)} is an anomaly`).toBe(false)
        const key = JSON.stringify(event.value.operations).match(/bad\d+/)?.[0]
        if (key !== undefined) model.refused.add(key)
      }
      return
  }
}

/** What holds after every step. */
const checkKept = (model: Model, t: ThreadState): void => {
  // Ids are unique: messages in the thread, components in the thread, calls in their message.
  const messageIds = t.thread.messages.map((m) => m.id)
  expect(new Set(messageIds).size, `message ids ${messageIds.join(",")}`).toBe(messageIds.length)
  const componentIds = blocks(t).flatMap((b) => (b.type === "component" ? [b.id] : []))
  expect(new Set(componentIds).size, `component ids ${componentIds.join(",")}`).toBe(componentIds.length)
  for (const m of t.thread.messages) {
    const calls = m.content.flatMap((b) => (b.type === "tool_use" ? [b.id] : []))
    expect(new Set(calls).size, `calls of ${m.id}`).toBe(calls.length)
  }
  // Text taken is there, once.
  const text = blocks(t).flatMap((b) => (b.type === "text" ? [b.text] : [])).join("|")
  for (const delta of model.text) expect(text.split(delta).length - 1, `text ${delta} in ${text}`).toBe(1)
  const reasoning = t.thread.messages.flatMap((m) => m.reasoning ?? []).join("|")
  for (const delta of model.reasoning) expect(reasoning.split(delta).length - 1, `reasoning ${delta} in ${reasoning}`).toBe(1)
  // Props taken are there.
  for (const [key, { component, value }] of model.props) {
    const block = blocks(t).find((b) => b.type === "component" && b.id === component)
    const props = block?.type === "component" && typeof block.props === "object" && block.props !== null ? block.props : {}
    expect(Object.getOwnPropertyDescriptor(props, key)?.value, `prop ${key} of ${component}`).toBe(value)
  }
  for (const block of blocks(t)) {
    if (block.type !== "component") continue
    for (const key of model.refused) expect(JSON.stringify(block.props), `refused ${key}`).not.toContain(key)
  }
  // A call's input is what its arguments parse to, however malformed; once they ended, until the
  // call is answered or its run ends without pausing for it, arguments that are not a JSON object
  // are recorded as they arrived, so no tool runs on them.
  for (const [id, call] of model.calls) {
    const position = t.internal.blockIndex.get(`t${id}`)
    const block = position === undefined ? undefined : t.thread.messages[position.message]?.content[position.block]
    expect(block?.type === "tool_use" ? block.input : undefined, `input of ${id} for ${call.raw}`).toEqual(expectedInput(call.raw))
    expect(t.internal.invalidToolArgs?.get(id), `arguments of ${id} recorded as invalid: ${call.raw}`).toBe(
      call.ended && !call.settled && isInvalidArgs(call.raw) ? call.raw : undefined
    )
  }
}

/** What holds right after a run ended. */
const checkClosed = (t: ThreadState): void => {
  expect(t.thread.status).toBe("idle")
  expect(t.streaming.status).toBe("idle")
  expect(t.streaming.messageId).toBeUndefined()
  expect(t.internal.openComponents).toEqual([])
  expect(t.internal.toolArgs.size).toBe(0)
  expect(t.internal.ephemeralMessageId).toBeUndefined()
  expect(t.internal.openReasoning).toBeUndefined()
  for (const block of blocks(t)) {
    if (block.type === "component") expect(block.streamingState, `component ${block.id}`).toBe("done")
  }
  for (const m of t.thread.messages) {
    if (m.reasoning !== undefined) expect(m.reasoningDurationMS, `reasoning of ${m.id}`).toBeTypeOf("number")
  }
}

const comparable = (t: ThreadState) => ({
  thread: t.thread,
  streaming: t.streaming,
  pendingToolCalls: t.pendingToolCalls,
  anomalies: t.anomalies,
  lastCompletedRunId: t.lastCompletedRunId,
  openComponents: t.internal.openComponents,
  toolArgs: [...t.internal.toolArgs.keys()],
  invalidToolArgs: [...(t.internal.invalidToolArgs ?? new Map()).entries()],
  openReasoning: t.internal.openReasoning
})

const start: State = ClientState.reduce(ClientState.initial, [
  { type: "INIT_THREAD", threadId: THREAD, at: 1 },
  { type: "USER_MESSAGE", threadId: THREAD, message: { id: "u1", role: "user", content: [{ type: "text", text: "hi" }] }, at: 500 },
  { type: "EVENT", threadId: THREAD, event: { type: "RUN_STARTED", threadId: THREAD, runId: "run1" }, at: 900 }
])

const play = (chunks: ReadonlyArray<ReadonlyArray<Step>>): void => {
  const model: Model = {
    text: new Set(),
    reasoning: new Set(),
    props: new Map(),
    refused: new Set(),
    calls: new Map(),
    pending: new Set(),
    components: new Map(),
    waiting: false
  }
  let stepwise = start
  let batched = start
  const all: Array<Action> = []
  // From a run's end to the next RUN_STARTED: whatever events come, nothing streams or is open.
  let ended = false
  chunks.forEach((chunk, i) => {
    const at = chunkAt(i)
    for (const action of actionsOf(chunk, at, true)) {
      const before = threadOf(stepwise)
      stepwise = ClientState.reduce(stepwise, [action])
      const after = threadOf(stepwise)
      const type = action.type === "EVENT" ? action.event.type : action.type
      if (type === "RUN_ENDED_LOCALLY") endRun(model, false)
      if (action.type === "EVENT") observe(model, action.event, before, after, ended)
      checkKept(model, after)
      if (ENDINGS.has(type)) ended = true
      else if (type === "RUN_STARTED") ended = false
      if (ended) checkClosed(after)
    }
    const actions = actionsOf(chunk, at, false)
    all.push(...actions)
    batched = ClientState.reduce(batched, actions)
    expect(comparable(threadOf(batched)), `chunk ${i} as one batch`).toEqual(comparable(threadOf(stepwise)))
    if (ended) checkClosed(threadOf(batched))
  })
  expect(comparable(threadOf(ClientState.reduce(start, all))), "all chunks in one reduce").toEqual(comparable(threadOf(stepwise)))
}

describe("the reducer's open things, model-based", () => {
  it.prop(
    "every sequence of run events keeps what it took, agrees however batched, and closes all at a run's end",
    [sequence],
    ([commands]) => play(build(commands)),
    { fastCheck: { numRuns: runs, seed } }
  )

  it("the commands cover every kind of event, endings among them", () => {
    const seen = new Map<string, number>()
    for (const commands of fc.sample(sequence, { numRuns: 300, seed })) {
      const raw = new Map<string, string>()
      for (const chunk of build(commands)) {
        for (const { event } of chunk) {
          seen.set(event.type, (seen.get(event.type) ?? 0) + 1)
          if (event.type === "TOOL_CALL_START") raw.set(event.toolCallId, "")
          if (event.type === "TOOL_CALL_ARGS") raw.set(event.toolCallId, (raw.get(event.toolCallId) ?? "") + event.delta)
          const ended = event.type === "TOOL_CALL_END"
            ? [event.toolCallId]
            : ENDINGS.has(event.type) ? [...raw.keys()] : []
          for (const id of ended) {
            const args = raw.get(id) ?? ""
            if (isInvalidArgs(args)) seen.set("invalid arguments ended", (seen.get("invalid arguments ended") ?? 0) + 1)
            if (args.trim() === "") seen.set("blank arguments ended", (seen.get("blank arguments ended") ?? 0) + 1)
            raw.delete(id)
          }
          if (event.type === "CUSTOM" && event.name === "tambo.component.props_delta" && JSON.stringify(event.value).includes("bad")) {
            seen.set("refused patch", (seen.get("refused patch") ?? 0) + 1)
          }
        }
      }
    }
    for (const type of ["RUN_STARTED", "RUN_FINISHED", "RUN_ERROR", "RUN_ENDED_LOCALLY", "TEXT_MESSAGE_CONTENT", "TOOL_CALL_ARGS", "CUSTOM", "UNKNOWN", "REASONING_MESSAGE_CONTENT", "invalid arguments ended", "blank arguments ended", "refused patch"]) {
      expect(seen.get(type) ?? 0, type).toBeGreaterThan(15)
    }
  })
})
