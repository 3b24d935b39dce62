import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { TestServer } from './helpers.ts';

// README.md's "Your first notification", as a newcomer runs it: its shell blocks, as printed,
// against a fresh service started as `npm start` starts it (seeded, printing its development key).
// Only the two settings the reader fills in (the service's address and the printed key) come from
// the test; every command is run as it is written. A command that breaks fails this test.

const README = readFileSync(resolve(import.meta.dirname, '../../README.md'), 'utf8');
/** The lines that set what the reader fills in: `NOTIF=…` and `KEY=…`. */
const SETTING = /^(NOTIF|KEY)=/;

/** The shell blocks of the section `title`, in order. */
function shellBlocks(title: string): string[] {
  const start = README.indexOf(`\n## ${title}\n`);
  assert.ok(start >= 0, `README.md has a section "${title}"`);
  const end = README.indexOf('\n## ', start + 1);
  const section = README.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!);
}

describe('README: your first notification', () => {
  let server: TestServer;
  let key: string;

  before(async () => {
    server = await new TestServer().start([]);
    const printed = /development API key[^:]*: (\S+)/.exec(server.output());
    assert.ok(printed, server.output());
    key = printed[1]!;
  });
  after(() => server?.dispose());

  it('is within the first 200 lines, and its settings are the address and the key npm start prints', () => {
    const line = README.slice(0, README.indexOf('\n## Your first notification\n')).split('\n').length;
    assert.ok(line < 200, `the section starts on line ${line}`);
    const [settings] = shellBlocks('Your first notification');
    assert.match(settings!, /^NOTIF=http:\/\/127\.0\.0\.1:3030$/m, 'npm start serves on 127.0.0.1:3030');
    assert.match(settings!, /^KEY=/m);
    assert.ok(README.split('\n').length <= 400, 'the README has at most 400 lines');
  });

  it("creates a workflow and a subscriber, triggers it, and the message is in the subscriber's feed", () => {
    const blocks = shellBlocks('Your first notification')
      .map((block) => block.split('\n').filter((line) => !SETTING.test(line)).join('\n').trim())
      .filter((block) => block.length > 0);
    assert.ok(blocks.length >= 4, `workflow, subscriber, trigger, feed: ${blocks.length} blocks`);
    const answers = blocks.map((block) => {
      const output = execFileSync('sh', ['-ec', block], { env: { ...process.env, NOTIF: server.url, KEY: key }, encoding: 'utf8' });
      const answer = JSON.parse(output);
      assert.equal(answer.statusCode, undefined, `${block}\nanswered ${output}`);
      return answer;
    });
    const [workflow, subscriber, triggered, feed] = answers;
    assert.equal(workflow.workflowId, 'order-shipped');
    assert.equal(subscriber.subscriberId, 'margaret');
    assert.equal(triggered.acknowledged, true);
    assert.equal(feed.data.length, 1);
    const [message] = feed.data;
    assert.equal(message.subject, 'Your order A-1042 has shipped');
    // (The text as content blocks, or as one string as Novu's feed items carry it.)
    const body = typeof message.content === 'string' ? message.content : message.content.map((block: { content: string }) => block.content).join('');
    assert.equal(body, 'Hi Margaret, it arrives on Tuesday.');
    assert.equal(message.cta.action.buttons[0].content, 'Track it');
    assert.equal(message.cta.action.buttons[0].url, '/orders/A-1042');
    assert.equal(message.transactionId, triggered.transactionId);
  });
});
