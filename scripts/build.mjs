// `npm run build`: the package in dist/, as `npm pack` ships it.
//   dist/notif-inbox.js, dist/notif-bell.js, dist/notif-feed.js, dist/notif-message.js, dist/client.js
//       ES modules, `lit` external (vite build; see vite.config.ts)
//   dist/notif-inbox.min.js   one file with Lit inside, for a <script type="module"> tag
//   dist/types/**.d.ts        declarations (tsc -p tsconfig.build.json), imports ending in .js
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const DIST = join(ROOT, 'dist');
const bin = (name) => join(ROOT, 'node_modules', '.bin', name);
const run = (cmd, args) => execFileSync(cmd, args, { cwd: ROOT, stdio: 'inherit' });

rmSync(DIST, { recursive: true, force: true });
run(bin('vite'), ['build', '--logLevel', 'warn']);
run(bin('vite'), ['build', '--mode', 'script-tag', '--logLevel', 'warn']);
run(bin('tsc'), ['-p', 'tsconfig.build.json']);

// Every JavaScript file gets a second minification by terser (two passes, its top level mangled),
// which comes out smaller than rolldown's minifier alone; the source maps follow.
{
  const { minify } = await import('terser');
  for (const file of [...readdirSync(DIST), ...readdirSync(join(DIST, 'chunks')).map((f) => 'chunks/' + f)].filter((f) => f.endsWith('.js')).map((f) => join(DIST, f))) {
    const name = file.slice(file.lastIndexOf('/') + 1);
    const out = await minify(readFileSync(file, 'utf8'), {
      module: true,
      toplevel: true,
      compress: { passes: 2 },
      format: { comments: false },
      sourceMap: existsSync(file + '.map') ? { content: readFileSync(file + '.map', 'utf8'), url: name + '.map' } : false,
    });
    writeFileSync(file, out.code);
    if (out.map) writeFileSync(file + '.map', out.map);
  }
}

// Relative imports in the sources end in .ts (rewriteRelativeImportExtensions); in declarations
// they must name the .js files that the .d.ts files stand for, for every consumer's resolution.
const walk = (dir) => readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? walk(join(dir, f)) : [join(dir, f)]));
for (const file of walk(join(DIST, 'types')).filter((f) => f.endsWith('.d.ts'))) {
  const text = readFileSync(file, 'utf8');
  const fixed = text.replace(/((?:from|import)\s*\(?\s*['"])(\.{1,2}\/[^'"]+)\.ts(['"])/g, '$1$2.js$3');
  if (fixed !== text) writeFileSync(file, fixed);
}
console.log(`built ${DIST}`);
