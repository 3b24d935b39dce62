import { expect, fixture, fixtureCleanup, html, oneEvent } from '@open-wc/testing';
import '../../src/index.ts';
import '../../src/components/notif-preferences/notif-preferences.ts';
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

  before(async () => {
    workflowName = uniqueId('Orders');
    workflowId = await createWorkflow({ name: workflowName });
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

  it('turns a workflow\'s in-app channel off (nothing delivered) and on again (delivered); critical ones locked', async () => {
    const sub = await uniqueSubscriber();
    const el = await prefsFor(sub);
    const inApp = switchOf(el, workflowName, 'In-app');
    expect(inApp.checked).to.equal(true);
    expect(inApp.getAttribute('role')).to.equal('switch');
    const locked = switchOf(el, criticalName, 'In-app');
    expect(locked.checked).to.equal(true);
    expect(locked.matches(':disabled'), 'critical: locked').to.equal(true);
    expect(el.shadowRoot!.querySelector('[part~="locked"]')!.textContent).to.contain('Always on');
    await expect(el).to.be.accessible();

    inApp.click();
    expect(inApp.checked).to.equal(false);
    await waitFor(async () => {
      const p = await (await api()).preferences(sub);
      return p.workflows.find((w) => w.workflow.identifier === workflowId)?.channels.in_app === false;
    }, 'the server has it');
    await trigger(workflowId, sub, { title: 'muted' });
    expect((await (await api()).feed(sub)).data, 'no in-app message').to.have.length(0);

    inApp.click();
    await waitFor(async () => (await (await api()).preferences(sub)).workflows.find((w) => w.workflow.identifier === workflowId)?.channels.in_app, 'on again');
    await trigger(workflowId, sub, { title: 'back' });
    expect((await (await api()).feed(sub)).data.map((m) => m.subject)).to.deep.equal(['back']);
  });

  it('the global switch disables the workflows\' switches and mutes delivery', async () => {
    const sub = await uniqueSubscriber();
    const el = await prefsFor(sub);
    const all = switchOf(el, null, 'All notifications');
    all.click();
    await el.updateComplete;
    expect(switchOf(el, workflowName, 'In-app').matches(':disabled')).to.equal(true);
    await waitFor(async () => (await (await api()).preferences(sub)).global.enabled === false, 'global off on the server');
    await trigger(workflowId, sub);
    expect((await (await api()).feed(sub)).data).to.have.length(0);
  });

  it('a refused change is undone, with notif-error', async () => {
    const sub = await uniqueSubscriber();
    const el = await prefsFor(sub);
    await injectFault({ path: `/subscribers/${sub}/preferences/`, method: 'PATCH', status: 500 });
    const inApp = switchOf(el, workflowName, 'In-app');
    const failed = oneEvent(el, 'notif-error');
    inApp.click();
    expect(inApp.checked).to.equal(false);
    const e = await failed;
    expect(e.detail.action).to.equal('preferences');
    await el.updateComplete;
    expect(switchOf(el, workflowName, 'In-app').checked, 'rolled back').to.equal(true);
    expect((await (await api()).preferences(sub)).workflows.find((w) => w.workflow.identifier === workflowId)!.channels.in_app).to.equal(true);
  });

  it('an error state with a retry when loading fails; German, dark and right-to-left pass axe', async () => {
    const sub = await uniqueSubscriber();
    await injectFault({ path: `/subscribers/${sub}/preferences`, method: 'GET', status: 503, times: 2 });
    const { baseUrl, apiKey } = await testServer();
    const el = await fixture<NotifPreferences>(html`<notif-preferences base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey}></notif-preferences>`);
    const retry = await waitFor(() => el.shadowRoot!.querySelector<HTMLButtonElement>('[part~="retry-button"]'), 'the retry button');
    await expect(el).to.be.accessible();
    retry.click();
    await loaded(el);
    const wrap = await fixture<HTMLElement>(html`<div dir="rtl" lang="de"><notif-preferences theme="dark" base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey}></notif-preferences></div>`);
    const de = wrap.querySelector('notif-preferences')!;
    await loaded(de);
    expect(switchOf(de, null, 'Alle Benachrichtigungen')).to.exist;
    await expect(de).to.be.accessible();
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
