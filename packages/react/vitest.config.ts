import { defineProject } from "vitest/config"
import { shared } from "../../vitest.shared.js"

export default defineProject(shared(import.meta.dirname, { setupFiles: ["./test/setup.ts"] }))
