/**
 * The two ways to write a tool — a `Tool` built by `make`, and the
 * `@tambo-ai/client` `TamboTool` shape — checked and brought to one form:
 * what the resolved tool is made of.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as ParseResult from "effect/ParseResult"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import { ToolCallError, ToolDefinitionError } from "../../TamboError.js"
import type * as Tool from "../../Tool.js"
import { callApp } from "../callbacks.js"
import { describeError } from "../toolSupport.js"
import { normaliseParts, serialise } from "./result.js"
import { isEffectSchema } from "./schema.js"

/**
 * @internal
 * @since 0.2.0
 * @category Symbols
 */
export const TypeId: Tool.TypeId = Symbol.for("@tambo-effect/core/Tool") as Tool.TypeId

/**
 * @internal
 * @since 0.2.0
 * @category Guards
 */
export const isTool = (u: unknown): u is Tool.Tool<unknown, unknown, unknown> => Predicate.hasProperty(u, TypeId)

/**
 * Calls a tool implementation with an `AbortSignal` that is aborted when the
 * returned Effect is interrupted. A synchronous throw and a rejection become
 * `Threw` / `Rejected` errors; a returned Effect runs as it is.
 */
const callUser = <R, E>(
  toolName: string,
  implementation: (signal: AbortSignal) => Effect.Effect<R, E> | PromiseLike<R> | R
): Effect.Effect<R, E | ToolCallError> =>
  callApp(
    implementation,
    (thrown) =>
      new ToolCallError({
        reason: "Threw",
        message: `Tool "${toolName}" threw an error: ${describeError(thrown)}`,
        toolName,
        cause: thrown
      }),
    (rejection) =>
      new ToolCallError({
        reason: "Rejected",
        message: `Tool "${toolName}" failed: ${describeError(rejection)}`,
        toolName,
        cause: rejection
      })
  )

/**
 * @internal
 * @since 0.2.0
 * @category Constructors
 */
export const make = <A, R, E>(options: Tool.MakeOptions<A, R, E>): Tool.Tool<A, R, E> => {
  const { execute, name, needsApproval } = options
  return {
    [TypeId]: TypeId,
    name,
    description: options.description,
    title: options.title,
    annotations: options.annotations,
    maxCalls: options.maxCalls,
    timeout: options.timeout === undefined ? undefined : Duration.decode(options.timeout),
    input: options.input,
    output: options.output,
    execute: (args, executeOptions) =>
      callUser(name, (signal) => execute(args, { toolCallId: executeOptions?.toolCallId ?? "", signal })),
    needsApproval: (args) => typeof needsApproval === "function" ? needsApproval(args) : needsApproval === true
  }
}

const NAME_PATTERN = /^[A-Za-z0-9_-]+$/

/**
 * A tool's or component's name: letters, digits, `_` and `-`.
 *
 * @internal
 * @since 0.2.0
 * @category Validation
 */
export const validateName = (name: unknown, what: string): Effect.Effect<string, ToolDefinitionError> =>
  typeof name === "string" && NAME_PATTERN.test(name)
    ? Effect.succeed(name)
    : Effect.fail(
      new ToolDefinitionError({
        reason: "InvalidName",
        message: typeof name === "string"
          ? `${what} name ${JSON.stringify(name)} is invalid: use one or more letters, digits, "_" or "-"`
          : `${what} name must be a string, got ${name === null ? "null" : typeof name}`,
        ...(typeof name === "string" ? { definitionName: name } : {})
      })
    )

const invalidDefinition = (name: string, message: string) =>
  new ToolDefinitionError({ reason: "InvalidDefinition", message, definitionName: name })

/**
 * @internal
 * @since 0.2.0
 * @category Validation
 */
export const validateDescription = (description: unknown, what: string, name: string) =>
  typeof description === "string" && description.trim().length > 0
    ? Effect.succeed(description)
    : Effect.fail(invalidDefinition(name, `${what} "${name}" needs a non-empty description`))

const validateMaxCalls = (maxCalls: unknown, name: string): Effect.Effect<number | undefined, ToolDefinitionError> => {
  if (maxCalls === undefined) return Effect.succeed(undefined)
  return typeof maxCalls === "number" && Number.isInteger(maxCalls) && maxCalls >= 1
    ? Effect.succeed(maxCalls)
    : Effect.fail(invalidDefinition(name, `Tool "${name}": maxCalls must be an integer >= 1`))
}

/**
 * A tool of either kind, checked, in one form.
 *
 * @internal
 * @since 0.2.0
 * @category Models
 */
export interface Normalised
  extends Pick<Tool.Tool<unknown>, "name" | "description" | "title" | "annotations" | "maxCalls" | "timeout">
{
  readonly input: unknown
  readonly output: unknown
  readonly needsApproval: (args: unknown) => boolean | PromiseLike<boolean>
  readonly execute: (args: unknown, toolCallId: string) => Effect.Effect<unknown, unknown>
  readonly toContent: (result: unknown) => Effect.Effect<ReadonlyArray<Tool.ToolResultPart>, ToolCallError>
}

type Checked = Pick<Normalised, "name" | "description" | "maxCalls">

/** A `Tool`'s result, encoded by its output schema when that is an Effect Schema, as content. */
const toolContent = (tool: Tool.Any, name: string): Normalised["toContent"] => {
  if (!isEffectSchema(tool.output)) return (result) => serialise(name, result)
  const encode = Schema.encodeUnknown(tool.output)
  return (result) =>
    encode(result).pipe(
      Effect.mapError((error) =>
        new ToolCallError({
          reason: "InvalidResult",
          message: `Tool "${name}" returned a result that does not match its output schema: ${
            ParseResult.TreeFormatter.formatErrorSync(error)
          }`,
          toolName: name
        })
      ),
      Effect.flatMap((encoded) => serialise(name, encoded))
    )
}

const fromTool = (tool: Tool.Any, { description, maxCalls, name }: Checked): Normalised => ({
  name,
  description,
  title: tool.title,
  annotations: tool.annotations,
  maxCalls,
  timeout: tool.timeout,
  input: tool.input,
  output: tool.output,
  needsApproval: (args) => tool.needsApproval(args),
  execute: (args, toolCallId) => tool.execute(args, { toolCallId }),
  toContent: toolContent(tool, name)
})

/**
 * Upstream's executor calls `tool(args)`: the context is passed only to
 * functions that declare a second parameter, so variadic implementations see
 * exactly the arguments they saw before.
 */
const callTamboTool = (tool: Tool.TamboTool<unknown, unknown>, args: unknown, context: Tool.ToolCallContext): unknown =>
  tool.tool.length >= 2 ? tool.tool(args, context) : Reflect.apply(tool.tool, tool, [args])

const fromTamboTool = (
  tambo: Tool.TamboTool<unknown, unknown>,
  { description, maxCalls, name }: Checked
): Effect.Effect<Normalised, ToolDefinitionError> => {
  if (typeof tambo.tool !== "function") {
    return Effect.fail(invalidDefinition(name, `Tool "${name}" needs a \`tool\` function`))
  }
  if (tambo.inputSchema === undefined || tambo.inputSchema === null) {
    return Effect.fail(invalidDefinition(
      name,
      "toolSchema" in tambo
        ? `Tool "${name}" gives \`toolSchema\`, the form @tambo-ai/react deprecated: give \`inputSchema\` ` +
          `(the arguments' schema) and \`outputSchema\` instead`
        : `Tool "${name}" needs an \`inputSchema\``
    ))
  }
  const transform = tambo.transformToContent
  const timeout = tambo.timeout === undefined ? undefined : Duration.decodeUnknown(tambo.timeout)
  if (timeout !== undefined && (timeout._tag === "None" || Duration.lessThanOrEqualTo(timeout.value, Duration.zero))) {
    return Effect.fail(
      invalidDefinition(name, `Tool "${name}": \`timeout\` must be a positive duration (e.g. 60000 or "1 minute")`)
    )
  }
  const needsApproval: unknown = tambo.needsApproval
  if (needsApproval !== undefined && typeof needsApproval !== "boolean" && typeof needsApproval !== "function") {
    return Effect.fail(
      invalidDefinition(name, `Tool "${name}": \`needsApproval\` must be a boolean or a function of the arguments`)
    )
  }
  return Effect.succeed({
    name,
    description,
    title: tambo.title,
    annotations: tambo.annotations,
    maxCalls,
    timeout: timeout?.value,
    input: tambo.inputSchema,
    output: tambo.outputSchema,
    needsApproval: (args) =>
      typeof needsApproval === "function" ? Reflect.apply(needsApproval, tambo, [args]) : needsApproval === true,
    execute: (args, toolCallId) => callUser(name, (signal) => callTamboTool(tambo, args, { toolCallId, signal })),
    toContent: (result) =>
      typeof transform === "function"
        ? callUser<ReadonlyArray<Tool.ContentPartLike>, never>(name, () => transform.call(tambo, result)).pipe(
          Effect.flatMap((parts) => normaliseParts(name, parts))
        )
        : serialise(name, result)
  })
}

/**
 * Checks a definition of either kind (name, description, `maxCalls`, its parts) and brings it to one form.
 *
 * @internal
 * @since 0.2.0
 * @category Utils
 */
export const normalise = (definition: Tool.Definition): Effect.Effect<Normalised, ToolDefinitionError> =>
  Effect.gen(function*() {
    if (!Predicate.isRecord(definition) && !isTool(definition)) {
      return yield* Effect.fail(
        new ToolDefinitionError({ reason: "InvalidDefinition", message: "A tool must be an object" })
      )
    }
    const name = yield* validateName(definition.name, "Tool")
    const description = yield* validateDescription(definition.description, "Tool", name)
    const maxCalls = yield* validateMaxCalls(definition.maxCalls, name)
    const checked = { name, description, maxCalls }
    return isTool(definition) ? fromTool(definition, checked) : yield* fromTamboTool(definition, checked)
  })
