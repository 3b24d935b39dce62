// Helpers for browser tests: reach the real service that web-test-runner.config.mjs started for this
// run. Every test file shares that one server (and runs beside another file), so isolate by
// subscriber: `uniqueSubscriber()` per test, and fault paths that name that subscriber.
import { NotifClient } from '../../src/api/client.ts';
import type { InAppControlValues, TriggerResponse, Workflow, WorkflowStep } from '../../src/api/types.ts';

export interface TestServerInfo {
  /** The service, e.g. `http://127.0.0.1:41234`. */
  baseUrl: string;
  /** A key of environment wtr/test. */
  apiKey: string;
  /** A key of another environment (wtr/other): must never see apiKey's data. */
  otherKey: string;
  /** Where the test pages' own origin mounts the proxy (server/src/proxy.ts) in front of apiKey's environment. */
  proxyPath: string;
  /** The host secret the proxy checks subscriber hashes with (a server-side secret in a real app). */
  proxyHmacKey: string;
}

/** HMAC-SHA256 (hex) of `subscriberId`: what a host app's server computes for `subscriber-hash`. */
export async function subscriberHash(subscriberId: string): Promise<string> {
  const { proxyHmacKey } = await testServer();
  const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(proxyHmacKey), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(subscriberId));
  return Array.from(new Uint8Array(mac), (b) => b.toString(16).padStart(2, '0')).join('');
}

let info: Promise<TestServerInfo> | undefined;

/** The service's address and keys (served by the test runner as /__notif-test.json). */
export function testServer(): Promise<TestServerInfo> {
  return (info ??= fetch('/__notif-test.json').then((r) => {
    if (!r.ok) throw new Error(`/__notif-test.json: ${r.status}; run through web-test-runner.config.mjs`);
    return r.json() as Promise<TestServerInfo>;
  }));
}

/** A NotifClient on the test environment's key (or `key`). */
export async function api(key?: string): Promise<NotifClient> {
  const { baseUrl, apiKey } = await testServer();
  return new NotifClient({ baseUrl, apiKey: key ?? apiKey });
}

let counter = 0;
/** A fresh id; unique across test files, runs and the two concurrent pages. */
export function uniqueId(prefix = 'id'): string {
  return `${prefix}-${Date.now().toString(36)}-${(counter++).toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}

/** Creates a fresh subscriber on the server and returns its subscriberId. */
export async function uniqueSubscriber(fields: { firstName?: string; lastName?: string; avatar?: string } = {}): Promise<string> {
  const subscriberId = uniqueId('sub');
  await (await api()).createSubscriber({ subscriberId, ...fields });
  return subscriberId;
}

export interface WorkflowOptions {
  workflowId?: string;
  name?: string;
  /** The in_app step's controlValues (default: subject/body with `{{payload.title}}` and `{{payload.body}}`). */
  inApp?: InAppControlValues;
  /** Whole steps instead of the single in_app one. */
  steps?: WorkflowStep[];
}

/** Creates a workflow (default: one in_app step) and returns its workflowId, the trigger name. */
export async function createWorkflow(options: WorkflowOptions = {}): Promise<string> {
  const workflowId = options.workflowId ?? uniqueId('wf');
  const steps: WorkflowStep[] = options.steps ?? [
    {
      name: 'in-app',
      type: 'in_app',
      controlValues: options.inApp ?? { subject: '{{payload.title}}', body: '{{payload.body}}' },
    },
  ];
  const body: Workflow = { workflowId, name: options.name ?? workflowId, steps };
  await (await api()).createWorkflow(body);
  return workflowId;
}

/** Triggers `workflowId` for `subscriberId` (one in_app message with the default workflow). */
export async function trigger(
  workflowId: string,
  subscriberId: string,
  payload: Record<string, unknown> = { title: 'Hello', body: 'A notification' },
  extra: { transactionId?: string; overrides?: Record<string, unknown> } = {},
): Promise<TriggerResponse> {
  return (await api()).trigger({ name: workflowId, to: subscriberId, payload, ...extra });
}

/** Triggers `count` messages one after another (so their order is their creation order). */
export async function triggerMany(workflowId: string, subscriberId: string, count: number, title = 'Message'): Promise<void> {
  for (let i = 0; i < count; i++) await trigger(workflowId, subscriberId, { title: `${title} ${i}`, body: `body ${i}`, i });
}

export interface Fault {
  /** A substring of the request URL (path and query); name the test's subscriber or message id. */
  path: string;
  status: number;
  method?: string;
  /** How many matching requests fail (default 1). */
  times?: number;
  /** Seconds, sent as `Retry-After`. */
  retryAfter?: number;
}

/** Makes the next `times` matching requests fail with `status` (server/src/faults.ts; `serve --faults`). */
export async function injectFault(fault: Fault): Promise<void> {
  const { baseUrl } = await testServer();
  const r = await fetch(`${baseUrl}/__faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(fault),
  });
  if (r.status !== 201) throw new Error(`injectFault: ${r.status} ${await r.text()}`);
}

/** Disarms every fault (of every test file: prefer faults that run out through `times`). */
export async function clearFaults(): Promise<void> {
  const { baseUrl } = await testServer();
  await fetch(`${baseUrl}/__faults`, { method: 'DELETE' });
}

/** Resolves when `predicate` holds, polling every 20 ms of real time; rejects after `timeout` ms. */
export async function until<T>(predicate: () => T | Promise<T>, message = 'condition', timeout = 5000): Promise<T> {
  const start = performance.now();
  for (;;) {
    const value = await predicate();
    if (value) return value;
    if (performance.now() - start > timeout) throw new Error(`timed out waiting for ${message}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The streams the service holds for `subscriberId` (its `__streams` test route). */
export async function streamsOf(subscriberId: string): Promise<number> {
  const { baseUrl } = await testServer();
  const { _id } = await (await api()).getSubscriber(subscriberId);
  const body = await (await fetch(`${baseUrl}/__streams`)).json();
  return body.bySubscriber[_id] ?? 0;
}
