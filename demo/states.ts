// The playground's "every state" page: each state of the elements side by side, on real data of the
// local service (`npm start`), and live controls for the theme's custom properties.
//
// At page load it makes (idempotently: counts first, then tops up, with idempotency keys) one
// subscriber per state through the service's development API: state-empty, state-three,
// state-many (500), state-long, state-cta, state-read, whose messages the demo environment's own
// workflows make (the page adds no workflow). Loading is a request that never answers
// (an app-supplied `fetch` that holds it), error is the real service refusing an unknown key (401).
import '../src/index.ts';
import '../src/components/notif-preferences/notif-preferences.ts';
import type { MessageRenderer, NotifBell, NotifFeed, NotifPreferences } from '../src/index.ts';
import { LIGHT_PALETTE } from '../src/internal/theme.styles.ts';

interface PlaygroundConfig {
  apiUrl: string;
  apiKey: string | null;
}

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const status = $<HTMLOutputElement>('setup-status');

// ---------------------------------------------------------------- data on the local service

let config: PlaygroundConfig;

async function api<T>(method: string, path: string, body?: unknown, idempotencyKey?: string): Promise<T> {
  const headers: Record<string, string> = { authorization: `ApiKey ${config.apiKey}`, 'content-type': 'application/json' };
  if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(`${config.apiUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    // 409: the same key is still running (another tab preparing the same state): try again.
    if (res.status === 409 && attempt < 20) {
      await new Promise((r) => setTimeout(r, 250));
      continue;
    }
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }
}

const LONG_WORD = 'Pneumonoultramicroscopicsilicovolcanoconiosis'.repeat(3);
const LONG_BODY =
  'This message is much longer than a notification should be, so that designers can see how the ' +
  'subject clamps, how the body wraps, and how an unbroken word behaves: ' +
  LONG_WORD +
  '. ' +
  'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. '.repeat(4);

type Trigger = { workflow: string; payload: Record<string, unknown> };

// The seeded workflows (server/src/seed.ts): the page adds none of its own, so every subscriber's
// preferences list the same workflows as the playground's form.
const note = (subject: string, body: string, n: number): Trigger => ({ workflow: 'announcement', payload: { subject, body, url: `/announcements/${n}` } });
const invite = (name: string, avatar: string, project: string, n: number): Trigger => ({
  workflow: 'project-invite',
  payload: { actor: { name, avatar }, project, projectId: n, role: 'editor' },
});

/** What each state's subscriber holds, oldest first; the subscriber's name (first, last) says which state it shows. */
const STATES: Record<string, { name: [string, string]; messages: (n: number) => Trigger[] }> = {
  empty: { name: ['Noor', '(empty inbox)'], messages: () => [] },
  three: {
    name: ['Mary', '(three messages)'],
    messages: () => [
      note('Your export is ready', 'projects.csv (2 MB) can be downloaded for 7 days.', 1),
      invite('Grace Hopper', '/avatars/grace.svg', 'Analytical Engine', 2),
      {
        workflow: 'comment-reply',
        payload: { actor: { name: 'Ada Lovelace', avatar: '/avatars/ada.svg' }, post: 'Notes on the Engine', postId: 3, commentId: 3, excerpt: 'Great point about loops!' },
      },
    ],
  },
  many: {
    name: ['Lee', '(five hundred)'],
    messages: (n) => Array.from({ length: n }, (_, i) => note(`Message ${i + 1} of 500`, 'One of many, to scroll through.', i + 1)),
  },
  long: {
    name: ['Kim', '(long text)'],
    messages: () => [
      note('A short one beside it', 'For comparison.', 1),
      note(`A subject that goes on and on about ${LONG_WORD} until it no longer fits on two lines of the feed`, LONG_BODY, 2),
    ],
  },
  cta: {
    name: ['Sam', '(call to action)'],
    messages: () => [
      invite('Alan Turing', '', 'Bombe', 1), // acted upon (done)
      invite('Grace Hopper', '/avatars/grace.svg', 'COBOL', 2), // pending
    ],
  },
  read: {
    name: ['Ravi', '(read and unread)'],
    messages: () => ['Older, read', 'Old, read', 'Recent, unread', 'Newest, unread'].map((subject, i) => note(subject, 'Read state from the service.', i + 1)),
  },
};

const COUNTS: Record<string, number> = { empty: 0, three: 3, many: 500, long: 2, cta: 2, read: 4 };

interface FeedPage {
  data: { _id: string; read: boolean; cta?: { action?: { status?: string } } }[];
  totalCount: number;
}

const subscriberOf = (state: string) => `state-${state}`;

/** Makes the state's subscriber and tops its messages up to the expected count. */
async function prepare(state: string): Promise<void> {
  const spec = STATES[state]!;
  const subscriberId = subscriberOf(state);
  const [firstName, lastName] = spec.name;
  await api('POST', '/v2/subscribers', { subscriberId, firstName, lastName });
  const feed = (q = '') => api<FeedPage>('GET', `/v1/subscribers/${subscriberId}/notifications/feed?limit=100${q}`);
  const have = (await feed()).totalCount;
  const wanted = spec.messages(COUNTS[state]!);
  // Keys name the state and what it held, so two tabs preparing it at once make each message once
  // (the prefix is not the one of the page's earlier versions, whose triggers had other bodies).
  const missing = wanted.slice(have);
  // Creation order is the feed's order: one after another (triggered side by side, "Message 7 of 500"
  // could land after "Message 9 of 500"). The 500 take a few seconds, once per database.
  for (const [i, t] of missing.entries()) {
    await api('POST', '/v1/events/trigger', { name: t.workflow, to: subscriberId, payload: t.payload }, `states:${state}:${have}:${i}`);
  }
  if (state === 'cta' || state === 'read') {
    const messages = (await feed()).data; // newest first
    if (state === 'cta') {
      const oldest = messages[messages.length - 1];
      if (oldest && oldest.cta?.action?.status !== 'done') {
        await api('POST', `/v1/subscribers/${subscriberId}/messages/${oldest._id}/actions/primary`, { status: 'done' });
      }
    } else {
      const older = messages.slice(2).map((m) => m._id);
      const newer = messages.slice(0, 2).map((m) => m._id);
      if (older.length) await api('POST', `/v1/subscribers/${subscriberId}/messages/mark-as`, { messageId: older, markAs: 'read' });
      if (newer.length) await api('POST', `/v1/subscribers/${subscriberId}/messages/mark-as`, { messageId: newer, markAs: 'unread' });
    }
  }
}

/** A fetch that never answers: the store waits on its first page forever (the loading state). */
const heldFetch: typeof fetch = () => new Promise<Response>(() => undefined);

/**
 * The custom-render state: announcements in the app's own markup (plain DOM, text only), any other
 * message left to the built-in row (`false`). The page's CSS (states.css) styles them. A database the
 * page prepared before it used the seeded workflows holds the same notes as 'playground-note'.
 */
const APP_NOTES = new Set(['announcement', 'playground-note']);
const renderNote: MessageRenderer = (host, message, actions) => {
  if (!APP_NOTES.has(message.templateIdentifier ?? '')) return false;
  const card = document.createElement('article');
  card.className = 'app-note';
  const title = document.createElement('strong');
  title.textContent = message.subject ?? '';
  const toggle = document.createElement('button');
  toggle.type = 'button';
  toggle.textContent = message.read ? 'Mark unread' : 'Mark read';
  toggle.addEventListener('click', () => void (message.read ? actions.markUnread() : actions.markRead()));
  card.append(title, toggle);
  host.append(card);
};

function connect(el: NotifFeed | NotifBell | NotifPreferences, state: string) {
  el.baseUrl = config.apiUrl;
  if (state === 'loading') {
    el.subscriberId = 'state-loading';
    el.fetch = heldFetch;
  } else if (state === 'error') {
    el.subscriberId = 'state-error';
    el.apiKey = 'not-a-key-of-this-service';
  } else {
    el.subscriberId = subscriberOf(state);
    el.apiKey = config.apiKey ?? undefined;
  }
}

async function setUpStates() {
  config = (await (await fetch('/demo-config.json')).json()) as PlaygroundConfig;
  // The states that need no data show at once.
  for (const card of document.querySelectorAll<HTMLElement>('.state-card[data-state="loading"], .state-card[data-state="error"]')) {
    connect(card.querySelector('notif-feed')!, card.dataset.state!);
  }
  if (!config.apiKey) {
    status.textContent = 'No development key: start the service with npm start on a new database.';
    return;
  }
  const states = Object.keys(STATES);
  const started = performance.now();
  await Promise.all(states.map((s) => prepare(s)));
  for (const card of document.querySelectorAll<HTMLElement>('.state-card[data-state]')) {
    const state = card.dataset.state!;
    if (state === 'loading' || state === 'error') continue;
    if (state === 'bells') {
      for (const bell of card.querySelectorAll<NotifBell>('notif-bell')) connect(bell, bell.dataset.for!);
    } else if (card.dataset.show === 'preferences') {
      connect(card.querySelector('notif-preferences')!, state);
    } else {
      const feed = card.querySelector('notif-feed')!;
      if (card.dataset.show === 'custom') feed.renderMessage = renderNote;
      connect(feed, state);
    }
  }
  status.textContent = `Ready (${states.length} subscribers on ${config.apiUrl}, ${Math.round(performance.now() - started)} ms).`;
  document.documentElement.dataset.statesReady = 'true';
}

// ---------------------------------------------------------------- theme controls

/**
 * The theming API and its defaults: the palette (`--notif-color-*` and `--notif-shadow`, built from
 * data in theme.styles.ts), then every literal `var(--notif-x, default)` of the elements' styles.
 */
function themeProperties(): Map<string, string> {
  const { colours, shadow } = LIGHT_PALETTE;
  const found = new Map<string, string>(Object.entries(colours).map(([name, colour]) => [`--notif-color-${name}`, colour]));
  found.set('--notif-shadow', shadow);
  const sources = import.meta.glob('../src/**/*.styles.ts', { query: '?raw', import: 'default', eager: true }) as Record<string, string>;
  const ordered = Object.entries(sources).sort(([a], [b]) => (a.includes('theme.styles') ? -1 : b.includes('theme.styles') ? 1 : a.localeCompare(b)));
  for (const [, source] of ordered) {
    for (const m of source.matchAll(/var\(\s*(--notif-[a-z0-9-]+)\s*,\s*((?:[^()]|\((?:[^()]|\([^()]*\))*\))+?)\s*\)/g)) {
      if (!found.has(m[1]!)) found.set(m[1]!, m[2]!.trim());
    }
  }
  return found;
}

const HEX = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i;
const expandHex = (v: string) => (v.length === 4 ? `#${[...v.slice(1)].map((c) => c + c).join('')}` : v).toLowerCase();

function setUpTheme() {
  const defaults = themeProperties();
  const form = $<HTMLFormElement>('theme-controls');
  const snippet = $('theme-snippet');
  const values = new Map<string, string>();
  // A constructed stylesheet (no inline styles): the page's overrides, inherited into the shadow roots.
  const sheet = new CSSStyleSheet();
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];

  const apply = () => {
    const decls = [...values].filter(([, v]) => v.trim() !== '').map(([k, v]) => `  ${k}: ${v};`);
    sheet.replaceSync(decls.length ? `#stage {\n${decls.join('\n')}\n}` : '');
    snippet.textContent = decls.length
      ? `/* notif-inbox theme: put it in your page's CSS. */\n:root {\n${decls.join('\n')}\n}`
      : '/* Change a value on the left: the CSS to copy appears here. */';
  };

  for (const [name, value] of defaults) {
    const row = document.createElement('label');
    row.className = 'theme-control';
    const caption = document.createElement('code');
    caption.textContent = name;
    const text = document.createElement('input');
    text.type = 'text';
    text.name = name;
    text.placeholder = value;
    text.setAttribute('aria-label', `${name} (default ${value})`);
    text.addEventListener('input', () => {
      values.set(name, text.value);
      if (color && HEX.test(text.value.trim())) color.value = expandHex(text.value.trim());
      apply();
    });
    let color: HTMLInputElement | null = null;
    if (HEX.test(value)) {
      const wrap = document.createElement('span');
      wrap.className = 'color';
      color = document.createElement('input');
      color.type = 'color';
      color.value = expandHex(value);
      color.setAttribute('aria-label', `${name} colour`);
      const picker = color;
      picker.addEventListener('input', () => {
        text.value = picker.value;
        values.set(name, picker.value);
        apply();
      });
      wrap.append(color, text);
      row.append(caption, wrap);
    } else row.append(caption, text);
    form.append(row);
  }

  $('theme-reset').addEventListener('click', () => {
    values.clear();
    form.reset();
    for (const input of form.querySelectorAll<HTMLInputElement>('input[type="color"]')) {
      const name = input.getAttribute('aria-label')!.replace(/ colour$/, '');
      input.value = expandHex(defaults.get(name)!);
    }
    apply();
  });
  $('theme-copy').addEventListener('click', async () => {
    const out = $<HTMLOutputElement>('theme-copied');
    try {
      await navigator.clipboard.writeText(snippet.textContent ?? '');
      out.textContent = 'Copied.';
    } catch {
      // No clipboard permission (an insecure origin): select the text for Ctrl+C.
      getSelection()?.selectAllChildren(snippet);
      out.textContent = 'Selected: press Ctrl+C.';
    }
  });
  apply();
}

setUpTheme();
setUpStates().catch((e: Error) => {
  status.textContent = `Could not prepare the states: ${e.message}`;
});
