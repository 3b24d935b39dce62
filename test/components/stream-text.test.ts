import { expect, fixture, html } from '@open-wc/testing';
import '../../src/index.ts';
import type { NotifBell } from '../../src/index.ts';
import { BellHarness, pretendVisible, LIVE_WAIT, waitFor } from './harness.ts';
import { api, createWorkflow, testServer, trigger, uniqueSubscriber } from './server.ts';

// The store's reading of the stream's text: lines end only at CR/LF (U+2028 inside a message is
// text), and an event it cannot read is taken as `refetch`, so neither makes it reconnect. The
// service escapes U+2028 itself, so the stream's text passes through the element's `fetch` to be
// read as a server that does not escape it would send it.

const NO_POLL = 600_000;

describe('the stream text', () => {
  let workflowId: string;
  let restoreVisibility: () => void;
  before(async () => {
    restoreVisibility = pretendVisible();
    workflowId = await createWorkflow();
  });
  after(() => restoreVisibility());

  /** A fetch that writes down every URL it is asked for in `requests` and passes the stream's text through `transform`. */
  const editingFetch =
    (requests: string[], transform: TransformerTransformCallback<string, string>) => async (u: RequestInfo | URL, i?: RequestInit) => {
      requests.push(String(u));
      const res = await fetch(u, i);
      if (!String(u).includes('/notifications/stream') || !res.ok) return res;
      const body = res.body!.pipeThrough(new TextDecoderStream()).pipeThrough(new TransformStream({ transform })).pipeThrough(new TextEncoderStream());
      return new Response(body, { status: res.status, headers: res.headers });
    };

  /** A bell whose stream's text goes through `edit`; its feed open. */
  async function bellWith(edit: (text: string) => string) {
    const sub = await uniqueSubscriber();
    const { baseUrl, apiKey } = await testServer();
    const requests: string[] = [];
    const fetchEdited = editingFetch(requests, (chunk, out) => out.enqueue(edit(chunk)));
    const el = await fixture<NotifBell>(html`<notif-bell base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey} poll-interval=${NO_POLL} no-auto-seen
      .fetch=${fetchEdited}></notif-bell>`);
    const bell = new BellHarness(el);
    await bell.open();
    await bell.feed.loaded(0);
    // Listening on the service's side (a message made before would be counted, not told).
    const { _id } = await (await api()).getSubscriber(sub);
    await waitFor(async () => (await (await fetch(`${baseUrl}/__streams`)).json()).bySubscriber[_id] === 1, 'the stream to open');
    return { sub, bell, streams: () => requests.filter((u) => u.includes('/notifications/stream')).length };
  }

  it('a message holding U+2028 and U+2029 reaches the open feed, on the one stream', async () => {
    const { sub, bell, streams } = await bellWith((text) => text.replace(/\\u2028/g, '\u2028').replace(/\\u2029/g, '\u2029'));
    const title = 'Line\u2028retry: 0\u2029end';
    await trigger(workflowId, sub, { title, body: 'b' });
    await waitFor(() => bell.feed.messages[0]?.subject === title, 'the message in the feed', LIVE_WAIT);
    await trigger(workflowId, sub, { title: 'Next', body: 'b' });
    await waitFor(() => bell.feed.messages[0]?.subject === 'Next', 'the next message by the stream', LIVE_WAIT);
    await new Promise((r) => setTimeout(r, 1500));
    expect(streams(), 'stream requests').to.equal(1);
    expect(bell.badge).to.equal('2');
  });

  it('an event it cannot read is a refetch: the feed gets the message, the stream stays', async () => {
    const { sub, bell, streams } = await bellWith((text) => text.replace('"subject":"Broken', '"subject":Broken'));
    await trigger(workflowId, sub, { title: 'Broken one', body: 'b' });
    await waitFor(() => bell.feed.messages[0]?.subject === 'Broken one', 'the message, by a refetch', LIVE_WAIT);
    await trigger(workflowId, sub, { title: 'After', body: 'b' });
    await waitFor(() => bell.feed.messages[0]?.subject === 'After', 'the next message by the stream', LIVE_WAIT);
    await new Promise((r) => setTimeout(r, 1500));
    expect(streams(), 'stream requests').to.equal(1);
  });
  it('a retry: under 500 ms does not make each stream that ends at once a storm of requests', async () => {
    // A server (or something between) that says `retry: 1` and ends each stream after its first
    // event: each stream worked (it sent data), so the backoff starts again every time, and the
    // reconnect waits only for the retry. Each drop also asks for a count.
    const sub = await uniqueSubscriber();
    const { baseUrl, apiKey } = await testServer();
    const requests: string[] = [];
    const cutShort = editingFetch(requests, (chunk, out) => {
      out.enqueue(chunk.replace(/^retry: \d+/m, 'retry: 1'));
      if (chunk.includes('data:')) out.terminate();
    });
    await trigger(workflowId, sub, { title: 'One', body: 'b' }); // known to the service: it has a stream
    const el = await fixture<NotifBell>(html`<notif-bell base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey} poll-interval=${NO_POLL} .fetch=${cutShort}></notif-bell>`);
    const bell = new BellHarness(el);
    await waitFor(() => bell.badge === '1', 'the count');
    const streams = () => requests.filter((u) => u.includes('/notifications/stream')).length;
    await waitFor(() => streams() >= 2, 'the stream asked for again', LIVE_WAIT);
    const from = requests.length;
    await new Promise((r) => setTimeout(r, 2000));
    el.remove();
    expect(requests.length - from, 'requests in 2 s').to.be.at.most(20);
  });
});
