import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// A React 19 app with Vite. In an app of your own, `notif-inbox` comes from node_modules; here it
// is this repository's source, so the example always runs what the repository holds.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  resolve: {
    alias: [{ find: /^notif-inbox\/react$/, replacement: fileURLToPath(new URL('../../src/react.ts', import.meta.url)) }],
  },
  // JSX with React's automatic runtime (Vite transforms .tsx with Oxc; no plugin needed).
  oxc: { jsx: { runtime: 'automatic' } },
});
