/**
 * The tools of the connected servers in the `ToolRegistry`: under their own
 * names while one server is connected, as `<serverKey>__<name>` while
 * several are, never over an application's tool of the same name.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { McpToolSpec } from "../../Mcp.js"
import type * as Tool from "../../Tool.js"
import { type Entry, type Env, publish } from "./env.js"
import type { Requests } from "./requests.js"
import * as Support from "./support.js"

const describeTool = (entry: Entry, spec: McpToolSpec) => {
  const description = spec.description?.trim() ?? ""
  if (description.length > 0) return description
  const title = spec.title?.trim() ?? ""
  return title.length > 0 ? title : `The "${spec.name}" tool of the MCP server "${entry.serverKey}"`
}

/**
 * @internal
 * @since 0.2.0
 * @category Constructors
 */
export const make = (env: Env, callForModel: Requests["callForModel"]) => {
  const toolDefinition = (name: string, entry: Entry, spec: McpToolSpec): Tool.TamboTool<unknown, unknown> => ({
    name,
    description: describeTool(entry, spec),
    ...(spec.title === undefined ? {} : { title: spec.title }),
    ...(spec.annotations === undefined ? {} : { annotations: spec.annotations }),
    inputSchema: spec.inputSchema,
    ...(spec.outputSchema === undefined ? {} : { outputSchema: spec.outputSchema }),
    // Bounded by the server's own timeout, which its progress notices restart (see `callForModel`).
    ...(entry.toolBounds === undefined ? {} : { timeout: Duration.infinity }),
    // The executor runs a returned Effect in the calling fiber: the call is
    // interrupted with it and its span is a child of the executor's.
    tool: (args: unknown, context: Tool.ToolCallContext) => callForModel(entry, spec, name, args, context.toolCallId),
    transformToContent: (parts: unknown) => (Array.isArray(parts) ? parts : [])
  })

  const unregisterIfOurs = (name: string, definition: Tool.Definition) =>
    Effect.flatMap(env.registry.get(name), (found) =>
      Option.isSome(found) && found.value.definition === definition
        ? Effect.asVoid(env.registry.unregister(name))
        : Effect.void)

  /** The name each tool of the connected servers is to be registered under. */
  const desiredNames = () => {
    const connected = Array.from(env.entries.values()).filter((entry) => entry.status === "connected")
    const prefixed = connected.length > 1
    const desired = new Map<string, { readonly entry: Entry; readonly spec: McpToolSpec }>()
    for (const entry of connected) {
      for (const spec of entry.tools) {
        const name = Support.distinctName(
          Support.registeredToolName(entry.serverKey, spec.name, prefixed),
          (candidate) => desired.has(candidate)
        )
        desired.set(name, { entry, spec })
      }
    }
    return desired
  }

  const register = (name: string, entry: Entry, spec: McpToolSpec) =>
    Effect.gen(function*() {
      if (Option.isSome(yield* env.registry.get(name))) {
        return yield* Effect.logWarning(
          `The tool "${spec.name}" of MCP server "${entry.serverKey}" is not registered: ` +
            `a tool named "${name}" is already registered`
        )
      }
      const definition = toolDefinition(name, entry, spec)
      yield* env.registry.register(definition).pipe(
        Effect.zipRight(Effect.sync(() => {
          env.registered.set(name, { definition, entry, spec })
          env.nameOfSpec.set(spec, name)
        })),
        Effect.catchAll((error) =>
          Effect.logWarning(
            `The tool "${spec.name}" of MCP server "${entry.serverKey}" is not registered: ${error.message}`
          )
        )
      )
    })

  /**
   * Makes the registry hold exactly the tools of the connected servers,
   * under the names the current number of servers calls for, then
   * publishes the connections. Run under the lock.
   */
  const sync: Effect.Effect<void> = Effect.gen(function*() {
    const desired = desiredNames()
    for (const [name, registration] of Array.from(env.registered)) {
      if (desired.get(name)?.spec === registration.spec) continue
      env.registered.delete(name)
      if (env.nameOfSpec.get(registration.spec) === name) env.nameOfSpec.delete(registration.spec)
      yield* unregisterIfOurs(name, registration.definition)
    }
    for (const [name, { entry, spec }] of desired) {
      if (!env.registered.has(name)) yield* register(name, entry, spec)
    }
    yield* publish(env)
  })

  /**
   * Registers the entry's tools again (their definitions say whether the
   * run's tool timeout applies), each replacing itself under its name, so a
   * run never finds it missing. Run under the lock.
   */
  const reregister = (entry: Entry): Effect.Effect<void> =>
    Effect.gen(function*() {
      for (const [name, registration] of Array.from(env.registered)) {
        if (registration.entry !== entry) continue
        // An app's tool that took the name since stays.
        const found = yield* env.registry.get(name)
        if (Option.isNone(found) || found.value.definition !== registration.definition) continue
        const definition = toolDefinition(name, entry, registration.spec)
        yield* env.registry.register(definition).pipe(
          Effect.zipRight(Effect.sync(() => env.registered.set(name, { ...registration, definition }))),
          Effect.catchAll((error) =>
            Effect.logWarning(
              `The tool "${registration.spec.name}" of MCP server "${entry.serverKey}" is not registered again: ${error.message}`
            )
          )
        )
      }
      yield* publish(env)
    })

  return { sync, reregister }
}
