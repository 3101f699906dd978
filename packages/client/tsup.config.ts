import { defineConfig } from "tsup"

export default defineConfig([
  // The composable build: core, effect and the rest stay imports, so a bundler (or the React
  // package beside an app that uses effect) shares one copy of each.
  {
    entry: ["src/*.ts"],
    format: ["esm", "cjs"],
    dts: true,
    sourcemap: true,
    // The standalone build below owns dist/node.
    clean: ["!node/**"],
    splitting: true,
    treeshake: true,
    target: "es2022",
  },
  // The standalone build Node's `import` resolves (the `node` condition of the exports map): core,
  // effect, @effect/platform and the typescript-sdk inlined and tree-shaken into a few files, because
  // a process that imports the composable build loads ~590 ES modules (fast-check among them, through
  // effect/Schema) before its first run. Only the MCP SDK stays external, in a chunk loaded when a
  // server is connected. ESM only: tsup's CommonJS code splitting mis-compiles the bundle (an
  // `async` import), and without splitting each CommonJS module would hold a copy of everything.
  // See scratchpad/bench/NOTES.md, "Cold start".
  {
    entry: ["src/*.ts"],
    outDir: "dist/node",
    format: ["esm"],
    platform: "node",
    dts: false,
    sourcemap: true,
    clean: true,
    splitting: true,
    target: "es2022",
    // The package's own dependencies are external by default; everything else is inlined anyway.
    noExternal: [/^@tambo-effect\/core(\/|$)/, /^effect(\/|$)/],
    external: [/^@modelcontextprotocol\/sdk(\/|$)/],
    // Core from its sources, as the workspace's own tools read it: one compile, no dependence on
    // core's dist being built first.
    esbuildOptions(options) {
      options.conditions = ["tambo-source"]
    },
  },
])
