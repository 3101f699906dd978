import * as Client from "@tambo-effect/client"
import { describe, expect, it } from "vitest"
import * as React from "../src/index.js"

describe("errors", () => {
  it("re-exports every error class and guard of the facade, the same values", () => {
    const names = [
      "AbortError",
      "AgUiError",
      "ApiError",
      "AuthError",
      "ConfigError",
      "DecodeError",
      "MaxStepsExceededError",
      "McpError",
      "RunCancelledError",
      "RunConflictError",
      "ToolCallError",
      "ToolDefinitionError",
      "ToolError",
      "TranscriptionError",
      "TransportError",
      "UnknownError",
      "isAbortError",
      "isTamboClientError"
    ] as const
    for (const name of names) {
      expect(Client[name], name).toBeDefined()
      expect(React[name], name).toBe(Client[name])
    }
  })
})
