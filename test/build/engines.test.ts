import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';

// `npm install` on the Node that package.json's engines names warns of no dependency that wants a
// newer one: the lock installed as npm would on a fresh clone (a dry run, in a folder holding only
// the manifests and the lock, so the node_modules here plays no part).

const ROOT = resolve(import.meta.dirname, '../..');
const MANIFESTS = ['package.json', 'package-lock.json', 'server/package.json'];

test("npm install warns of no dependency's engine (EBADENGINE) on this Node", () => {
  const { engines } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
  const clone = mkdtempSync(join(tmpdir(), 'notif-engines-'));
  try {
    for (const file of MANIFESTS) {
      mkdirSync(dirname(join(clone, file)), { recursive: true });
      copyFileSync(join(ROOT, file), join(clone, file));
    }
    const install = spawnSync('npm', ['install', '--dry-run', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund'], {
      cwd: clone,
      encoding: 'utf8',
    });
    assert.equal(install.status, 0, install.stderr);
    assert.doesNotMatch(install.stderr, /EBADENGINE/, `npm install on Node ${process.version} (engines: node ${engines.node}) warns:\n${install.stderr}`);
  } finally {
    rmSync(clone, { recursive: true, force: true });
  }
});
