import { expect, fixture, fixtureCleanup, html } from '@open-wc/testing';
import '../../src/index.ts';
import '../../src/components/notif-preferences/notif-preferences.ts';
import { registerTranslation, type NotifBell, type NotifFeed, type NotifPreferences } from '../../src/index.ts';
import de from '../../src/i18n/de.ts';
import { BellHarness, FeedHarness, animationsDone, pretendVisible, waitFor } from './harness.ts';
import { api, testServer, uniqueId } from './server.ts';

// A subscriber the service has not seen yet (every sign-up's first visit). With an API key the
// service answers 404 for it; the elements show an empty inbox and the default preferences, never
// an error. (Through the proxy, which makes the subscriber on first contact: proxy.test.ts.)

registerTranslation(de);

describe('a subscriber the service has not seen yet, with an API key', () => {
  let restoreVisibility: () => void;
  let errors: Event[];
  const heard = (event: Event) => errors.push(event);

  before(() => {
    restoreVisibility = pretendVisible();
  });
  after(() => restoreVisibility());
  beforeEach(() => {
    errors = [];
    document.addEventListener('notif-error', heard);
  });
  afterEach(async () => {
    document.removeEventListener('notif-error', heard);
    fixtureCleanup();
    await new Promise((r) => setTimeout(r, 0));
  });

  /** An id the service has never seen (the test checks it answers 404 for it). */
  async function unknownSubscriber(): Promise<string> {
    const subscriberId = uniqueId('newcomer');
    const { baseUrl, apiKey } = await testServer();
    const answer = await fetch(`${baseUrl}/v1/subscribers/${subscriberId}/notifications/feed`, { headers: { authorization: `ApiKey ${apiKey}` } });
    expect(answer.status, 'the service does not know it').to.equal(404);
    return subscriberId;
  }

  it('<notif-bell>: no badge, and its feed says "No notifications yet", with no error and no notif-error', async () => {
    const sub = await unknownSubscriber();
    const { baseUrl, apiKey } = await testServer();
    const el = await fixture<NotifBell>(html`<notif-bell base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey}></notif-bell>`);
    const bell = new BellHarness(el);
    const feed = await bell.open();
    await waitFor(() => feed.empty, 'the empty state');
    expect(feed.empty!.textContent).to.contain('No notifications yet');
    expect(feed.error).to.equal(null);
    expect(bell.badge).to.equal(null);
    // The unseen count (404 too) has been asked for and answered by now: the badge's label says none.
    expect(bell.label).to.equal('Notifications');
    expect(errors, 'no notif-error').to.have.length(0);
    await animationsDone();
    await expect(el).to.be.accessible();
  });

  it('<notif-feed> in German: "Noch keine Benachrichtigungen"', async () => {
    const sub = await unknownSubscriber();
    const { baseUrl, apiKey } = await testServer();
    const el = await fixture<NotifFeed>(html`<notif-feed lang="de" base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey}></notif-feed>`);
    const feed = new FeedHarness(el);
    await waitFor(() => feed.empty, 'the empty state');
    expect(feed.empty!.textContent).to.contain('Noch keine Benachrichtigungen');
    expect(feed.error).to.equal(null);
    expect(errors).to.have.length(0);
  });

  it('<notif-preferences>: the defaults (everything on), with no error and no notif-error', async () => {
    const sub = await unknownSubscriber();
    const { baseUrl, apiKey } = await testServer();
    const el = await fixture<NotifPreferences>(html`<notif-preferences base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey}></notif-preferences>`);
    const global = await waitFor(() => el.shadowRoot!.querySelector<HTMLInputElement>('[part~="global"] input'), 'the global switch');
    expect(global.checked).to.equal(true);
    expect(el.shadowRoot!.querySelector('[part~="error"]')).to.equal(null);
    expect(errors).to.have.length(0);
    await expect(el).to.be.accessible();
  });

  it('once the service knows it (created, then a message), the bell shows the message', async () => {
    const sub = await unknownSubscriber();
    const { baseUrl, apiKey } = await testServer();
    const el = await fixture<NotifBell>(html`<notif-bell base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey} poll-interval="1000"></notif-bell>`);
    const bell = new BellHarness(el);
    await waitFor(() => bell.label, 'the bell');
    const client = await api();
    await client.createSubscriber({ subscriberId: sub });
    const workflowId = uniqueId('welcome');
    await client.createWorkflow({ workflowId, name: 'Welcome', steps: [{ name: 'in-app', type: 'in_app', controlValues: { subject: 'Welcome aboard', body: 'Hello' } }] });
    await client.trigger({ name: workflowId, to: sub, payload: {} });
    await waitFor(() => bell.badge === '1', 'the badge', 8000);
    const feed = await bell.open();
    await feed.loaded(1);
    expect(feed.subjects).to.deep.equal(['Welcome aboard']);
    expect(errors).to.have.length(0);
  });
});
