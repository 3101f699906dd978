import { defineConfig } from "tsup"

export default defineConfig({
  entry: ["src/index.ts"],
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
