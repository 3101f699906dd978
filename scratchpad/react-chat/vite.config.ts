import { defineConfig } from "vite"

export default defineConfig({
  // Relative asset URLs: `dist/` works from any static file server and any path.
  base: "./",
  // Workspace packages resolve to their TypeScript sources.
  resolve: { conditions: ["tambo-source", "browser", "module", "import", "default"] },
  esbuild: { jsx: "automatic" },
  // effect, @effect/platform, React and the API SDK make one chunk of about 830 kB (260 kB gzipped): fine for an example.
  build: {
    outDir: "dist",
    emptyOutDir: true,
    sourcemap: true,
    chunkSizeWarningLimit: 1024,
    rollupOptions: {
      // A dependency's `@__PURE__` comment that Rollup cannot place is dropped; the warning says
      // only that, about code that is not ours.
      onwarn: (warning, warn) => {
        if (warning.code === "INVALID_ANNOTATION" && warning.id?.includes("/node_modules/")) return
        warn(warning)
      }
    }
  },
  server: { host: "127.0.0.1", port: 5173 }
})
