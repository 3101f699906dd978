/**
 * A strategy compiled into a plan: a monotone boolean formula over per-event
 * flags (event rules, computed once on arrival) and gates (time rules,
 * computed from the clock when deciding), and the test of a pending event
 * against it.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import type { Custom, Strategy } from "../../SnapshotStrategy.js"
import type * as Types from "../../Types.js"

/** A node of the formula. */
export type Node =
  | { readonly _tag: "Always" }
  | { readonly _tag: "Flag"; readonly bit: number }
  | { readonly _tag: "Gate"; readonly gate: number }
  /** At least `n` events since the last published one, counted when deciding. */
  | { readonly _tag: "Count"; readonly n: number }
  | { readonly _tag: "Or"; readonly nodes: ReadonlyArray<Node> }
  | { readonly _tag: "And"; readonly nodes: ReadonlyArray<Node> }

/** An event rule: one flag of each event, decided when it arrives. */
export type FlagRule =
  | { readonly _tag: "WordBoundary" }
  | { readonly _tag: "Punctuation" }
  | { readonly _tag: "Custom"; readonly shouldPublish: Custom["shouldPublish"] }

/** A time rule: a gate over every pending event, decided from the clock. */
export interface GateRule {
  readonly _tag: "Throttle" | "Debounce"
  readonly millis: number
}

/** A compiled strategy. */
export interface Plan {
  readonly root: Node
  readonly flags: ReadonlyArray<FlagRule>
  readonly gates: ReadonlyArray<GateRule>
  /** The flag set retroactively on the previous event when a delta starts with whitespace. */
  readonly wordBoundaryBit: number | undefined
}

const always: Node = { _tag: "Always" }

/** Compiles `strategy` into its plan. */
export const compile = (strategy: Strategy): Plan => {
  const flags: Array<FlagRule> = []
  const flagBits = new Map<unknown, number>()
  const gates: Array<GateRule> = []
  const gateIndexes = new Map<string, number>()

  // Equal rules share a flag or gate, so the pending set stays small.
  const flag = (key: unknown, rule: FlagRule): Node => {
    let bit = flagBits.get(key)
    if (bit === undefined) {
      bit = flags.length
      flags.push(rule)
      flagBits.set(key, bit)
    }
    return { _tag: "Flag", bit }
  }
  const gate = (rule: GateRule): Node => {
    const key = `${rule._tag}:${rule.millis}`
    let index = gateIndexes.get(key)
    if (index === undefined) {
      index = gates.length
      gates.push(rule)
      gateIndexes.set(key, index)
    }
    return { _tag: "Gate", gate: index }
  }
  const millisOf = (input: Duration.DurationInput): number => {
    const millis = Duration.toMillis(Duration.decode(input))
    return millis > 0 ? millis : 0
  }

  const go = (s: Strategy): Node => {
    switch (s._tag) {
      case "Immediate":
        return always
      case "EveryN": {
        const n = s.n >= 1 ? Math.floor(s.n) : 1
        return n === 1 ? always : { _tag: "Count", n }
      }
      case "WordBoundary":
        return flag("WordBoundary", { _tag: "WordBoundary" })
      case "Punctuation":
        return flag("Punctuation", { _tag: "Punctuation" })
      case "Custom":
        return flag(s.shouldPublish, { _tag: "Custom", shouldPublish: s.shouldPublish })
      case "Throttle": {
        const millis = millisOf(s.duration)
        return millis === 0 ? always : gate({ _tag: "Throttle", millis })
      }
      case "Debounce": {
        const millis = millisOf(s.duration)
        return millis === 0 ? always : gate({ _tag: "Debounce", millis })
      }
      case "Any": {
        const nodes = s.strategies.map(go)
        return nodes.length === 1 ? nodes[0]! : { _tag: "Or", nodes }
      }
      case "All": {
        const nodes = s.strategies.map(go).filter((node) => node !== always)
        return nodes.length === 0 ? always : nodes.length === 1 ? nodes[0]! : { _tag: "And", nodes }
      }
    }
  }

  const root = go(strategy)
  return { root, flags, gates, wordBoundaryBit: flagBits.get("WordBoundary") }
}

/** A pending event: its position in the run, its snapshot, its flags. */
export interface Entry {
  readonly index: number
  readonly snapshot: Types.TamboThread
  readonly mask: string
}

/** A mask is one character per flag, "1" when the flag holds. */
export const ONE = 49

/** Whether `node` accepts the pending `entry`, `since` events after the last published one. */
export const accepts = (node: Node, entry: Entry, since: number, gatesOpen: ReadonlyArray<boolean>): boolean => {
  switch (node._tag) {
    case "Always":
      return true
    case "Flag":
      return entry.mask.charCodeAt(node.bit) === ONE
    case "Gate":
      return gatesOpen[node.gate]!
    case "Count":
      return since >= node.n
    case "Or":
      return node.nodes.some((child) => accepts(child, entry, since, gatesOpen))
    case "And":
      return node.nodes.every((child) => accepts(child, entry, since, gatesOpen))
  }
}
