// The playground: a bell and a full-page feed for one of the seeded subscribers, and a form that
// triggers the seeded workflows on the local service with its development key (localhost only).
import '../src/index.ts';
import { getInboxStore, type NotifBell, type NotifFeed } from '../src/index.ts';

interface PlaygroundConfig {
  apiUrl: string;
  apiKey: string | null;
  subscribers: { subscriberId: string; name: string; email: string | null; avatar: string | null }[];
  workflows: { workflowId: string; name: string; description: string; variables: string[] }[];
}

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const bell = $<NotifBell>('bell');
const feed = $<NotifFeed>('feed');
const subscriberSelect = $<HTMLSelectElement>('subscriber');
const workflowSelect = $<HTMLSelectElement>('workflow');
const recipientSelect = $<HTMLSelectElement>('recipient');
const variables = $<HTMLFieldSetElement>('variables');
const form = $<HTMLFormElement>('send-form');
const status = $<HTMLOutputElement>('send-status');
const sendButton = $<HTMLButtonElement>('send');
const themeButton = $<HTMLButtonElement>('theme');
const copyButton = $<HTMLButtonElement>('copy-snippet');
/** How long "Copied" shows on the copy button before it says "Copy" again (ms). */
const COPIED_FOR = 2000;

const SAMPLES: Record<string, () => string> = {
  name: () => pickOther()?.name ?? 'Grace Hopper',
  avatar: () => '',
  project: () => 'Analytical Engine',
  role: () => 'editor',
  post: () => 'Notes on the Engine',
  excerpt: () => 'Great point about loops!',
  invoice: () => `INV-${2000 + Math.floor(Math.random() * 900)}`,
  amount: () => `$${(19 + Math.random() * 180).toFixed(2)}`,
  subject: () => 'Dark mode is here',
  body: () => 'Switch it on in Settings, under Appearance.',
  url: () => '/changelog',
};

let config: PlaygroundConfig;

function option(value: string, label: string): HTMLOptionElement {
  const o = document.createElement('option');
  o.value = value;
  o.textContent = label;
  return o;
}

function pickOther() {
  return config.subscribers.find((s) => s.subscriberId !== recipientSelect.value);
}

function sample(path: string): string {
  const leaf = path.split('.').pop() ?? path;
  if (/id$/i.test(leaf)) return String(100 + Math.floor(Math.random() * 900));
  if (leaf === 'avatar') return pickOther()?.avatar ?? '';
  return SAMPLES[leaf]?.() ?? '';
}

function renderVariables() {
  const workflow = config.workflows.find((w) => w.workflowId === workflowSelect.value);
  $('workflow-description').textContent = workflow?.description ?? '';
  for (const el of [...variables.querySelectorAll('.field')]) el.remove();
  for (const path of workflow?.variables ?? []) {
    const label = document.createElement('label');
    label.className = 'field';
    const caption = document.createElement('span');
    const code = document.createElement('code');
    code.textContent = `payload.${path}`;
    caption.append(code);
    const input = document.createElement('input');
    input.name = path;
    input.value = sample(path);
    label.append(caption, input);
    variables.append(label);
  }
  variables.hidden = !workflow?.variables.length;
}

/** Turns {'actor.name': 'x'} into {actor: {name: 'x'}}. */
function payloadFromForm(): Record<string, unknown> {
  const payload: Record<string, unknown> = {};
  for (const input of variables.querySelectorAll('input')) {
    if (input.value === '') continue;
    const keys = input.name.split('.');
    let node = payload;
    for (const key of keys.slice(0, -1)) node = (node[key] ??= {}) as Record<string, unknown>;
    node[keys[keys.length - 1]!] = /^\d+$/.test(input.value) ? Number(input.value) : input.value;
  }
  return payload;
}

function showSubscriber(subscriberId: string) {
  for (const el of [bell, feed]) {
    el.baseUrl = config.apiUrl;
    el.apiKey = config.apiKey ?? undefined;
    el.subscriberId = subscriberId;
  }
  recipientSelect.value = subscriberId;
  // The picker may be narrower than the name (a phone): the whole name on hover.
  subscriberSelect.title = subscriberSelect.selectedOptions[0]?.textContent ?? '';
  // The service's own development key (printed by `npm start`): the snippet works as it is, on this machine.
  $('snippet').textContent =
    `<script type="module" src="notif-inbox.min.js"></script>\n` +
    `<notif-bell base-url="${config.apiUrl}"\n            subscriber-id="${subscriberId}"\n            api-key="${config.apiKey ?? ''}"></notif-bell>`;
  const url = new URL(location.href);
  url.searchParams.set('subscriber', subscriberId);
  history.replaceState(null, '', url);
}

/** Copies the embed snippet; the button says so for a moment. */
async function copySnippet() {
  try {
    await navigator.clipboard.writeText($('snippet').textContent ?? '');
    copyButton.textContent = 'Copied';
  } catch {
    // No clipboard (the page is not allowed it): the snippet selected, for the keyboard's copy.
    getSelection()?.selectAllChildren($('snippet'));
    copyButton.textContent = 'Selected: press Ctrl+C';
  }
  setTimeout(() => {
    copyButton.textContent = 'Copy';
  }, COPIED_FOR);
}

function storeOf(subscriberId: string) {
  return getInboxStore({ baseUrl: config.apiUrl, subscriberId, ...(config.apiKey ? { apiKey: config.apiKey } : {}), pollInterval: 3000 });
}

async function send(event: SubmitEvent) {
  event.preventDefault();
  const to = recipientSelect.value;
  sendButton.disabled = true;
  status.textContent = 'Sending…';
  try {
    const res = await fetch(`${config.apiUrl}/v1/events/trigger`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `ApiKey ${config.apiKey}` },
      body: JSON.stringify({ name: workflowSelect.value, to, payload: payloadFromForm() }),
    });
    const body = (await res.json().catch(() => ({}))) as { message?: string; transactionId?: string };
    if (!res.ok) throw new Error(body.message ?? `HTTP ${res.status}`);
    status.textContent = to === subscriberSelect.value ? 'Sent.' : `Sent to ${to}; switch "Viewing as" to see it.`;
    // The elements would see it at the next poll; refresh now so the demo feels immediate.
    if (to === subscriberSelect.value) await storeOf(to).refresh();
    renderVariables();
  } catch (e) {
    status.textContent = `Failed: ${(e as Error).message}`;
  } finally {
    sendButton.disabled = false;
  }
}

function setTheme(dark: boolean) {
  document.documentElement.classList.toggle('dark', dark);
  themeButton.setAttribute('aria-pressed', String(dark));
  for (const el of [bell, feed]) el.theme = dark ? 'dark' : 'light';
  localStorage.setItem('notif-demo-theme', dark ? 'dark' : 'light');
}

async function main() {
  config = (await (await fetch('/demo-config.json')).json()) as PlaygroundConfig;
  // The every-state page's subscribers (state-*, made by it through the API) come last, in a group
  // of their own, after the seeded people.
  for (const select of [subscriberSelect, recipientSelect]) {
    const states = document.createElement('optgroup');
    states.label = 'Every-state page';
    for (const s of config.subscribers) (s.subscriberId.startsWith('state-') ? states : select).append(option(s.subscriberId, s.name));
    if (states.childElementCount) select.append(states);
  }
  for (const w of config.workflows) workflowSelect.append(option(w.workflowId, w.name));
  const wanted = new URL(location.href).searchParams.get('subscriber');
  const first = config.subscribers.find((s) => s.subscriberId === wanted) ?? config.subscribers[0];
  setTheme(localStorage.getItem('notif-demo-theme') === 'dark' || (!localStorage.getItem('notif-demo-theme') && matchMedia('(prefers-color-scheme: dark)').matches));
  if (first) {
    subscriberSelect.value = first.subscriberId;
    showSubscriber(first.subscriberId);
  } else {
    status.textContent = 'No seeded subscribers: start the service on a new database (npm start).';
    sendButton.disabled = true;
  }
  renderVariables();
  subscriberSelect.addEventListener('change', () => showSubscriber(subscriberSelect.value));
  workflowSelect.addEventListener('change', renderVariables);
  recipientSelect.addEventListener('change', renderVariables);
  form.addEventListener('submit', send);
  copyButton.addEventListener('click', copySnippet);
  themeButton.addEventListener('click', () => setTheme(!document.documentElement.classList.contains('dark')));
  // The demo has no routes to follow: show where a click would go instead of leaving the page.
  document.addEventListener('notif-message-click', (e) => {
    if (e.detail.url && new URL(e.detail.url, location.href).origin === location.origin) {
      e.preventDefault();
      status.textContent = `Opened ${e.detail.url} (a router would navigate there).`;
    }
  });
  document.addEventListener('notif-error', (e) => {
    status.textContent = `Error (${e.detail.action}): ${e.detail.error.message}`;
  });
}

void main();
