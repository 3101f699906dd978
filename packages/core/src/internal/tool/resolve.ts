/**
 * A tool or component made ready for the API and the executor: its schemas
 * converted once, at registration; for a tool, its arguments' decoder, its
 * approval check and a `run` that never throws.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import { ToolCallError, ToolDefinitionError } from "../../TamboError.js"
import type { ApiComponent, ApiTool, AvailableComponent, Definition, JsonObject, ResolvedTool } from "../../Tool.js"
import { callApp } from "../callbacks.js"
import { undoStrictMode } from "../jsonSchema.js"
import { describeError } from "../toolSupport.js"
import { type Normalised, normalise, validateDescription, validateName } from "./definition.js"
import {
  bestEffortDereference,
  checkNoRecord,
  type Classified,
  classify,
  convert,
  toolInputJsonSchema,
  unsupportedSchema
} from "./schema.js"
import { validateClassified } from "./validate.js"

/** The arguments without the server's `_tambo_*` display properties. */
const stripTamboProperties = (args: unknown): unknown => {
  if (!Predicate.isRecord(args)) return args
  const keys = Object.keys(args)
  if (!keys.some((key) => key.startsWith("_tambo_"))) return args
  const out: Record<string, unknown> = {}
  for (const key of keys) if (!key.startsWith("_tambo_")) out[key] = args[key]
  return out
}

/** The output schema as JSON Schema when it converts; left out otherwise (e.g. `z.void()`). */
const outputJsonSchema = (tool: Normalised): Effect.Effect<JsonObject | undefined> => {
  const output = tool.output === undefined ? undefined : classify(tool.output)
  return output === undefined
    ? Effect.succeed(undefined)
    : convert(output, "output", `The output schema of tool "${tool.name}"`, tool.name).pipe(
      Effect.map(bestEffortDereference),
      Effect.option,
      Effect.map((option) => option._tag === "Some" ? option.value : undefined)
    )
}

const decodeArgs = (name: string, validator: Classified, inputJson: JsonObject): ResolvedTool["decodeArgs"] => (args) =>
  Effect.suspend(() => validateClassified(validator, undoStrictMode(inputJson, stripTamboProperties(args)))).pipe(
    Effect.mapError((error) =>
      new ToolCallError({
        reason: "InvalidArguments",
        message: `Invalid arguments for tool "${name}":\n${error.message}`,
        toolName: name,
        ...(error.cause === undefined ? {} : { cause: error.cause })
      })
    )
  )

const needsApproval = (tool: Normalised): ResolvedTool["needsApproval"] => (args) =>
  callApp(() => tool.needsApproval(args), (thrown) =>
    new ToolCallError({
      reason: "Threw",
      message: `Tool "${tool.name}": deciding whether the call needs approval failed: ${describeError(thrown)}`,
      toolName: tool.name,
      cause: thrown
    }))

const run = (tool: Normalised): ResolvedTool["run"] => (args, { toolCallId }) =>
  tool.execute(args, toolCallId).pipe(
    Effect.catchAll((error) =>
      Effect.fail(
        error instanceof ToolCallError
          ? error
          : new ToolCallError({
            reason: "Failed",
            message: `Tool "${tool.name}" failed: ${describeError(error)}`,
            toolName: tool.name,
            cause: error
          })
      )
    ),
    Effect.flatMap(tool.toContent)
  )

/**
 * @internal
 * @since 0.2.0
 * @category Utils
 */
export const resolve = (definition: Definition): Effect.Effect<ResolvedTool, ToolDefinitionError> =>
  Effect.gen(function*() {
    const tool = yield* normalise(definition)
    const { name } = tool
    const input = classify(tool.input)
    if (input === undefined) return yield* Effect.fail(unsupportedSchema(`The input schema of tool "${name}"`, name))
    const converted = yield* convert(input, "input", `The input schema of tool "${name}"`, name)
    const inputJson = yield* toolInputJsonSchema(converted, name)
    yield* checkNoRecord(inputJson, `The input schema of tool "${name}"`, name)
    const outputJson = yield* outputJsonSchema(tool)
    // JSON Schema tools are validated against the dereferenced schema.
    const validator: Classified = input._tag === "JsonSchema" ? { _tag: "JsonSchema", schema: inputJson } : input
    const api: ApiTool = {
      name,
      description: tool.description,
      inputSchema: inputJson,
      ...(outputJson === undefined ? {} : { outputSchema: outputJson }),
      ...(tool.maxCalls === undefined ? {} : { maxCalls: tool.maxCalls })
    }
    return {
      name,
      description: tool.description,
      definition,
      inputSchemaKind: input._tag,
      maxCalls: tool.maxCalls,
      timeout: tool.timeout,
      annotations: tool.annotations,
      api,
      decodeArgs: decodeArgs(name, validator, inputJson),
      needsApproval: needsApproval(tool),
      run: run(tool)
    }
  })

/**
 * @internal
 * @since 0.2.0
 * @category Utils
 */
export const toApiComponent = (component: AvailableComponent): Effect.Effect<ApiComponent, ToolDefinitionError> =>
  Effect.gen(function*() {
    if (!Predicate.isRecord(component)) {
      return yield* Effect.fail(
        new ToolDefinitionError({ reason: "InvalidDefinition", message: "A component must be an object" })
      )
    }
    const name = yield* validateName(component.name, "Component")
    const description = yield* validateDescription(component.description, "Component", name)
    const schemaOf = (schema: unknown, what: string) => {
      const classified = classify(schema)
      return classified === undefined
        ? Effect.fail(unsupportedSchema(`The ${what} of component "${name}"`, name))
        : convert(classified, "input", `The ${what} of component "${name}"`, name).pipe(
          Effect.map(bestEffortDereference)
        )
    }
    const propsSchema = yield* schemaOf(component.propsSchema, "propsSchema")
    yield* checkNoRecord(propsSchema, `The propsSchema of component "${name}"`, name)
    const stateSchema = component.stateSchema === undefined
      ? undefined
      : yield* schemaOf(component.stateSchema, "stateSchema")
    return {
      name,
      description,
      propsSchema,
      ...(stateSchema === undefined ? {} : { stateSchema })
    }
  })
