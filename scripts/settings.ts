// `npm run settings`: writes the reference of every setting of the service into docs/settings.md,
// between its markers, from the one schema in server/src/config.ts. `--check` writes nothing and
// exits 1 when the file is out of date (test/server/settings.test.ts checks it too).
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { settingsReference } from '../server/src/config.ts';

export const SETTINGS_DOC = resolve(import.meta.dirname, '../docs/settings.md');
export const START = '<!-- settings:start: generated from server/src/config.ts by `npm run settings`, do not edit -->';
export const END = '<!-- settings:end -->';

/** The document with the generated part between its markers made anew. */
export function withReference(document: string): string {
  const start = document.indexOf(START);
  const end = document.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${SETTINGS_DOC} lacks its markers (${START} ... ${END})`);
  return `${document.slice(0, start + START.length)}\n${settingsReference()}\n${document.slice(end)}`;
}

if (process.argv[1] === import.meta.filename) {
  const current = readFileSync(SETTINGS_DOC, 'utf8');
  const wanted = withReference(current);
  if (process.argv.includes('--check')) {
    if (current !== wanted) {
      console.error('docs/settings.md is out of date: run `npm run settings`');
      process.exit(1);
    }
  } else if (current !== wanted) {
    writeFileSync(SETTINGS_DOC, wanted);
    console.log('docs/settings.md written');
  }
}
