/**
 * Tools and components in `@tambo-ai/client`'s forms, turned into core's:
 * a component registered as `(name, { description, props })`, and the
 * fallback tool behind `onCallUnregisteredTool`; and a component block's
 * props read back through its registered component's schema.
 *
 * @internal
 */
import * as Tool from "@tambo-effect/core/Tool"
import type * as ToolRegistry from "@tambo-effect/core/ToolRegistry"
import * as Effect from "effect/Effect"
import { isRecord } from "effect/Predicate"
import { ToolDefinitionError } from "../errors.js"
import type { AvailableComponent, ComponentRegistration, UnregisteredToolHandler } from "../TamboClient.js"

/** The component `registerComponent` was given, in either of its forms. @internal */
export const component = (
  nameOrComponent: string | AvailableComponent,
  registration: ComponentRegistration | undefined
): Effect.Effect<AvailableComponent, ToolDefinitionError> =>
  typeof nameOrComponent === "string" ? componentFrom(nameOrComponent, registration) : Effect.succeed(nameOrComponent)

const componentFrom = (
  name: string,
  registration: ComponentRegistration | undefined
): Effect.Effect<AvailableComponent, ToolDefinitionError> => {
  const schema: unknown = registration?.propsSchema ?? registration?.props
  if (registration === undefined || schema === undefined) {
    return Effect.fail(
      new ToolDefinitionError({
        reason: "InvalidDefinition",
        message: `Component ${name} needs a description and a props schema`,
        definitionName: name
      })
    )
  }
  if (registration.propsSchema !== undefined) {
    return Effect.succeed({ name, description: registration.description, propsSchema: registration.propsSchema })
  }
  if (!Tool.isJsonSchema(schema)) {
    return Effect.fail(
      new ToolDefinitionError({
        reason: "UnsupportedSchema",
        message: `The props of component ${name} are not a JSON Schema`,
        definitionName: name
      })
    )
  }
  return Effect.succeed({ name, description: registration.description, propsSchema: schema })
}

/**
 * The registry's fallback for `onCallUnregisteredTool`: a tool by the name
 * called, taking any object, that hands the arguments over as parameters.
 *
 * @internal
 */
export const unregisteredTool = (handler: UnregisteredToolHandler): ToolRegistry.ToolRegistry.Fallback => (toolName) => ({
  name: toolName,
  description: "A tool the app did not register",
  inputSchema: { type: "object" },
  tool: (args: unknown) =>
    handler(
      toolName,
      Object.entries(args !== null && typeof args === "object" ? args : {}).map(([parameterName, parameterValue]) => ({
        parameterName,
        parameterValue
      }))
    )
})

/**
 * A component block's props as its registered component's schema wrote them (the API's strict
 * mode undone, see `Tool.undoStrictMode`); the block's own props for a component not registered.
 *
 * @internal
 */
export const componentProps = (
  registry: ToolRegistry.ToolRegistry.Service,
  block: { readonly name: string; readonly props: unknown }
): Effect.Effect<Record<string, unknown>> =>
  Effect.map(registry.toApiComponents, (components) => {
    const props = isRecord(block.props) ? block.props : {}
    const registered = components.find((candidate) => candidate.name === block.name)
    if (registered === undefined) return props
    const read = Tool.undoStrictMode(registered.propsSchema, props)
    return isRecord(read) ? read : props
  })
