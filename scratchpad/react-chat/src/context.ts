/** What every run tells the model about the user's page and time. */
import { currentPageContextHelper, currentTimeContextHelper } from "@tambo-effect/react"

export const contextHelpers = { userPage: currentPageContextHelper, userTime: currentTimeContextHelper }
