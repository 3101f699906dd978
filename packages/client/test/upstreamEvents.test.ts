// Tambo's custom events under upstream's names, and upstream's two helpers, on a real run.
import { Script } from "@tambo-effect/testing"
import { describe, expect, it } from "vitest"
import { asTamboCustomEvent, isTamboCustomEvent, type StreamEvent, type TamboCustomEvent } from "../src/index.js"
import { makeClient, useServer } from "./helpers.js"

const server = useServer({
  script: (request) =>
    request.toolResults.length === 0
      ? [
        Script.component("Chart", [{ title: "Rain" }, { title: "Rain", points: 3 }]),
        // Another agent's custom event: the stream carries it as UNKNOWN, not as Tambo's.
        Script.event({ type: "CUSTOM", name: "app.progress", value: { step: 1 } }),
        Script.toolCall("lookup", { q: "rain" })
      ]
      : [Script.text("Done.")]
})

const lookup = {
  name: "lookup",
  description: "Looks something up",
  inputSchema: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
  tool: ({ q }: { q: string }) => `found ${q}`
} as const

/** Every event of one run that renders a component, calls a tool and answers. */
const runEvents = async (): Promise<ReadonlyArray<StreamEvent["event"]>> => {
  const client = makeClient(server())
  client.registerTool(lookup)
  const events: Array<StreamEvent["event"]> = []
  for await (const { event } of client.run("Show me the rain")) events.push(event)
  return events
}

describe("upstream's custom event helpers", () => {
  it("isTamboCustomEvent picks out exactly the run's CUSTOM events, which are Tambo's", async () => {
    const events = await runEvents()
    const custom = events.filter(isTamboCustomEvent)
    expect(custom).toEqual(events.filter((event) => event.type === "CUSTOM"))
    expect(new Set(custom.map((event) => event.name))).toEqual(
      new Set(["tambo.component.start", "tambo.component.props_delta", "tambo.component.end", "tambo.run.awaiting_input"])
    )
    // The other agent's event is there, and is not taken for Tambo's.
    const unknown = events.filter((event) => event.type === "UNKNOWN")
    expect(unknown).toHaveLength(1)
    expect(unknown.some(isTamboCustomEvent)).toBe(false)
  })

  it("asTamboCustomEvent narrows by name: the values are typed", async () => {
    const events = await runEvents()
    const seen: Array<string> = []
    for (const event of events) {
      if (event.type !== "CUSTOM") continue
      const custom: TamboCustomEvent | undefined = asTamboCustomEvent(event)
      expect(custom).toBe(event)
      switch (custom?.name) {
        case "tambo.component.start":
          seen.push(`start ${custom.value.componentName}`)
          break
        case "tambo.component.props_delta":
          seen.push(`patch ${custom.value.operations.length}`)
          break
        case "tambo.run.awaiting_input":
          seen.push(`awaiting ${custom.value.pendingToolCalls.map((call) => call.toolName).join()}`)
          break
      }
    }
    expect(seen[0]).toBe("start Chart")
    expect(seen).toContain("awaiting lookup")
    expect(seen.filter((line) => line.startsWith("patch")).length).toBeGreaterThan(0)
  })

  it("refuses other events, other names, and names that are only properties of every object", () => {
    expect(asTamboCustomEvent({ type: "CUSTOM", name: "app.progress" })).toBeUndefined()
    expect(isTamboCustomEvent({ type: "TEXT_MESSAGE_CONTENT" })).toBe(false)
    // A Tambo name on an event that is not CUSTOM.
    expect(isTamboCustomEvent({ type: "UNKNOWN", name: "tambo.component.start" })).toBe(false)
    for (const name of ["__proto__", "constructor", "toString", "hasOwnProperty"]) {
      expect(isTamboCustomEvent({ type: "CUSTOM", name })).toBe(false)
    }
    expect(isTamboCustomEvent({ type: "CUSTOM", name: "tambo.message.parent" })).toBe(true)
  })
})
