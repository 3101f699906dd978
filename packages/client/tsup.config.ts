import { mkdir, writeFile } from "node:fs/promises"
import { basename, extname, resolve } from "node:path"
import { defineConfig, type Options } from "tsup"

/** Where the CommonJS standalone build keeps the one bundle its modules re-export. */
const bundleName = "internal/standalone"

/**
 * One CommonJS bundle for all of the package's modules, and for each module a file that is that
 * bundle's part for it. The bundle's entry is made from the build's own entries (`exports.errors =
 * require("./src/errors.ts")`, ...), so a new module needs no edit here; each module's file is
 * written once the bundle is built. `require`, not `export * as`: esbuild then gives every module's
 * top level a function of its own, and Node compiles each as it runs it rather than one top level
 * the size of the bundle, which holds more memory at start; each module's part is also marked
 * `__esModule`, as the composable CommonJS build's modules are.
 */
const oneBundle: NonNullable<Options["esbuildPlugins"]>[number] = {
  name: "one-commonjs-bundle",
  setup(build) {
    const sources = build.initialOptions.entryPoints
    const outDir = build.initialOptions.outdir
    if (!Array.isArray(sources) || outDir === undefined) throw new Error("one-commonjs-bundle: needs a list of entries and an outDir")
    const entries = new Map<string, string>()
    for (const source of sources) {
      const file = typeof source === "string" ? source : source.in
      entries.set(basename(file, extname(file)), resolve(file))
    }
    build.initialOptions.entryPoints = { [bundleName]: "tambo-effect:standalone" }
    build.onResolve({ filter: /^tambo-effect:standalone$/ }, ({ path }) => ({ path, namespace: "standalone" }))
    build.onLoad({ filter: /.*/, namespace: "standalone" }, () => ({
      contents: Array.from(entries, ([name, file]) => `exports[${JSON.stringify(name)}] = require(${JSON.stringify(file)})`).join("\n"),
      loader: "js",
      resolveDir: process.cwd()
    }))
    build.onEnd(async (result) => {
      if (result.errors.length > 0) return
      await mkdir(outDir, { recursive: true })
      await Promise.all(Array.from(entries.keys(), (name) =>
        writeFile(
          resolve(outDir, `${name}.cjs`),
          `"use strict";\nmodule.exports = require("./${bundleName}.cjs")[${JSON.stringify(name)}];\n`
        )))
    })
  }
}

/**
 * What both standalone builds share: for Node, core, effect and the typescript-sdk inlined (the
 * package's own dependencies are external by default; everything else is inlined anyway), the MCP SDK external
 * (loaded, or required, only when a server connects), core read from its sources as the
 * workspace's own tools read it (one compile, no dependence on core's dist being built first).
 */
const standalone = {
  entry: ["src/*.ts"],
  platform: "node",
  dts: false,
  sourcemap: true,
  clean: true,
  target: "es2022",
  // Node holds a module's whole source in memory: without comments and indentation it is a third
  // smaller, and ASCII (a dependency's comments are not), which halves how V8 stores it.
  minifyWhitespace: true,
  noExternal: [/^@tambo-effect\/core(\/|$)/, /^effect(\/|$)/, /^@tambo-ai\/typescript-sdk(\/|$)/],
  external: [/^@modelcontextprotocol\/sdk(\/|$)/],
  esbuildOptions(options) {
    options.conditions = ["tambo-source"]
  }
} satisfies Options

export default defineConfig([
  // The composable build: core, effect and the rest stay imports, so a bundler (or the React
  // package beside an app that uses effect) shares one copy of each.
  {
    entry: ["src/*.ts"],
    format: ["esm", "cjs"],
    dts: true,
    sourcemap: true,
    // The standalone builds below own dist/node and dist/node-cjs.
    clean: ["!node/**", "!node-cjs/**"],
    splitting: true,
    treeshake: true,
    target: "es2022",
  },
  // The standalone build Node's `import` resolves (the `node` condition of the exports map): core,
  // effect, @effect/platform and the typescript-sdk inlined and tree-shaken into a few files, because
  // a process that imports the composable build loads ~590 ES modules (fast-check among them, through
  // effect/Schema) before its first run. Only the MCP SDK stays external, in a chunk loaded when a
  // server is connected. ESM: tsup's CommonJS code splitting mis-compiles the bundle (an `async`
  // import), so the CommonJS standalone build below is one bundle instead.
  // See scratchpad/bench/NOTES.md, "Cold start".
  { ...standalone, outDir: "dist/node", format: ["esm"], splitting: true },
  // The standalone build Node's `require` resolves: the same inlining as above, as CommonJS. Without
  // code splitting (see above), so it is one bundle for all the modules, and each module's file
  // re-exports its part of it: a class is the same whichever module a script requires it from.
  { ...standalone, outDir: "dist/node-cjs", format: ["cjs"], splitting: false, esbuildPlugins: [oneBundle] },
])
