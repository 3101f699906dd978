/**
 * `defineTool`: a tool definition typed from its schemas.
 *
 * @since 0.2.0
 */
import type { SupportedSchema, TamboTool } from "@tambo-effect/client"
import type { JsonSchema, ToolCallContext } from "@tambo-effect/core/Tool"

/**
 * The value a schema describes: an Effect Schema's `Type`, a Standard
 * Schema's output (Zod 4, Valibot, ArkType); `any` for a JSON Schema.
 *
 * @since 0.2.0
 * @category Models
 */
export type InferSchema<S> = S extends { readonly Type: infer A } ? A
  : S extends { readonly "~standard": { readonly types?: { readonly output: infer A } | undefined } } ? A
  : any

/**
 * What `defineTool` takes: a tool whose `inputSchema` (default: no
 * arguments) types the parameters of `tool`, and whose `outputSchema`, if
 * given, types its result.
 *
 * @since 0.2.0
 * @category Models
 */
export interface DefineToolOptions<Input extends SupportedSchema, Output>
  extends Omit<TamboTool<InferSchema<Input>, Output>, "inputSchema" | "outputSchema" | "tool">
{
  readonly inputSchema?: Input | undefined
  readonly outputSchema?: SupportedSchema<Output> | undefined
  tool(params: InferSchema<Input>, context: ToolCallContext): Output | PromiseLike<Output>
}

const NO_ARGUMENTS: JsonSchema = { type: "object", properties: {}, required: [] }

/**
 * A typed tool definition, for `TamboProvider`'s `tools`: the parameters
 * of `tool` are inferred from `inputSchema` (an Effect Schema or a
 * Standard Schema such as Zod 4; a JSON Schema gives `any`), its result
 * from `outputSchema`. Without `inputSchema` the tool takes no arguments.
 * Returns the tool itself (with the default schema filled in).
 *
 * @example
 * ```ts
 * import { z } from "zod"
 *
 * const getWeather = defineTool({
 *   name: "get_weather",
 *   description: "Current weather in a city",
 *   inputSchema: z.object({ city: z.string() }),
 *   tool: async ({ city }) => fetchWeather(city) // `city` is a string
 * })
 * ```
 *
 * @since 0.2.0
 * @category Utils
 */
export function defineTool<Input extends SupportedSchema = JsonSchema, Output = unknown>(
  tool: DefineToolOptions<Input, Output>
): TamboTool<InferSchema<Input>, Output> {
  const definition = tool as TamboTool<InferSchema<Input>, Output>
  return tool.inputSchema === undefined ? { ...definition, inputSchema: NO_ARGUMENTS } : definition
}
