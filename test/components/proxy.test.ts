import { expect, fixture, html } from '@open-wc/testing';
import '../../src/index.ts';
import type { NotifBell } from '../../src/index.ts';
import { BellHarness, pretendVisible, waitFor } from './harness.ts';
import { api, createWorkflow, subscriberHash, testServer, triggerMany, uniqueId, uniqueSubscriber } from './server.ts';

// The production path: the page holds no API key. <notif-bell> talks to the proxy on its own origin
// (server/src/proxy.ts, mounted by web-test-runner.config.mjs at /notif) with a subscriber hash.

/** A bell on `subscriberId` through the proxy, with the hash of `hashOf` and no key. */
async function proxiedBell(subscriberId: string, hashOf: string) {
  const { proxyPath } = await testServer();
  const el = await fixture<NotifBell>(html`<notif-bell
    base-url=${proxyPath}
    subscriber-id=${subscriberId}
    subscriber-hash=${await subscriberHash(hashOf)}
  ></notif-bell>`);
  return { el, bell: new BellHarness(el) };
}

describe('through the proxy, without a key in the page', () => {
  let workflowId: string;
  let restoreVisibility: () => void;

  before(async () => {
    restoreVisibility = pretendVisible();
    workflowId = await createWorkflow();
  });
  after(() => restoreVisibility());

  for (const [title, prefix] of [
    ['shows the count, opens the feed and marks everything seen on the server', ''],
    ['does so for a subscriber id outside Latin-1, with a space, % and @ too (a header carries bytes)', 'Zoë 用户 100%+a@b-'],
  ])
    it(title, async () => {
      const sub = prefix + uniqueId('sub');
      const client = await api();
      await client.createSubscriber({ subscriberId: sub });
      await triggerMany(workflowId, sub, 3);
      const { el, bell } = await proxiedBell(sub, sub);
      await waitFor(() => bell.badge === '3', 'badge 3 through the proxy');
      expect(el.outerHTML).not.to.contain('api-key');
      await bell.open();
      await waitFor(() => bell.feed.messages.length === 3, 'three messages through the proxy');
      await waitFor(async () => (await client.unseenCount(sub)).count === 0, 'seen on the server');
      await waitFor(() => bell.badge === null, 'badge cleared');
    });

  it("shows an error, not another subscriber's data, when the hash is not the subscriber's", async () => {
    const mine = await uniqueSubscriber();
    const theirs = await uniqueSubscriber();
    await triggerMany(workflowId, theirs, 2);
    const { bell } = await proxiedBell(theirs, mine);
    await new Promise((r) => setTimeout(r, 500));
    expect(bell.badge).to.equal(null);
    await bell.open();
    await waitFor(() => bell.feed.messages.length === 0 && !!bell.feed.root.querySelector('[part~="error"]'), 'an error state');
  });
});
