import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';

const ROOT = resolve(import.meta.dirname, '../..');

test('custom-elements.json, src/types/attributes.ts and the reference in docs/elements.md match the sources (npm run manifest)', () => {
  try {
    execFileSync(process.execPath, ['scripts/manifest.mjs', '--check'], { cwd: ROOT, encoding: 'utf8', stdio: 'pipe' });
  } catch (e) {
    assert.fail((e as { stderr?: string }).stderr ?? String(e));
  }
});

test('the manifest describes the four elements with their tags, attributes, events, slots, parts and CSS properties', () => {
  const manifest = JSON.parse(readFileSync(resolve(ROOT, 'custom-elements.json'), 'utf8'));
  const elements = manifest.modules.flatMap((m: { declarations?: unknown[] }) => m.declarations ?? []).filter((d: { tagName?: string }) => d.tagName);
  assert.deepEqual(elements.map((d: { tagName: string }) => d.tagName).sort(), ['notif-bell', 'notif-feed', 'notif-message', 'notif-preferences']);
  const bell = elements.find((d: { tagName: string }) => d.tagName === 'notif-bell');
  const attrs = bell.attributes.map((a: { name: string }) => a.name);
  for (const a of ['base-url', 'subscriber-id', 'api-key', 'subscriber-hash', 'poll-interval', 'theme', 'locale']) assert.ok(attrs.includes(a), `<notif-bell ${a}>`);
  assert.ok(bell.events.every((e: { type?: { text: string } }) => /^CustomEvent<Notif\w+Detail>$/.test(e.type?.text ?? '')), 'events are typed');
  assert.ok(bell.cssParts.some((p: { name: string }) => p.name === 'badge'));
  const message = elements.find((d: { tagName: string }) => d.tagName === 'notif-message');
  assert.ok(message.events.some((e: { name: string }) => e.name === 'notif-message-click'));
  // Public API only: no private or protected members.
  for (const el of elements) for (const m of el.members ?? []) assert.ok(!m.privacy || m.privacy === 'public', `${el.tagName}.${m.name} is public`);
  const definitions = manifest.modules.flatMap((m: { exports?: { kind: string; name: string }[] }) => m.exports ?? []).filter((e: { kind: string }) => e.kind === 'custom-element-definition');
  assert.deepEqual(definitions.map((e: { name: string }) => e.name).sort(), ['notif-bell', 'notif-feed', 'notif-message', 'notif-preferences']);
  // The state slots and the custom rendering hooks, documented.
  const feed = elements.find((d: { tagName: string }) => d.tagName === 'notif-feed');
  for (const el of [bell, feed]) {
    const slots = el.slots.map((s: { name: string }) => s.name);
    for (const s of ['header', 'header-actions', 'empty', 'loading', 'error']) assert.ok(slots.includes(s), `<${el.tagName}> slot ${s}`);
    for (const hook of ['renderMessage', 'renderAvatar', 'renderSubject', 'renderBody', 'renderActions']) {
      assert.ok(el.members.some((m: { name: string }) => m.name === hook), `${el.tagName}.${hook}`);
    }
  }
});
