import { expect, fixture, html } from '@open-wc/testing';
import { emulateMedia } from '@web/test-runner-commands';
import { nothing } from 'lit';
import '../../src/index.ts';
import { registerTranslation, type Message, type NotifBell, type NotifFeed, type NotifMessage } from '../../src/index.ts';
import de from '../../src/i18n/de.ts';
import { BellHarness, FeedHarness, animationsDone, waitFor } from './harness.ts';
import { createWorkflow, injectFault, testServer, trigger, uniqueSubscriber } from './server.ts';

// axe (through chai-a11y-axe) on every element in every state, light and dark, left-to-right and
// right-to-left, English and German; and the default palette's contrast, computed from the custom
// properties' defaults. Each `check` is one state; a violation fails the test that found it.

registerTranslation(de);

const checked: string[] = [];
async function check(state: string, el: Element) {
  await animationsDone();
  await expect(el).to.be.accessible();
  checked.push(state);
}

interface Options {
  theme?: 'light' | 'dark' | 'auto';
  dir?: 'ltr' | 'rtl';
  lang?: string;
  fetch?: typeof fetch;
  live?: 'poll';
}

describe('accessibility (axe) in every state', () => {
  let plain: string;
  let cta: string;
  let link: string;

  before(async () => {
    plain = await createWorkflow();
    cta = await createWorkflow({
      inApp: {
        subject: '{{payload.title}}',
        body: 'Join {{payload.project}}?',
        primaryAction: { label: 'Accept', resultContent: 'You joined {{payload.project}}' },
        secondaryAction: { label: 'Decline' },
      } as never,
    });
    link = await createWorkflow({ inApp: { subject: '{{payload.title}}', body: '{{payload.body}}', redirect: { url: '/somewhere' } } as never });
  });

  after(async () => {
    await emulateMedia({ colorScheme: 'light' });
    console.log(`axe: ${checked.length} states checked, 0 violations: ${checked.join('; ')}`);
  });

  /** A subscriber with an unread CTA message, a read one with a link, and an unread plain one. */
  async function subscriberWithMessages(): Promise<string> {
    const sub = await uniqueSubscriber();
    await trigger(link, sub, { title: 'Invoice paid', body: 'Invoice #42 was paid.' });
    await trigger(cta, sub, { title: 'Ada invited you', project: 'Apollo' });
    await trigger(plain, sub, { title: 'Grace replied', body: 'Looks good to me' });
    return sub;
  }

  async function feedFor(sub: string, o: Options = {}): Promise<FeedHarness> {
    const { baseUrl, apiKey } = await testServer();
    const wrap = await fixture<HTMLElement>(html`<div dir=${o.dir ?? 'ltr'} lang=${o.lang ?? 'en'}>
      <notif-feed base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey} theme=${o.theme ?? nothing} live=${o.live ?? nothing} .fetch=${o.fetch}></notif-feed>
    </div>`);
    return new FeedHarness(wrap.querySelector<NotifFeed>('notif-feed')!);
  }

  async function bellFor(sub: string, o: Options = {}): Promise<BellHarness> {
    const { baseUrl, apiKey } = await testServer();
    const wrap = await fixture<HTMLElement>(html`<div dir=${o.dir ?? 'ltr'} lang=${o.lang ?? 'en'}>
      <notif-bell base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey} theme=${o.theme ?? nothing}></notif-bell>
    </div>`);
    return new BellHarness(wrap.querySelector<NotifBell>('notif-bell')!);
  }

  it('<notif-bell>: closed with a count, closed at 0, open with messages, open and empty', async () => {
    const sub = await subscriberWithMessages();
    const bell = await bellFor(sub);
    await waitFor(() => bell.badge === '3', 'badge 3');
    await check('bell closed, 3 unseen', bell.el);

    const empty = await bellFor(await uniqueSubscriber());
    await new Promise((r) => setTimeout(r, 200));
    await check('bell closed, 0 unseen', empty.el);

    const feed = await bell.open();
    await feed.loaded(3);
    await check('bell open, messages', bell.el);

    const emptyFeed = await empty.open();
    await emptyFeed.loaded();
    expect(emptyFeed.empty).to.not.equal(null);
    await check('bell open, empty', empty.el);
  });

  for (const [name, o] of [
    ['dark', { theme: 'dark' }],
    ['right-to-left', { dir: 'rtl' }],
    ['German', { lang: 'de' }],
    ['German, dark, right-to-left', { lang: 'de', theme: 'dark', dir: 'rtl' }],
  ] as [string, Options][]) {
    it(`<notif-bell> and <notif-feed>: ${name}`, async () => {
      const bell = await bellFor(await subscriberWithMessages(), o);
      await (await bell.open()).loaded(3);
      await check(`bell open, ${name}`, bell.el);
      const feed = await feedFor(await subscriberWithMessages(), o);
      await feed.loaded(3);
      await feed.message('Ada invited you').pressButton('Accept');
      await waitFor(() => feed.message('Ada invited you').result, 'CTA done');
      await check(`feed, messages and CTA done, ${name}`, feed.el);
    });
  }

  it('<notif-bell> and <notif-feed>: theme="auto" on a dark system', async () => {
    await emulateMedia({ colorScheme: 'dark' });
    try {
      const feed = await feedFor(await subscriberWithMessages(), { theme: 'auto' });
      await feed.loaded(3);
      expect(getComputedStyle(feed.el).getPropertyValue('--_surface').trim()).to.equal('#16181d');
      await check('feed, theme auto, dark system', feed.el);
      const bell = await bellFor(await subscriberWithMessages(), { theme: 'auto' });
      await (await bell.open()).loaded(3);
      await check('bell open, theme auto, dark system', bell.el);
    } finally {
      await emulateMedia({ colorScheme: 'light' });
    }
  });

  it('follows the system by default (theme unset: auto); theme="light" and "dark" hold whatever the system', async () => {
    const surface = (el: Element) => getComputedStyle(el).getPropertyValue('--_surface').trim();
    const wrap = await fixture<HTMLElement>(html`<div>
      <notif-feed></notif-feed><notif-feed theme="light"></notif-feed><notif-feed theme="dark"></notif-feed><notif-bell></notif-bell>
    </div>`);
    const [unset, light, dark] = [...wrap.querySelectorAll('notif-feed')] as [NotifFeed, NotifFeed, NotifFeed];
    const bell = wrap.querySelector('notif-bell')!;
    await emulateMedia({ colorScheme: 'dark' });
    try {
      expect([surface(unset), surface(bell), surface(light), surface(dark)]).to.deep.equal(['#16181d', '#16181d', '#fff', '#16181d']);
    } finally {
      await emulateMedia({ colorScheme: 'light' });
    }
    expect([surface(unset), surface(bell), surface(light), surface(dark)]).to.deep.equal(['#fff', '#fff', '#fff', '#16181d']);
  });

  it('<notif-feed>: loading, messages, CTA pending and done, unread tab empty', async () => {
    const sub = await subscriberWithMessages();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    // The app's own fetch, held back until the skeleton has been checked.
    const feed = await feedFor(sub, { fetch: (input, init) => gate.then(() => fetch(input, init)) });
    expect(feed.skeleton).to.equal(true);
    await check('feed loading', feed.el);
    release();
    await feed.loaded(3);
    await check('feed, messages, CTA pending', feed.el);
    await feed.message('Ada invited you').pressButton('Accept');
    await waitFor(() => feed.message('Ada invited you').result, 'CTA done');
    await check('feed, CTA done', feed.el);
    await feed.markAllRead();
    await feed.selectTab('Unread');
    await waitFor(() => feed.empty, 'all caught up');
    await check('feed, unread tab empty', feed.el);
  });

  it('<notif-feed>: empty, error, waiting for its configuration', async () => {
    const empty = await feedFor(await uniqueSubscriber());
    await empty.loaded();
    await check('feed empty', empty.el);

    const sub = await uniqueSubscriber();
    await injectFault({ path: `/v1/subscribers/${sub}/notifications/feed`, method: 'GET', status: 500 });
    // Polled: a stream asks for the page again as it opens, which ends an error of one request at once (live.test.ts).
    const failed = await feedFor(sub, { live: 'poll' });
    await waitFor(() => failed.retryButton, 'the error state');
    await check('feed error', failed.el);

    const bare = await fixture<NotifFeed>(html`<notif-feed></notif-feed>`);
    await check('feed waiting for its configuration', bare);
  });

  it('axe does see into the shadow roots: a page palette with poor contrast fails', async () => {
    const feed = await feedFor(await subscriberWithMessages());
    await feed.loaded(3);
    feed.el.parentElement!.style.setProperty('--notif-color-muted', '#c4c4c4');
    await expect(feed.el).not.to.be.accessible();
  });

  it('<notif-message> on its own: unread, read with a link, CTA, controls shown, dark, right-to-left', async () => {
    const m = (fields: Partial<Message>): Message => ({
      _id: 'm' + Math.random(),
      createdAt: new Date(Date.now() - 3_600_000).toISOString(),
      read: false,
      seen: false,
      subject: 'Ada Lovelace replied',
      content: 'Nice work on the analytical engine',
      ...fields,
    });
    const withCta = m({ cta: { type: 'redirect', data: { url: '/x' }, action: { status: 'pending', buttons: [{ type: 'primary', content: 'Accept' }, { type: 'secondary', content: 'Decline' }] } } as never });
    const wrap = await fixture<HTMLElement>(html`<div>
      <notif-message .message=${m({})}></notif-message>
      <notif-message .message=${m({ read: true, cta: { type: 'redirect', data: { url: 'https://example.com/' } } as never })}></notif-message>
      <notif-message .message=${withCta}></notif-message>
      <notif-message theme="dark" .message=${withCta}></notif-message>
      <div dir="rtl"><notif-message .message=${withCta}></notif-message></div>
    </div>`);
    const [unread, read, ctaEl, dark, rtl] = [...wrap.querySelectorAll<NotifMessage>('notif-message')];
    await check('message unread', unread!);
    await check('message read with a link', read!);
    await check('message with CTA buttons', ctaEl!);
    await check('message dark', dark!);
    await check('message right-to-left', rtl!);

    const sub = await subscriberWithMessages();
    const feed = await feedFor(sub);
    await feed.loaded(3);
    const grace = feed.message('Grace replied');
    expect(grace.controlNames).to.deep.equal(['Mark as read', 'Delete']);
    grace.controls[0]!.focus(); // shows the controls (they fade in on hover and focus)
    await check('message controls shown', grace.el);
  });
});

describe('default palette contrast', () => {
  const lum = (hex: string) => {
    const full = hex.length === 4 ? '#' + [...hex.slice(1)].map((c) => c + c).join('') : hex;
    const n = parseInt(full.slice(1), 16);
    return [n >> 16, (n >> 8) & 255, n & 255]
      .map((c) => c / 255)
      .map((c) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4))
      .reduce((sum, c, i) => sum + c * [0.2126, 0.7152, 0.0722][i]!, 0);
  };
  const ratio = (a: string, b: string) => {
    const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x) as [number, number];
    return (hi + 0.05) / (lo + 0.05);
  };

  for (const theme of ['light', 'dark'] as const) {
    it(`meets 4.5:1 for text and 3:1 for indicators, ${theme}`, async () => {
      const el = await fixture<NotifFeed>(html`<notif-feed theme=${theme}></notif-feed>`);
      const style = getComputedStyle(el);
      const v = (name: string) => {
        const value = style.getPropertyValue(`--_${name}`).trim();
        expect(value, `--_${name}`).to.match(/^#[0-9a-f]{3}([0-9a-f]{3})?$/i);
        return value;
      };
      const text: [string, string][] = [
        ['text', 'surface'], ['text', 'surface-raised'], ['text', 'surface-hover'], ['text', 'surface-unread'],
        ['muted', 'surface'], ['muted', 'surface-raised'], ['muted', 'surface-hover'], ['muted', 'surface-unread'],
        ['accent', 'surface'], ['on-accent', 'accent'], ['on-accent', 'accent-hover'], ['on-badge', 'badge'],
        ['danger', 'surface-raised'], ['danger', 'surface-hover'],
      ];
      const indicators: [string, string][] = [['focus-ring', 'surface'], ['focus-ring', 'surface-unread'], ['unread', 'surface-unread'], ['accent', 'surface']];
      const failures = [
        ...text.filter(([fg, bg]) => ratio(v(fg), v(bg)) < 4.5),
        ...indicators.filter(([fg, bg]) => ratio(v(fg), v(bg)) < 3),
      ].map(([fg, bg]) => `${fg} on ${bg}: ${ratio(v(fg), v(bg)).toFixed(2)}`);
      expect(failures).to.deep.equal([]);
      // And the ratio function is honest.
      expect(ratio('#000000', '#ffffff')).to.be.closeTo(21, 0.01);
      expect(ratio('#767676', '#ffffff')).to.be.closeTo(4.54, 0.01);
    });
  }

  it('a page overrides the palette through --notif-* custom properties', async () => {
    const wrap = await fixture<HTMLElement>(html`<div class="branded"><notif-feed></notif-feed></div>`);
    const feed = wrap.querySelector('notif-feed')!;
    wrap.style.setProperty('--notif-color-accent', '#0a7d33');
    expect(getComputedStyle(feed).getPropertyValue('--_accent').trim()).to.equal('#0a7d33');
    expect(getComputedStyle(feed).getPropertyValue('--_text').trim()).to.equal('#1b1f24');
  });

  it('respects prefers-reduced-motion: the skeleton does not pulse (transitions: finish.test.ts)', async () => {
    await emulateMedia({ reducedMotion: 'reduce' });
    try {
      const { baseUrl, apiKey } = await testServer();
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const el = await fixture<NotifFeed>(html`<notif-feed base-url=${baseUrl} subscriber-id=${await uniqueSubscriber()} api-key=${apiKey}
        .fetch=${(input: RequestInfo, init?: RequestInit) => gate.then(() => fetch(input, init))}></notif-feed>`);
      const bone = el.shadowRoot!.querySelector('.bone')!;
      expect(getComputedStyle(bone).animationName).to.equal('none');
      await emulateMedia({ reducedMotion: 'no-preference' });
      expect(getComputedStyle(bone).animationName, 'the skeleton pulses otherwise').to.equal('pulse');
      release();
    } finally {
      await emulateMedia({ reducedMotion: 'no-preference' });
    }
  });
});
