import { expect, fixture, fixtureCleanup, html, oneEvent } from '@open-wc/testing';
import sinon from 'sinon';
import '../../src/index.ts';
import '../../src/components/notif-preferences/notif-preferences.ts';
import { registerTranslation, type NotifBell, type NotifFeed, type NotifPreferences } from '../../src/index.ts';
import { CONFIGURATION_WAIT } from '../../src/internal/inbox-element.ts';
import de from '../../src/i18n/de.ts';
import { BellHarness, FeedHarness, animationsDone, pretendVisible, waitFor } from './harness.ts';
import { testServer, uniqueSubscriber } from './server.ts';

// Configuration that comes late (an app sets the attributes once the user signed in) shows the
// loading state; configuration that never comes, or a service that refuses the inbox (a wrong key:
// 401), is the developer's to read (a console warning and notif-error) and, for people, "unavailable".

registerTranslation(de);

/** Text a person must never read in these states (a developer's message, or a false hint). */
const DEVELOPER_TEXT = /not configured|base-url|subscriber-id|Access was refused|Sign in again|connection/i;

describe('configuration: late, missing or refused', () => {
  let restoreVisibility: () => void;
  let clock: sinon.SinonFakeTimers | undefined;
  let warn: sinon.SinonSpy;

  before(() => {
    restoreVisibility = pretendVisible();
  });
  after(() => restoreVisibility());
  beforeEach(() => {
    warn = sinon.spy(console, 'warn');
  });
  afterEach(async () => {
    warn.restore();
    clock?.restore();
    clock = undefined;
    fixtureCleanup();
    await new Promise((r) => setTimeout(r, 0));
  });

  /** The text of the element's shadow root (and its inner elements' ones). */
  const textOf = (el: Element): string => {
    const root = el.shadowRoot!;
    return root.textContent + [...root.querySelectorAll('*')].map((child) => (child.shadowRoot ? textOf(child) : '')).join('');
  };

  it('<notif-feed> configured after load: the loading state until then, no error, then its inbox', async () => {
    const el = await fixture<NotifFeed>(html`<notif-feed></notif-feed>`);
    const feed = new FeedHarness(el);
    expect(feed.skeleton, 'loading').to.equal(true);
    expect(feed.error).to.equal(null);
    expect(textOf(el)).not.to.match(DEVELOPER_TEXT);
    await expect(el).to.be.accessible();
    const { baseUrl, apiKey } = await testServer();
    el.setAttribute('base-url', baseUrl);
    await el.updateComplete;
    expect(feed.skeleton, 'half configured: still loading').to.equal(true);
    el.setAttribute('api-key', apiKey);
    el.setAttribute('subscriber-id', await uniqueSubscriber());
    await waitFor(() => feed.empty, 'the empty inbox');
    expect(feed.error).to.equal(null);
    expect(warn.called, 'nothing to warn about').to.equal(false);
  });

  it('<notif-feed> never configured: after the wait, a warning and notif-error for the developer, "unavailable" for people', async () => {
    clock = sinon.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const el = await fixture<NotifFeed>(html`<notif-feed subscriber-id="ada"></notif-feed>`);
    const feed = new FeedHarness(el);
    clock.tick(CONFIGURATION_WAIT - 1);
    await el.updateComplete;
    expect(feed.skeleton, 'still waiting').to.equal(true);
    const failed = oneEvent(el, 'notif-error');
    clock.tick(1);
    const { detail } = await failed;
    expect(detail.action).to.equal('configure');
    expect(detail.error.message).to.contain('base-url');
    expect(warn.calledWithMatch('notif-inbox:', sinon.match(/base-url and subscriber-id/))).to.equal(true);
    await el.updateComplete;
    expect(feed.error!.textContent).to.contain('Notifications are unavailable right now');
    expect(feed.error!.getAttribute('role')).to.equal('alert');
    expect(textOf(el)).not.to.match(DEVELOPER_TEXT);
    clock.restore();
    clock = undefined;
    await expect(el).to.be.accessible();
    // Configured at last: its inbox.
    const { baseUrl, apiKey } = await testServer();
    el.setAttribute('api-key', apiKey);
    el.setAttribute('subscriber-id', await uniqueSubscriber());
    el.setAttribute('base-url', baseUrl);
    await waitFor(() => feed.empty, 'the empty inbox');
    expect(feed.error).to.equal(null);
  });

  it('<notif-feed> with a wrong key (401): a warning and notif-error, "unavailable" in English and German, right-to-left too', async () => {
    const { baseUrl } = await testServer();
    const sub = await uniqueSubscriber();
    const wrap = await fixture<HTMLElement>(html`<div></div>`);
    const failed = oneEvent(wrap, 'notif-error');
    wrap.innerHTML = `<notif-feed base-url="${baseUrl}" subscriber-id="${sub}" api-key="wrong-key"></notif-feed>`;
    const el = wrap.querySelector<NotifFeed>('notif-feed')!;
    const feed = new FeedHarness(el);
    const { detail } = await failed;
    expect((detail.error as Error & { status?: number }).status).to.equal(401);
    expect(warn.calledWith('notif-inbox:')).to.equal(true);
    await waitFor(() => feed.error, 'the error state');
    expect(feed.error!.textContent).to.contain('Notifications are unavailable right now');
    expect(textOf(el)).not.to.match(DEVELOPER_TEXT);
    await expect(el).to.be.accessible();

    const german = await fixture<HTMLElement>(html`<div lang="de" dir="rtl"></div>`);
    german.innerHTML = `<notif-feed base-url="${baseUrl}" subscriber-id="${sub}" api-key="wrong-key" theme="dark"></notif-feed>`;
    const deFeed = new FeedHarness(german.querySelector<NotifFeed>('notif-feed')!);
    await waitFor(() => deFeed.error, 'the error state');
    expect(deFeed.error!.textContent).to.contain('Benachrichtigungen sind gerade nicht verfügbar');
    await expect(deFeed.el).to.be.accessible();
  });

  it('<notif-bell> configured after load: its popover shows the loading state, then the inbox', async () => {
    const el = await fixture<NotifBell>(html`<notif-bell></notif-bell>`);
    const bell = new BellHarness(el);
    const feed = await bell.open();
    await feed.el.updateComplete;
    expect(feed.skeleton, 'loading in the popover').to.equal(true);
    expect(textOf(el)).not.to.match(DEVELOPER_TEXT);
    await animationsDone();
    await expect(el).to.be.accessible();
    const { baseUrl, apiKey } = await testServer();
    Object.assign(el, { baseUrl, apiKey, subscriberId: await uniqueSubscriber() });
    await waitFor(() => feed.empty, 'the empty inbox');
    expect(warn.called).to.equal(false);
  });

  it('<notif-bell> never configured: its popover\'s feed says "unavailable" too', async () => {
    clock = sinon.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const el = await fixture<NotifBell>(html`<notif-bell lang="de"></notif-bell>`);
    const bell = new BellHarness(el);
    const failed = oneEvent(el, 'notif-error');
    clock.tick(CONFIGURATION_WAIT);
    expect((await failed).detail.action).to.equal('configure');
    clock.restore();
    clock = undefined;
    const feed = await bell.open();
    await waitFor(() => feed.error, 'the error state');
    expect(feed.error!.textContent).to.contain('Benachrichtigungen sind gerade nicht verfügbar');
    expect(feed.retryButton, 'nothing to retry').to.equal(null);
  });

  it('<notif-preferences>: loading until configured; never configured, or refused, "unavailable"', async () => {
    clock = sinon.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const el = await fixture<NotifPreferences>(html`<notif-preferences></notif-preferences>`);
    expect(el.shadowRoot!.querySelector('.bone'), 'loading').to.not.equal(null);
    expect(el.shadowRoot!.querySelector('[part~="error"]')).to.equal(null);
    const failed = oneEvent(el, 'notif-error');
    clock.tick(CONFIGURATION_WAIT);
    await failed;
    await el.updateComplete;
    expect(el.shadowRoot!.querySelector('[part~="error"]')!.textContent).to.contain('Notifications are unavailable right now');
    expect(textOf(el)).not.to.match(DEVELOPER_TEXT);
    clock.restore();
    clock = undefined;

    const { baseUrl } = await testServer();
    const refused = await fixture<NotifPreferences>(html`<notif-preferences base-url=${baseUrl} subscriber-id=${await uniqueSubscriber()} api-key="wrong-key"></notif-preferences>`);
    const error = await waitFor(() => refused.shadowRoot!.querySelector('[part~="error"]'), 'the error state');
    expect(error.textContent).to.contain('Notifications are unavailable right now');
    expect(textOf(refused)).not.to.match(DEVELOPER_TEXT);
    await expect(refused).to.be.accessible();
  });
});
