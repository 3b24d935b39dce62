import { expect, fixture, fixtureCleanup, html, oneEvent } from '@open-wc/testing';
import '../../src/components/notif-preferences/notif-preferences.ts';
import type { NotifPreferences } from '../../src/index.ts';
import { waitFor } from './harness.ts';
import { createWorkflow, testServer, uniqueSubscriber } from './server.ts';

// <notif-preferences> does not trust the answer's shape: a malformed one (here from an app's
// `fetch` that mangles it, as a misbehaving proxy would) is the error state with a retry and a
// notif-error, never a blank element or an exception in rendering.

describe('<notif-preferences> and a malformed answer', () => {
  before(() => createWorkflow());
  afterEach(() => fixtureCleanup());

  for (const [what, mangle] of [
    ['global null', (p: any) => ({ ...p, global: null })],
    ['a workflow\'s channels null', (p: any) => ({ ...p, workflows: p.workflows.map((w: any) => ({ ...w, channels: null })) })],
    ['no workflows', (p: any) => ({ global: p.global })],
  ] as const) {
    it(`${what}: an error with a retry, and notif-error`, async () => {
      const sub = await uniqueSubscriber();
      const { baseUrl, apiKey } = await testServer();
      let broken = true;
      const mangling = async (u: RequestInfo | URL, i?: RequestInit) => {
        const res = await fetch(u, i);
        if (!broken || i?.method !== 'GET' || !res.ok) return res;
        return new Response(JSON.stringify(mangle(await res.json())), { status: 200, headers: { 'content-type': 'application/json' } });
      };
      const el = document.createElement('notif-preferences') as NotifPreferences;
      Object.assign(el, { baseUrl, subscriberId: sub, apiKey, fetch: mangling });
      const failed = oneEvent(el, 'notif-error');
      await fixture(html`<div>${el}</div>`);
      expect((await failed).detail.action).to.equal('preferences');
      const retry = await waitFor(() => el.shadowRoot!.querySelector<HTMLButtonElement>('[part~="retry-button"]'), 'the retry button');
      broken = false;
      retry.click();
      await waitFor(() => el.shadowRoot!.querySelector('[part~="list"]'), 'the preferences after a retry');
    });
  }
});
