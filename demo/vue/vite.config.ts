import { fileURLToPath } from 'node:url';
import vue from '@vitejs/plugin-vue';
import { defineConfig } from 'vite';

// A Vue 3 app with Vite. In an app of your own, `notif-inbox` comes from node_modules; here it is
// this repository's source, so the example always runs what the repository holds.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  plugins: [
    // Vue's template compiler must leave <notif-*> to the browser (they are custom elements).
    vue({ template: { compilerOptions: { isCustomElement: (tag) => tag.startsWith('notif-') } } }),
  ],
  resolve: {
    alias: [{ find: /^notif-inbox\/vue$/, replacement: fileURLToPath(new URL('../../src/vue.ts', import.meta.url)) }],
  },
});
