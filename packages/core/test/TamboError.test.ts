import { describe, expect, it } from "@effect/vitest"
import * as TamboError from "../src/TamboError.js"
import * as Tool from "../src/Tool.js"

describe("one error hierarchy", () => {
  it("the tool errors are TamboErrors, defined once: Tool's exports are the same classes", () => {
    expect(Tool.ToolDefinitionError).toBe(TamboError.ToolDefinitionError)
    expect(Tool.ToolCallError).toBe(TamboError.ToolCallError)
    const definition = new Tool.ToolDefinitionError({ reason: "InvalidName", message: "bad name" })
    const call = new Tool.ToolCallError({ reason: "Threw", message: "boom", toolName: "t" })
    expect(TamboError.isTamboError(definition)).toBe(true)
    expect(TamboError.isTamboError(call)).toBe(true)
    expect(TamboError.isRetryable(definition)).toBe(false)
    expect(TamboError.isRetryable(call)).toBe(false)
  })

  it("every error is an Error named after its tag", () => {
    const errors: ReadonlyArray<TamboError.TamboError> = [
      new TamboError.ConfigError({ reason: "MissingApiKey", message: "m" }),
      new TamboError.ApiError({ reason: "NotFound", message: "m", status: 404, retryable: false }),
      new TamboError.TransportError({ reason: "Connect", message: "m" }),
      new TamboError.DecodeError({ reason: "InvalidJson", message: "m" }),
      new TamboError.RunConflictError({ reason: "ActiveInClient", message: "m" }),
      new TamboError.RunCancelledError({ reason: "CancelledByClient", message: "m" }),
      new TamboError.MaxStepsExceededError({ reason: "MaxSteps", message: "m", maxSteps: 1, threadId: "t" }),
      new TamboError.AuthError({ reason: "Expired", message: "m" }),
      new TamboError.ToolError({ reason: "NotPending", message: "m" }),
      new TamboError.McpError({ reason: "Connect", message: "m" }),
      new TamboError.ToolDefinitionError({ reason: "InvalidDefinition", message: "m" }),
      new TamboError.ToolCallError({ reason: "Timeout", message: "m" }),
      new TamboError.TranscriptionError({ reason: "EmptyAudio", message: "m" }),
      new TamboError.AgUiError({ reason: "InvalidInput", message: "m" })
    ]
    for (const error of errors) {
      expect(error).toBeInstanceOf(Error)
      expect(error.name).toBe(error._tag)
      expect(error.message).toBe("m")
      expect(TamboError.isTamboError(error)).toBe(true)
    }
    expect(TamboError.isTamboError(new Error("m"))).toBe(false)
  })

  it("AgUiError is defined once: the AG-UI modules' import path gives the same class", async () => {
    const internal = await import("../src/internal/agui/errors.js")
    expect(internal.AgUiError).toBe(TamboError.AgUiError)
    expect(TamboError.isRetryable(new TamboError.AgUiError({ reason: "InvalidStateDelta", message: "m" }))).toBe(false)
  })

  it("an ApiError also answers to the AG-UI name of retryable", () => {
    const error = new TamboError.ApiError({ reason: "ServerError", message: "m", status: 503, retryable: true })
    expect(error.isRetryable).toBe(true)
  })
})
