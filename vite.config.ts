import { defineConfig } from 'vite';

// Minimal for now: `vite build` makes the ES module build of the elements with Lit external.
// The playground's dev server (server/demo.ts) is configured on its own and does not read this file.
export default defineConfig({
  build: {
    lib: { entry: 'src/index.ts', formats: ['es'], fileName: 'notif-inbox' },
    rollupOptions: { external: [/^lit/, /^@lit\//] },
    sourcemap: true,
  },
});
