import { expect, fixture, html } from '@open-wc/testing';
import { setViewport } from '@web/test-runner-commands';
import '../../src/index.ts';
import type { NotifBell, NotifFeed } from '../../src/index.ts';
import { BellHarness, FeedHarness, animationsDone, waitFor } from './harness.ts';
import { createWorkflow, testServer, trigger, uniqueSubscriber } from './server.ts';

// dir="rtl" mirrors the layout with no extra CSS (logical properties throughout). The same feed is
// laid out left-to-right and right-to-left at the same width; every piece's distance from the row's
// inline start in one equals its distance from the other side in the other.

const box = (el: Element) => el.getBoundingClientRect();
/** Distance of `el` from the start edge of `frame`: the left edge in ltr, the right edge in rtl. */
const fromStart = (el: Element, frame: Element, dir: string) => (dir === 'ltr' ? box(el).left - box(frame).left : box(frame).right - box(el).right);
const fromEnd = (el: Element, frame: Element, dir: string) => (dir === 'ltr' ? box(frame).right - box(el).right : box(el).left - box(frame).left);

describe('right-to-left', () => {
  let workflowId: string;
  before(async () => {
    await setViewport({ width: 1000, height: 800 });
    workflowId = await createWorkflow({
      inApp: { subject: '{{payload.title}}', body: '{{payload.body}}', primaryAction: { label: 'Accept' }, secondaryAction: { label: 'Decline' } } as never,
    });
  });

  it('mirrors the feed: header, tabs, avatar, unread dot, subject, time and buttons', async () => {
    const sub = await uniqueSubscriber();
    await trigger(workflowId, sub, { title: 'Ada invited you to Apollo', body: 'Join the project?' });
    const { baseUrl, apiKey } = await testServer();
    const wrap = await fixture<HTMLElement>(html`<div>
      <div dir="ltr" style="inline-size: 380px"><notif-feed base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey}></notif-feed></div>
      <div dir="rtl" style="inline-size: 380px"><notif-feed base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey}></notif-feed></div>
    </div>`);
    const [ltr, rtl] = [...wrap.querySelectorAll<NotifFeed>('notif-feed')].map((el) => new FeedHarness(el)) as [FeedHarness, FeedHarness];
    await ltr.loaded(1);
    await rtl.loaded(1);
    await animationsDone();

    const pieces = (feed: FeedHarness) => {
      const m = feed.messages[0]!;
      return {
        base: feed.root.querySelector('[part~="base"]')!,
        markAll: feed.markAllButton,
        tabAll: feed.tabs[0]!,
        tabUnread: feed.tabs[1]!,
        row: m.root.querySelector('[part~="row"]')!,
        avatar: m.avatar!,
        dot: m.root.querySelector('[part~="unread-dot"]')!,
        subject: m.root.querySelector('[part~="subject"]')!,
        time: m.root.querySelector('[part~="time"]')!,
        primary: m.buttons[0]!,
        secondary: m.buttons[1]!,
      };
    };
    const l = pieces(ltr);
    const r = pieces(rtl);
    // Not a trivially symmetric layout: the avatar really is on the left in ltr and on the right in rtl.
    expect(box(l.avatar).left - box(l.row).left).to.be.lessThan(box(l.row).width / 4);
    expect(box(r.row).right - box(r.avatar).right).to.be.lessThan(box(r.row).width / 4);
    expect(box(r.avatar).left).to.be.greaterThan(box(r.row).left + box(r.row).width / 2);

    const measures = (p: typeof l, dir: string) => ({
      'mark all from the end': fromEnd(p.markAll, p.base, dir),
      'tab All from the start': fromStart(p.tabAll, p.base, dir),
      'tab Unread from the start': fromStart(p.tabUnread, p.base, dir),
      'avatar from the start': fromStart(p.avatar, p.row, dir),
      'unread dot from the start': fromStart(p.dot, p.row, dir),
      'subject from the start': fromStart(p.subject, p.row, dir),
      'time from the end': fromEnd(p.time, p.row, dir),
      'primary button from the start': fromStart(p.primary, p.row, dir),
      'secondary button from the start': fromStart(p.secondary, p.row, dir),
    });
    const a = measures(l, 'ltr');
    const b = measures(r, 'rtl');
    for (const key of Object.keys(a) as (keyof typeof a)[]) expect(b[key], key).to.be.closeTo(a[key], 1.5);
    expect(box(r.primary).left, 'primary before secondary in reading order').to.be.greaterThan(box(r.secondary).left);
  });

  it("mirrors the bell: the badge over the icon's inline-end corner, the popover opening toward the inline start", async () => {
    const sub = await uniqueSubscriber();
    await trigger(workflowId, sub, { title: 'Hello', body: 'x' });
    const { baseUrl, apiKey } = await testServer();
    const bells: BellHarness[] = [];
    for (const dir of ['ltr', 'rtl']) {
      const wrap = await fixture<HTMLElement>(html`<div dir=${dir} style="display: flex; justify-content: center; padding-block: 1rem">
        <notif-bell base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey}></notif-bell>
      </div>`);
      bells.push(new BellHarness(wrap.querySelector<NotifBell>('notif-bell')!));
    }
    const [ltr, rtl] = bells as [BellHarness, BellHarness];
    await waitFor(() => ltr.badge === '1' && rtl.badge === '1', 'badges');
    await animationsDone();
    const badge = (b: BellHarness) => b.root.querySelector('[part~="badge"]')!;
    expect(box(badge(ltr)).left, 'ltr: badge on the right half').to.be.greaterThan(box(ltr.button).left + box(ltr.button).width / 2 - 1);
    expect(fromStart(badge(rtl), rtl.button, 'rtl')).to.be.closeTo(fromStart(badge(ltr), ltr.button, 'ltr'), 1);
    expect(box(badge(rtl)).top).to.be.closeTo(box(badge(ltr)).top - box(ltr.button).top + box(rtl.button).top, 1);

    for (const [bell, dir] of [[ltr, 'ltr'], [rtl, 'rtl']] as const) {
      await bell.open();
      await animationsDone();
      const pop = box(bell.popover);
      const button = box(bell.button);
      expect(pop.top, `${dir}: below the bell`).to.be.at.least(button.bottom);
      // Aligned with the bell's inline-end edge, extending toward the inline start.
      if (dir === 'ltr') expect(pop.right).to.be.closeTo(button.right, 1.5);
      else expect(pop.left).to.be.closeTo(button.left, 1.5);
      await bell.pressEscape();
    }
  });
});
