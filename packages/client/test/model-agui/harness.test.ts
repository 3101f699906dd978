// Tests of the model's own machinery: its commands reach the paths they are named for (a property
// whose commands never reached them would pass for nothing).
import { describe, expect, it } from "vitest"
import { type Command, replay, type ToolMode } from "./harness.js"

type Sent = { role: string; content?: unknown; toolCallId?: string }

/** The messages of the runs the agent received whose last user text is `ping`, the last one. */
const lastPing = (world: Parameters<NonNullable<Parameters<typeof replay>[2]>>[0]) =>
  world.agent.requests.filter((r) => r.input?.messages.at(-1)?.content === "ping").at(-1)!.input!

const toolResults = (messages: ReadonlyArray<Sent>) =>
  messages.flatMap((m) => (m.role === "tool" ? [String(m.content)] : []))

describe("the AG-UI model's commands", () => {
  it.each([
    ["ok", "approve", /^\{"thread":"thr_\w+","n":1\}$/],
    ["throw", "approve", /probe failed n=1/],
    ["hang", "approve", /did not finish within 40ms/],
    ["approval", "approve", /^\{"thread":"thr_\w+","n":1\}$/],
    ["approval", "deny", /no/]
  ] as const)("a tool round (%s, %s) sends its result with the next run", async (mode: ToolMode, decision, result) => {
    await replay([{ kind: "tools", target: "current", mode, decision, calls: 1, after: "text", reuseIds: false, approveBy: "events" }], undefined, (world) => {
      const sent = toolResults(lastPing(world).messages)
      expect(sent).toHaveLength(1)
      expect(sent[0]).toMatch(result)
      expect(world.executions.length).toBe(mode === "approval" && decision === "deny" ? 0 : 1)
    })
  })

  it.each([
    ["handler", "approve", /^\{"thread":"thr_\w+","n":1\}$/],
    ["handler", "deny", /./],
    ["throwingHandler", "approve", /the handler failed/]
  ] as const)("an approval decided by the run's onApproval (%s, %s) sends its result with the next run", async (approveBy, decision, result) => {
    const command: Command = { kind: "tools", target: "current", mode: "approval", decision, calls: 1, after: "text", reuseIds: false, approveBy }
    await replay([command], undefined, (world) => {
      const sent = toolResults(lastPing(world).messages)
      expect(sent).toEqual([expect.stringMatching(result)])
      expect(world.executions.length).toBe(approveBy === "handler" && decision === "approve" ? 1 : 0)
    })
  })

  it.each(["cancelRun", "abort", "break"] as const)("a stop (%s) while the tool runs leaves the call pending; the next run answers it as cancelled", async (how) => {
    await replay([{ kind: "stop", target: "current", how, at: "tool" }], undefined, (world) => {
      expect(toolResults(lastPing(world).messages)).toEqual([expect.stringMatching(/was cancelled before it returned a result/)])
      expect(world.executions).toHaveLength(1)
    })
  })

  it.each(["queue", "interrupt"] as const)("a second run on a busy thread (%s) overlaps the first", async (policy) => {
    await replay([{ kind: "text", target: "current" }, { kind: "busyThread", known: 0, policy, tools: true }], undefined, (world) => {
      const busy = world.agent.requests.filter((r) => String(r.input?.messages.at(-1)?.content).endsWith("busyThread"))
      // The first run's request, then the second's: both were sent, the second while the first was in flight.
      expect(busy.length).toBeGreaterThanOrEqual(2)
      expect(world.executions).toHaveLength(policy === "queue" ? 2 : 1)
    })
  })

  it("a 503 is answered by sending the request again", async () => {
    await replay([{ kind: "busy", target: "current" }], undefined, (world) => {
      const busy = world.agent.requests.filter((r) => r.input?.messages.at(-1)?.content === "#1 busy")
      expect(busy).toHaveLength(2)
    })
  })

  it("a 503 after a tool round is answered by sending the continuation again", async () => {
    await replay([{ kind: "tools", target: "current", mode: "ok", decision: "approve", calls: 2, after: "busy", reuseIds: false, approveBy: "events" }], undefined, (world) => {
      const continuations = world.agent.requests.filter((r) => r.input?.messages.at(-1)?.role === "tool")
      expect(continuations).toHaveLength(2)
    })
  })

  it("the agent's state, hostile delta refused, goes with the next run; the app's too", async () => {
    const commands: Array<Command> = [
      { kind: "agentState", target: "current", hostile: true, end: "finish" },
      { kind: "setState", target: "current" },
      { kind: "setStateDuringRun", target: "current", at: "approval" }
    ]
    await replay(commands, undefined, (world) => {
      const states = world.agent.requests.filter((r) => r.input?.messages.at(-1)?.content === "ping").map((r) => r.input!.state)
      // setState starts no run: the run after it sends its state, then the app's while it ran.
      expect(states).toEqual([{ run: 1, items: ["x"] }, { app: 4 }])
      expect(world.agent.requests.find((r) => r.input?.messages.at(-1)?.content === "#2 setStateDuringRun")?.input?.state).toEqual({ app: 2 })
      // The continuation after the approval carries the state the app set while it waited.
      expect(world.agent.requests.find((r) => r.input?.messages.at(-1)?.role === "tool")?.input?.state).toEqual({ app: 4 })
    })
  })

  it("a messages snapshot replaces the conversation the next run sends", async () => {
    const commands: Array<Command> = [
      { kind: "text", target: "current" },
      { kind: "messagesSnapshot", target: "current", keep: false, call: "kept" }
    ]
    await replay(commands, undefined, (world) => {
      const sent = lastPing(world).messages as ReadonlyArray<Sent>
      expect(sent.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "user"])
      expect(sent[0]!.content).toBe("#2 messagesSnapshot")
    })
  })

  it("RUN_ERROR and a dropped connection keep what arrived; the thread goes on", async () => {
    await replay([{ kind: "runError", target: "current", afterCall: false }, { kind: "drop", target: "current", afterCall: false }], undefined, (world) => {
      const sent = lastPing(world).messages as ReadonlyArray<Sent>
      expect(sent.map((m) => m.content)).toEqual([
        "You are the model's agent.",
        "#1 runError",
        "Partial",
        "ping",
        "pong",
        "#2 drop",
        "Half a reply",
        "ping"
      ])
    })
  })
})
