import type { SnapshotStrategy } from "@tambo-effect/client"
import * as Duration from "effect/Duration"

const customIds = new WeakMap<object, number>()
let nextCustomId = 0

/**
 * A strategy's identity by value, so a hook given a strategy built while
 * rendering (`{ strategy: SnapshotStrategy.throttle("100 millis") }`) keeps
 * its subscription. A `custom` strategy is identified by its function.
 *
 * @since 0.1.0
 * @category Internal
 */
export const strategyKey = (strategy: SnapshotStrategy.Strategy): string => {
  switch (strategy._tag) {
    case "Immediate":
    case "WordBoundary":
    case "Punctuation":
      return strategy._tag
    case "EveryN":
      return `EveryN(${strategy.n})`
    case "Throttle":
    case "Debounce":
      return `${strategy._tag}(${Duration.toMillis(Duration.decode(strategy.duration))})`
    case "Any":
    case "All":
      return `${strategy._tag}(${strategy.strategies.map(strategyKey).join(",")})`
    case "Custom": {
      let id = customIds.get(strategy.shouldPublish)
      if (id === undefined) {
        id = ++nextCustomId
        customIds.set(strategy.shouldPublish, id)
      }
      return `Custom#${id}`
    }
  }
}
