import { defineProject } from "vitest/config"
import { shared } from "../../vitest.shared.js"

export default defineProject(shared(import.meta.dirname, {
  setupFiles: ["./test/setup.ts"],
  // `@tambo-ai/react-ui-base` is run through vite, so that its imports of `@tambo-ai/react` (this
  // package, under upstream's name: see `package.json`) resolve to the sources the tests use.
  server: { deps: { inline: ["@tambo-ai/react-ui-base"] } }
}))
