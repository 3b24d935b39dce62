import { expect, fixture, html } from '@open-wc/testing';
import '../../src/index.ts';
import type { Message, NotifFeed, NotifMessage } from '../../src/index.ts';
import { apiKeyNeedsWarning, isLocalHost, safeHref, safeImageSrc } from '../../src/internal/url.ts';
import { FeedHarness, MessageHarness } from './harness.ts';
import { createWorkflow, testServer, trigger, uniqueSubscriber } from './server.ts';

// Message content is untrusted. Hostile fields must execute nothing, produce no unsafe href or src,
// and break no layout: through the real service, and (for what this service already refuses to
// store, such as javascript: URLs) handed straight to <notif-message>, as a foreign server might send.

declare global {
  interface Window {
    __pwned?: unknown;
  }
}

const XSS = [
  '<script>window.__pwned = "script"</script>',
  '<img src=x onerror="window.__pwned = \'img\'">',
  '<svg onload="window.__pwned = \'svg\'"></svg>',
  '"><iframe src="javascript:window.parent.__pwned=\'iframe\'"></iframe>',
  '</style><style>*{display:none !important}</style>',
  '<a href="javascript:window.__pwned=1" onclick="window.__pwned=2">x</a>',
  '{{constructor.constructor("window.__pwned=1")()}}',
].join(' ');

const HOSTILE_URLS = [
  'javascript:window.__pwned="href"',
  'JaVaScRiPt:window.__pwned=1',
  ' \tjava\nscript:window.__pwned=1',
  'data:text/html,<script>window.parent.__pwned=1</script>',
  'data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==',
  'vbscript:msgbox(1)',
  'data:image/svg+xml,<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>',
  'data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+',
  'file:///etc/passwd',
  'blob:https://example.com/x',
];

/** Every href and src inside `root`, through nested shadow roots. */
function urls(root: Element | ShadowRoot): string[] {
  const out: string[] = [];
  const walk = (node: Element | ShadowRoot) => {
    for (const el of node.querySelectorAll('*')) {
      for (const attr of ['href', 'src', 'srcset', 'action', 'formaction', 'xlink:href']) {
        const v = el.getAttribute(attr);
        if (v !== null) out.push(v);
      }
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  };
  walk(root);
  return out;
}

/** Elements that only markup injection could have made. */
function injected(root: Element | ShadowRoot): string[] {
  const out: string[] = [];
  const walk = (node: Element | ShadowRoot) => {
    for (const el of node.querySelectorAll('script, iframe, style:not([data-lit]), object, embed, [onerror], [onload], [onclick]')) {
      out.push(el.localName);
    }
    for (const el of node.querySelectorAll('*')) if (el.shadowRoot) walk(el.shadowRoot);
  };
  walk(root);
  return out;
}

const safe = (u: string) => /^(https?:|\/|\?|#|[a-z0-9._~-]+(\/|$))/i.test(u.trim()) || u.startsWith('data:image/png;base64,');

describe('untrusted message content', () => {
  beforeEach(() => {
    delete window.__pwned;
  });

  it('renders hostile subject, body and action labels from the service as text, with 100 KB of it', async function () {
    this.timeout(20_000);
    const sub = await uniqueSubscriber();
    const wf = await createWorkflow({
      inApp: {
        subject: '{{payload.subject}}',
        body: '{{payload.body}}',
        avatar: '{{payload.avatar}}',
        redirect: { url: '{{payload.url}}' },
        primaryAction: { label: '{{payload.subject}}', resultContent: '{{payload.subject}}' },
      } as never,
    });
    const long = 'A'.repeat(50_000) + ' ' + 'word '.repeat(10_000);
    await trigger(wf, sub, { subject: XSS, body: XSS + long, avatar: HOSTILE_URLS[0], url: HOSTILE_URLS[0] });
    await trigger(wf, sub, { subject: 'Unbroken' + 'W'.repeat(100_000), body: XSS, avatar: HOSTILE_URLS[3], url: HOSTILE_URLS[3] });

    const { baseUrl, apiKey } = await testServer();
    const container = await fixture<HTMLDivElement>(html`<div id="box" class="box"></div>`);
    container.setAttribute('data-width', '360');
    container.ariaLabel = 'box';
    // A fixed-width container (CSS from a stylesheet, not a style attribute).
    const sheet = new CSSStyleSheet();
    sheet.replaceSync('#box { inline-size: 360px; }');
    document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
    const feedEl = document.createElement('notif-feed') as NotifFeed;
    feedEl.setAttribute('base-url', baseUrl);
    feedEl.setAttribute('subscriber-id', sub);
    feedEl.setAttribute('api-key', apiKey);
    container.append(feedEl);
    const feed = new FeedHarness(feedEl);
    await feed.loaded(2);
    await new Promise((r) => setTimeout(r, 300)); // any injected handler would have run by now

    expect(window.__pwned).to.equal(undefined);
    expect(injected(feedEl)).to.deep.equal([]);
    expect(urls(feedEl).filter((u) => !safe(u))).to.deep.equal([]);
    const [second, first] = feed.messages;
    expect(first!.subject).to.equal(XSS);
    expect(first!.body.startsWith(XSS)).to.equal(true);
    expect(second!.body).to.equal(XSS);
    expect(first!.buttons[0]!.textContent!.trim()).to.equal(XSS.slice(0, 200).trim());
    // Layout: nothing wider than the container, on the page either.
    expect(feedEl.getBoundingClientRect().width).to.be.at.most(360);
    for (const m of feed.messages) expect(m.el.getBoundingClientRect().width).to.be.at.most(360);
    expect(document.documentElement.scrollWidth).to.be.at.most(window.innerWidth);
    // The message is clamped, not 100 KB tall.
    expect(first!.el.getBoundingClientRect().height).to.be.below(300);
    expect(second!.el.getBoundingClientRect().height).to.be.below(300);
    // The CSS injection attempt changed nothing: the feed is still displayed.
    expect(getComputedStyle(feedEl).display).not.to.equal('none');
    document.adoptedStyleSheets = document.adoptedStyleSheets.filter((s) => s !== sheet);
  });

  it('gives hostile URLs sent by a foreign server no href and no src', async () => {
    for (const url of HOSTILE_URLS) {
      const message: Message = {
        _id: 'm1',
        createdAt: new Date().toISOString(),
        read: false,
        seen: false,
        subject: 'Click me',
        content: [{ type: 'text', content: 'hello' }, { type: 'button', content: '<b>not text</b>' }],
        avatar: url,
        cta: { type: 'redirect', data: { url } },
      };
      const el = await fixture<NotifMessage>(html`<notif-message .message=${message}></notif-message>`);
      const m = new MessageHarness(el);
      expect(m.link.localName, url).to.equal('button');
      expect(m.link.hasAttribute('href'), url).to.equal(false);
      expect(m.avatar!.localName, url).to.equal('span');
      expect(urls(el), url).to.deep.equal([]);
      expect(m.body, 'text blocks only').to.equal('hello');
      let detailUrl: string | null | undefined;
      el.addEventListener('notif-message-click', (e) => (detailUrl = e.detail.url), { once: true });
      m.click();
      expect(detailUrl, url).to.equal(null);
    }
    expect(window.__pwned).to.equal(undefined);
  });

  it("shows safe avatars and falls back to the actor's initials when the image fails", async () => {
    const png = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
    const base: Message = { _id: 'm2', createdAt: new Date().toISOString(), read: true, seen: true, subject: 'She invited you', payload: { actor: { name: 'Grace Hopper' } } };
    const ok = await fixture<NotifMessage>(html`<notif-message .message=${{ ...base, avatar: png }}></notif-message>`);
    expect(new MessageHarness(ok).avatar!.getAttribute('src')).to.equal(png);

    const broken = await fixture<NotifMessage>(
      html`<notif-message .message=${{ ...base, avatar: 'http://127.0.0.1:1/nope.png' }}></notif-message>`,
    );
    const h = new MessageHarness(broken);
    expect(h.avatar!.localName).to.equal('img');
    const { waitFor } = await import('./harness.ts');
    await waitFor(() => h.avatar!.localName === 'span', 'initials after the image fails');
    expect(h.avatar!.textContent).to.equal('GH');
  });

  it('decides URLs with safeHref and safeImageSrc', () => {
    for (const url of HOSTILE_URLS) {
      expect(safeHref(url), url).to.equal(null);
      expect(safeImageSrc(url), url).to.equal(null);
    }
    expect(safeHref('https://example.com/a?b#c')).to.equal('https://example.com/a?b#c');
    expect(safeHref('http://example.com')).to.equal('http://example.com/');
    expect(safeHref('/projects/1')).to.equal('/projects/1');
    expect(safeHref('?tab=2')).to.equal('?tab=2');
    expect(safeHref('#x')).to.equal('#x');
    expect(safeHref(42)).to.equal(null);
    expect(safeHref('')).to.equal(null);
    expect(safeImageSrc('https://cdn.example.com/a.png')).to.equal('https://cdn.example.com/a.png');
    expect(safeImageSrc('data:image/webp;base64,UklGRg==')).to.equal('data:image/webp;base64,UklGRg==');
    expect(safeImageSrc('data:image/png,notbase64<svg>')).to.equal(null);
  });

  it('warns about an api-key only on hosts other than localhost', () => {
    for (const host of ['localhost', '127.0.0.1', '[::1]', 'app.localhost', 'LOCALHOST']) {
      expect(isLocalHost(host), host).to.equal(true);
      expect(apiKeyNeedsWarning(host, 'nk_secret'), host).to.equal(false);
    }
    for (const host of ['example.com', 'localhost.example.com', '10.0.0.1', '127.0.0.1.nip.io']) {
      expect(apiKeyNeedsWarning(host, 'nk_secret'), host).to.equal(true);
    }
    expect(apiKeyNeedsWarning('example.com', undefined)).to.equal(false);
    expect(apiKeyNeedsWarning('example.com', '')).to.equal(false);
  });
});
