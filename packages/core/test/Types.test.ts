// Type-level proof that our public shapes are source-compatible with
// @tambo-ai/client 1.1.3's: each pair is assignable in both directions. The
// checks run when tsc compiles this file; the runtime test only keeps vitest
// from reporting an empty file.
import type * as Upstream from "@tambo-ai/client"
import { describe, expect, expectTypeOf, it } from "vitest"
import type * as ClientState from "../src/ClientState.js"
import type * as Ours from "../src/Types.js"

/** `true` when A and B are assignable to each other, else `false`. */
type Mutual<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false

/** Compiles only when `T` is `true`. */
const mutual = <_T extends true>(): boolean => true

// Every named type, in both directions. A `false` here fails compilation.
const checks = [
  mutual<Mutual<Ours.TamboThread, Upstream.TamboThread>>(),
  mutual<Mutual<Ours.TamboThreadMessage, Upstream.TamboThreadMessage>>(),
  mutual<Mutual<Ours.MessageRole, Upstream.MessageRole>>(),
  mutual<Mutual<Ours.Content, Upstream.Content>>(),
  mutual<Mutual<Ours.TextContent, Upstream.TextContent>>(),
  mutual<Mutual<Ours.ToolResultContent, Upstream.ToolResultContent>>(),
  mutual<Mutual<Ours.ResourceContent, Upstream.ResourceContent>>(),
  mutual<Mutual<Ours.TamboToolUseContent, Upstream.TamboToolUseContent>>(),
  mutual<Mutual<Ours.TamboToolDisplayProps, Upstream.TamboToolDisplayProps>>(),
  mutual<Mutual<Ours.TamboComponentContent, Upstream.TamboComponentContent>>(),
  mutual<Mutual<Ours.ComponentStreamingState, Upstream.ComponentStreamingState>>(),
  mutual<Mutual<Ours.StreamingState, Upstream.StreamingState>>(),
  mutual<Mutual<Ours.RunStatus, Upstream.RunStatus>>(),
  mutual<Mutual<Ours.ToolChoice, Upstream.ToolChoice>>(),
  mutual<Mutual<Ours.InputMessage, Upstream.InputMessage>>(),
  mutual<Mutual<Ours.InitialInputMessage, Upstream.InitialInputMessage>>()
]

// Our thread state carries the upstream-shaped thread and streaming state.
const threadFits = (state: ClientState.ThreadState): { thread: Upstream.TamboThread; streaming: Upstream.StreamingState } => ({
  thread: state.thread,
  streaming: state.streaming
})

describe("Types", () => {
  it("are assignable both ways to @tambo-ai/client's", () => {
    expect(checks.every((check) => check)).toBe(true)
    expect(typeof threadFits).toBe("function")
    // The closed unions are the same sets, not only mutually assignable.
    expectTypeOf<Ours.MessageRole>().toEqualTypeOf<Upstream.MessageRole>()
    expectTypeOf<Ours.RunStatus>().toEqualTypeOf<Upstream.RunStatus>()
    expectTypeOf<Ours.ComponentStreamingState>().toEqualTypeOf<Upstream.ComponentStreamingState>()
    expectTypeOf<Ours.Content["type"]>().toEqualTypeOf<Upstream.Content["type"]>()
  })
})
