import { describe, expect, it } from "vitest"
import { deriveStreamStatus } from "../src/internal/streamStatus.js"

const block = (props: unknown, streamingState?: "started" | "streaming" | "done") => ({
  type: "component" as const,
  id: "c1",
  name: "Card",
  props,
  ...(streamingState === undefined ? {} : { streamingState })
})

const summary = (result: ReturnType<typeof deriveStreamStatus>) => ({
  stream: Object.entries(result.streamStatus).filter(([key, value]) => key !== "streamError" && value === true).map(([key]) => key),
  props: Object.fromEntries(
    Object.entries(result.propStatus).map(([key, status]) => [
      key,
      status.isSuccess ? "success" : status.isStreaming ? "streaming" : status.isPending ? "pending" : "error"
    ])
  )
})

describe("deriveStreamStatus", () => {
  it.each([
    ["started, nothing yet", block({}, "started"), "streaming", { stream: ["isPending"], props: {} }],
    ["first prop arriving", block({ title: "Hel" }, "streaming"), "streaming", { stream: ["isStreaming"], props: { title: "streaming" } }],
    [
      "second prop arriving: the first is complete",
      block({ title: "Hello", body: "W" }, "streaming"),
      "streaming",
      { stream: ["isStreaming"], props: { title: "success", body: "streaming" } }
    ],
    [
      "an empty prop after a filled one is still pending",
      block({ title: "Hello", body: "" }, "streaming"),
      "streaming",
      { stream: ["isStreaming"], props: { title: "streaming", body: "pending" } }
    ],
    ["done", block({ title: "Hello", body: "World" }, "done"), "idle", { stream: ["isSuccess"], props: { title: "success", body: "success" } }],
    ["loaded from the API (no streaming state)", block({ title: "Hello" }), "idle", { stream: ["isSuccess"], props: { title: "success" } }],
    ["props that are not an object", block(null, "done"), "idle", { stream: ["isSuccess"], props: {} }],
    [
      "left open by a run that ended",
      block({ title: "Hel" }, "streaming"),
      "idle",
      { stream: ["isError"], props: { title: "error" } }
    ]
  ] as const)("%s", (_, content, runStatus, expected) => {
    expect(summary(deriveStreamStatus(content, runStatus, undefined))).toEqual(expected)
  })

  it("carries the run's error when it ended the stream", () => {
    const result = deriveStreamStatus(block({ title: "Hel" }, "streaming"), "idle", { message: "model failed" })
    expect(result.streamStatus.streamError?.message).toBe("model failed")
    expect(result.propStatus["title"]?.error?.message).toBe("model failed")
  })
})
