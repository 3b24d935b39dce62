import { expect, fixture, fixtureCleanup, html, oneEvent } from '@open-wc/testing';
import '../../src/index.ts';
import '../../src/components/notif-preferences/notif-preferences.ts';
import { registerTranslation } from '../../src/index.ts';
import german from '../../src/i18n/de.ts';
import type { NotifBell, NotifPreferences } from '../../src/index.ts';
import { BellHarness, animationsDone, waitFor } from './harness.ts';
import { api, createWorkflow, injectFault, testServer, trigger, uniqueId, uniqueSubscriber } from './server.ts';

// <notif-preferences> against the real service: its switches change what the engine delivers.

/** The switch labelled `label` in the workflow named `workflow` (or the global one). */
function switchOf(el: NotifPreferences, workflow: string | null, label: string): HTMLInputElement {
  const root = el.shadowRoot!;
  const scope = workflow === null ? root.querySelector('[part~="global"]') : [...root.querySelectorAll('fieldset')].find((f) => f.querySelector('legend')!.textContent!.startsWith(workflow));
  const row = [...(scope?.querySelectorAll('label') ?? [])].find((l) => l.querySelector('span')!.textContent!.startsWith(label));
  if (!row) throw new Error(`no switch ${label} of ${workflow}`);
  return row.querySelector('input')!;
}

const loaded = (el: NotifPreferences) => waitFor(() => el.shadowRoot!.querySelector('[part~="list"]'), 'the preferences');

describe('<notif-preferences>', () => {
  let workflowName: string;
  let workflowId: string;
  let criticalName: string;
  /** A workflow that delivers in-app and by email: a switch per channel. */
  let digestName: string;
  let digestId: string;

  before(async () => {
    workflowName = uniqueId('Orders');
    workflowId = await createWorkflow({ name: workflowName });
    digestName = uniqueId('Digest');
    digestId = await createWorkflow({
      name: digestName,
      steps: [
        { name: 'in-app', type: 'in_app', controlValues: { subject: '{{payload.title}}', body: 'b' } },
        { name: 'email', type: 'email', controlValues: { subject: '{{payload.title}}', body: 'b' } },
      ],
    });
    criticalName = uniqueId('Security');
    await (await api()).createWorkflow({
      workflowId: uniqueId('wf'),
      name: criticalName,
      critical: true,
      steps: [{ name: 'in-app', type: 'in_app', controlValues: { subject: 's', body: 'b' } }],
    } as never);
  });
  afterEach(async () => {
    fixtureCleanup();
    await new Promise((r) => setTimeout(r, 0));
  });

  async function prefsFor(subscriberId: string, attrs = html``) {
    const { baseUrl, apiKey } = await testServer();
    const el = await fixture<NotifPreferences>(html`<notif-preferences base-url=${baseUrl} subscriber-id=${subscriberId} api-key=${apiKey}>${attrs}</notif-preferences>`);
    await loaded(el);
    return el;
  }

  /** The switches in the workflow named `workflow`. */
  const switchesOf = (el: NotifPreferences, workflow: string) =>
    [...el.shadowRoot!.querySelectorAll('fieldset')].find((f) => f.querySelector('legend')!.textContent!.startsWith(workflow))!.querySelectorAll('input');

  it('a workflow with one channel has one switch: off, nothing delivered; on, delivered; critical ones locked', async () => {
    const sub = await uniqueSubscriber();
    const el = await prefsFor(sub);
    const own = switchOf(el, workflowName, workflowName);
    expect(switchesOf(el, workflowName), 'no second switch saying the same').to.have.length(1);
    expect(own.checked).to.equal(true);
    expect(own.getAttribute('role')).to.equal('switch');
    expect(switchesOf(el, criticalName), 'critical: no switch of its own').to.have.length(0);
    expect(el.shadowRoot!.querySelector('[part~="locked"]')!.textContent).to.contain('Always on');
    await expect(el).to.be.accessible();

    own.click();
    expect(own.checked).to.equal(false);
    const workflowOnServer = async () => (await (await api()).preferences(sub)).workflows.find((w) => w.workflow.identifier === workflowId)!;
    await waitFor(async () => (await workflowOnServer()).enabled === false, 'the server has it');
    await trigger(workflowId, sub, { title: 'muted' });
    expect((await (await api()).feed(sub)).data, 'no in-app message').to.have.length(0);

    own.click();
    await waitFor(async () => {
      const { enabled, channels } = await workflowOnServer();
      return enabled && channels.in_app;
    }, 'on again');
    await trigger(workflowId, sub, { title: 'back' });
    expect((await (await api()).feed(sub)).data.map((m) => m.subject)).to.deep.equal(['back']);
  });

  it('a workflow with several channels has a switch per channel under its own: in-app off, no in-app message', async () => {
    const sub = await uniqueSubscriber();
    const el = await prefsFor(sub);
    expect(switchesOf(el, digestName), 'its own, In-app, Email').to.have.length(3);
    const inApp = switchOf(el, digestName, 'In-app');
    expect(switchOf(el, digestName, 'Email').checked).to.equal(true);
    inApp.click();
    expect(inApp.checked).to.equal(false);
    await waitFor(async () => (await (await api()).preferences(sub)).workflows.find((w) => w.workflow.identifier === digestId)?.channels.in_app === false, 'the server has it');
    await trigger(digestId, sub, { title: 'muted' });
    expect((await (await api()).feed(sub)).data, 'no in-app message').to.have.length(0);
    expect(switchOf(el, digestName, digestName).checked, 'the workflow itself stays on').to.equal(true);
  });

  it('the global switch says what critical notifications are', async () => {
    const sub = await uniqueSubscriber();
    const el = await prefsFor(sub);
    expect(el.shadowRoot!.querySelector('[part~="global"] small')!.textContent).to.equal('Turned off, only critical notifications reach you: those marked “Always on”, which you cannot turn off.');
  });

  it('the global switch disables the workflows\' switches and mutes delivery', async () => {
    const sub = await uniqueSubscriber();
    const el = await prefsFor(sub);
    const all = switchOf(el, null, 'All notifications');
    all.click();
    await el.updateComplete;
    expect(switchOf(el, workflowName, workflowName).matches(':disabled')).to.equal(true);
    expect(switchOf(el, digestName, 'In-app').matches(':disabled')).to.equal(true);
    await waitFor(async () => (await (await api()).preferences(sub)).global.enabled === false, 'global off on the server');
    await trigger(workflowId, sub);
    expect((await (await api()).feed(sub)).data).to.have.length(0);
  });

  it('a refused change is undone, with notif-error', async () => {
    const sub = await uniqueSubscriber();
    const el = await prefsFor(sub);
    await injectFault({ path: `/subscribers/${sub}/preferences/`, method: 'PATCH', status: 500 });
    const own = switchOf(el, workflowName, workflowName);
    const failed = oneEvent(el, 'notif-error');
    own.click();
    expect(own.checked).to.equal(false);
    const e = await failed;
    expect(e.detail.action).to.equal('preferences');
    await el.updateComplete;
    expect(switchOf(el, workflowName, workflowName).checked, 'rolled back').to.equal(true);
    const onServer = (await (await api()).preferences(sub)).workflows.find((w) => w.workflow.identifier === workflowId)!;
    expect([onServer.enabled, onServer.channels.in_app]).to.deep.equal([true, true]);
  });

  it('a refused load (403) says notifications are unavailable, not to check the connection', async () => {
    const sub = await uniqueSubscriber();
    await injectFault({ path: `/subscribers/${sub}/preferences`, method: 'GET', status: 403, times: 1 });
    const { baseUrl, apiKey } = await testServer();
    const el = await fixture<NotifPreferences>(html`<notif-preferences base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey}></notif-preferences>`);
    await waitFor(() => el.shadowRoot!.querySelector('[part~="retry-button"]'), 'the retry button');
    const text = el.shadowRoot!.querySelector('[part~="error"]')!.textContent!;
    expect(text).to.contain('Notifications are unavailable right now');
    expect(text).not.to.contain('connection');
  });

  it('an error state with a retry when loading fails; German, dark and right-to-left pass axe', async () => {
    const sub = await uniqueSubscriber();
    await injectFault({ path: `/subscribers/${sub}/preferences`, method: 'GET', status: 503, times: 2 });
    const { baseUrl, apiKey } = await testServer();
    const el = await fixture<NotifPreferences>(html`<notif-preferences base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey}></notif-preferences>`);
    const retry = await waitFor(() => el.shadowRoot!.querySelector<HTMLButtonElement>('[part~="retry-button"]'), 'the retry button');
    // People read the translated hint, not the server's own words (those are in the console and the event).
    const text = el.shadowRoot!.querySelector('[part~="error"]')!.textContent!;
    expect(text).to.contain('Check your connection and try again.');
    expect(text).not.to.contain('injected');
    await expect(el).to.be.accessible();
    retry.click();
    await loaded(el);
    registerTranslation(german);
    const wrap = await fixture<HTMLElement>(html`<div dir="rtl" lang="de"><notif-preferences theme="dark" base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey}></notif-preferences></div>`);
    const de = wrap.querySelector('notif-preferences')!;
    await loaded(de);
    expect(switchOf(de, null, 'Alle Benachrichtigungen')).to.exist;
    await expect(de).to.be.accessible();
  });

  it('its strings are the shared translation\'s: registerTranslation translates them, the rest falls back to English', async () => {
    const sub = await uniqueSubscriber();
    const el = await prefsFor(sub, html``);
    el.locale = 'fr';
    await el.updateComplete;
    expect(switchOf(el, null, 'All notifications'), 'no French registered: English').to.exist;
    registerTranslation({ $code: 'fr', allNotifications: 'Toutes les notifications', channels: { in_app: 'Dans l\'app', email: 'E-mail', sms: 'SMS', chat: 'Chat', push: 'Push' } } as never);
    await el.updateComplete;
    expect(switchOf(el, null, 'Toutes les notifications'), 'registered: re-rendered in French').to.exist;
    expect(switchOf(el, digestName, 'Dans l\'app')).to.exist;
    expect(el.shadowRoot!.querySelector('[part~="global"] small')!.textContent, 'a string it left out: English').to.equal('Turned off, only critical notifications reach you: those marked “Always on”, which you cannot turn off.');
  });

  it('a workflow turned off elsewhere shows its channels off and disabled; its own switch turns it back on and delivery resumes', async () => {
    const sub = await uniqueSubscriber();
    const { baseUrl, apiKey } = await testServer();
    const patch = (path: string, body: unknown) =>
      fetch(`${baseUrl}/v1/subscribers/${sub}/preferences${path}`, { method: 'PATCH', headers: { authorization: `ApiKey ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect((await patch(`/${digestId}`, { enabled: false })).status).to.equal(200);
    const el = await prefsFor(sub);
    const inApp = switchOf(el, digestName, 'In-app');
    expect(inApp.checked, 'what the engine does: nothing').to.equal(false);
    expect(inApp.matches(':disabled')).to.equal(true);
    const own = switchOf(el, digestName, digestName);
    expect(own.checked).to.equal(false);
    expect(own.matches(':disabled'), 'the workflow\'s switch stays usable').to.equal(false);
    expect(own.closest('label')!.textContent).to.contain('Off: none of these reach you.');
    await expect(el).to.be.accessible();
    await trigger(digestId, sub, { title: 'muted' });
    expect((await (await api()).feed(sub)).data).to.have.length(0);

    own.click();
    await el.updateComplete;
    expect(switchOf(el, digestName, 'In-app').checked).to.equal(true);
    expect(switchOf(el, digestName, 'In-app').matches(':disabled')).to.equal(false);
    await waitFor(async () => (await (await api()).preferences(sub)).workflows.find((w) => w.workflow.identifier === digestId)?.enabled, 'on again on the server');
    await trigger(digestId, sub, { title: 'back' });
    expect((await (await api()).feed(sub)).data.map((m) => m.subject)).to.deep.equal(['back']);

    // A channel turned off for every workflow: off, disabled, and said so, in each workflow.
    expect((await patch('', { channels: { in_app: false } })).status).to.equal(200);
    const again = await prefsFor(sub);
    const muted = switchOf(again, digestName, 'In-app');
    expect([muted.checked, muted.disabled]).to.deep.equal([false, true]);
    expect(muted.closest('label')!.textContent).to.contain('Off for every workflow.');
    expect(switchOf(again, digestName, digestName).checked, 'the workflow itself is on').to.equal(true);
  });

  it('<notif-bell>: the gear shows the preferences, back shows the messages', async () => {
    const sub = await uniqueSubscriber();
    const { baseUrl, apiKey } = await testServer();
    const el = await fixture<NotifBell>(html`<notif-bell base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey}></notif-bell>`);
    const bell = new BellHarness(el);
    await bell.open();
    const gear = el.shadowRoot!.querySelector<HTMLButtonElement>('[part~="preferences-button"]')!;
    expect(gear.getAttribute('aria-label')).to.equal('Notification preferences');
    gear.click();
    const prefs = await waitFor(() => el.shadowRoot!.querySelector<NotifPreferences>('notif-preferences'), 'the preferences view');
    await loaded(prefs);
    // The view fills the popover's width (it once shrank to its content: the popover is a flex row).
    const popover = el.shadowRoot!.querySelector<HTMLElement>('[popover]')!;
    expect(prefs.getBoundingClientRect().width).to.be.closeTo(popover.clientWidth, 1);
    const back = el.shadowRoot!.querySelector<HTMLButtonElement>('[part~="back-button"]')!;
    expect(el.shadowRoot!.activeElement).to.equal(back);
    await animationsDone();
    await expect(el).to.be.accessible();
    back.click();
    await waitFor(() => el.shadowRoot!.querySelector('notif-feed'), 'the feed again');
    await el.updateComplete;
    expect(el.shadowRoot!.activeElement).to.equal(el.shadowRoot!.querySelector('[part~="preferences-button"]'));
  });
});
