// The test projects: one per package. Imported by vitest.config.ts (test.projects).
export default [
  "packages/core",
  "packages/testing",
  "packages/client",
  "packages/react",
]
