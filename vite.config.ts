import { defineConfig } from 'vite';
import { minifyTemplatesPlugin } from './scripts/minify-templates.mjs';

// The package's two builds (`npm run build` runs both, then the type declarations; see scripts/build.mjs):
//
// - `vite build` (mode production): dist/notif-inbox.js, one entry per element (dist/notif-bell.js,
//   ...) and dist/client.js (NotifClient), ES modules with `lit` and `@lit/*` external so an app's bundler dedupes them with its own.
// - `vite build --mode script-tag`: dist/notif-inbox.min.js, the file with Lit inside, for
//   `<script type="module" src=".../notif-inbox.min.js">` on any page, and beside it the files it
//   loads on demand, which import Lit and the rest from it: dist/notif-preferences.min.js
//   (src/script-tag.ts says when) and dist/custom-hosts.min.js (once a page sets a render hook).
//   The ES build loads <notif-preferences> only when the bell's preferences button is pressed (or
//   the app imports notif-inbox/notif-preferences).
//
// The ES build puts the three elements' CSS (every *.styles.ts) in one shared chunk: next to each other the
// style sheets compress against one another (deflate looks back only 32 KB), about 90 B gzip less than
// spread over the elements' chunks; a page that imports one element alone loads the others' CSS too.
// Custom rendering's small shared part (custom-rendering.ts) goes in that chunk as well, so the lazy
// hosts (custom-hosts.ts) import nothing from the feed's own chunk: an app's bundler then puts the
// elements' code with the entry in one chunk instead of a chunk of its own that the hosts share
// (three static chunks instead of four: the entry's static chunks 20,609 -> 19,988 B gzip).
//
// Both resolve Lit's `production` export condition (never its development build, which warns
// "Lit is in dev mode" in the console) and minify the css``/html`` templates at build time.
// The playground's dev server (server/src/demo.ts) is configured on its own and does not read this file.

const ENTRIES = {
  'notif-inbox': 'src/index.ts',
  'notif-bell': 'src/components/notif-bell/notif-bell.ts',
  'notif-feed': 'src/components/notif-feed/notif-feed.ts',
  'notif-message': 'src/components/notif-message/notif-message.ts',
  'notif-preferences': 'src/components/notif-preferences/notif-preferences.ts',
  client: 'src/client.ts',
  // German, for registerTranslation: a file of its own (no import), so the script-tag file can use it too.
  'i18n/de': 'src/i18n/de.ts',
};

export default defineConfig(({ mode }) => {
  const scriptTag = mode === 'script-tag';
  return {
    plugins: [minifyTemplatesPlugin()],
    resolve: { conditions: ['production', 'module', 'browser'] },
    define: { 'process.env.NODE_ENV': '"production"' },
    publicDir: false,
    build: {
      target: 'es2022',
      emptyOutDir: false,
      outDir: 'dist',
      minify: true,
      sourcemap: true,
      reportCompressedSize: false,
      lib: scriptTag
        ? { entry: { 'notif-inbox.min': 'src/script-tag.ts' }, formats: ['es'] }
        : { entry: ENTRIES, formats: ['es'] },
      rolldownOptions: scriptTag
        ? {
            // The first file may export more than src/script-tag.ts does (what the lazy files import
            // from it), so everything they do not hold stays in that one file.
            preserveEntrySignatures: 'allow-extension',
            output: { entryFileNames: '[name].js', chunkFileNames: '[name].min.js', minify: true, comments: false },
          }
        : {
            external: [/^lit(\/|$)/, /^@lit\//],
            output: {
              entryFileNames: '[name].js',
              chunkFileNames: 'chunks/[name]-[hash].js',
              minify: true,
              // (not the preferences' CSS: it comes with them, when the bell loads them)
              codeSplitting: { groups: [{ name: 'styles', test: /(?<!preferences)\.styles\.ts$|\/custom-rendering\.ts$/ }] },
            },
          },
    },
  };
});
