import type { Script, Step } from "../Script.js"

/** The steps one run request plays, and how long the run lingers before `RUN_FINISHED`. */
export interface Round {
  readonly steps: ReadonlyArray<Step>
  readonly finishDelayMillis: number
}

/** Splits a script at its `awaitToolResults()` steps. An empty script is one empty round. */
export const splitRounds = (script: Script): Array<Round> => {
  const rounds: Array<Round> = []
  let current: Array<Step> = []
  for (const step of script) {
    if (step._tag === "AwaitToolResults") {
      rounds.push({ steps: current, finishDelayMillis: step.finishDelayMillis })
      current = []
    } else {
      current.push(step)
    }
  }
  if (current.length > 0 || rounds.length === 0) rounds.push({ steps: current, finishDelayMillis: 0 })
  for (const round of rounds) {
    const index = round.steps.findIndex((step) => step._tag === "HttpError")
    if (index > 0) throw new Error("Script.httpError(...) must be the first step of its round: it replaces the whole response")
  }
  return rounds
}
