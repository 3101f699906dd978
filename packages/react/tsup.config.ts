import { defineConfig } from "tsup"

export default defineConfig({
  // `./mcp` is `@tambo-ai/react/mcp`'s surface. The ES build shares the modules of both entries
  // through a chunk; the CommonJS build has a copy in each, which share the provider's context
  // through `globalThis` (`internal/context.ts`).
  entry: { index: "src/index.ts", mcp: "src/upstreamMcp.tsx" },
  format: ["esm", "cjs"],
  dts: true,
  sourcemap: true,
  clean: true,
  // Rollup's tree-shaking pass would drop the "use client" banner; esbuild's output keeps it.
  treeshake: false,
  target: "es2022",
  external: ["react", "react-dom"],
  // Hooks and context only work in client components (Next.js App Router).
  banner: { js: "\"use client\";" }
})
