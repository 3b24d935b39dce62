import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_RENDERED_LENGTH, renderText } from '../../server/src/render.ts';

// server/src/render.ts: every rendered text holds at most MAX_RENDERED_LENGTH characters, whether
// or not its template has placeholders (other channels' controlValues are free-form JSON, bounded
// only by the body limit).

describe('renderText', () => {
  const ctx = { payload: { x: 'y'.repeat(1000) }, subscriber: {} };

  it('cuts a template without placeholders as it cuts one with them', () => {
    const plain = 'p'.repeat(200_000);
    assert.equal(renderText(plain, ctx).length, MAX_RENDERED_LENGTH);
    assert.equal(renderText(plain + '{{payload.x}}', ctx).length, MAX_RENDERED_LENGTH);
  });

  it('never between the halves of a surrogate pair, placeholders or not', () => {
    const emoji = 'a' + '\u{1F600}'.repeat(40_000);
    assert.equal(renderText(emoji, ctx), 'a' + '\u{1F600}'.repeat(32_767));
  });

  it('leaves a short text as it is', () => {
    assert.equal(renderText('Hi {{payload.missing}}!', ctx), 'Hi !');
    assert.equal(renderText('plain', ctx), 'plain');
  });
});
