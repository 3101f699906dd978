import { basename } from "node:path"
import type { UserWorkspaceConfig } from "vitest/config"

/** Settings every package's test project shares: resolve workspace packages to their sources. */
export const shared = (dir: string, overrides: UserWorkspaceConfig["test"] = {}): UserWorkspaceConfig => ({
  resolve: { conditions: ["tambo-source", "module", "node", "import", "default"] },
  ssr: { resolve: { conditions: ["tambo-source"], externalConditions: ["tambo-source"] } },
  test: {
    name: basename(dir),
    include: ["test/**/*.test.ts", "test/**/*.test.tsx"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    ...overrides,
  },
})
