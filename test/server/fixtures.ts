import assert from 'node:assert/strict';
import { KEYS, type TestServer } from './helpers.ts';

// Shared helpers for server tests: they make workflows, subscribers and messages through the HTTP
// API itself (POST /v2/workflows and POST /v1/events/trigger), as any client would.

export const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64');

export interface InAppControls {
  subject?: string;
  body: string;
  avatar?: string;
  redirect?: { url: string };
  primaryAction?: { label: string; redirect?: { url: string }; resultContent?: string };
  secondaryAction?: { label: string; redirect?: { url: string }; resultContent?: string };
  feedIdentifier?: string;
}

/** What an active integration of each provider the server tests use must hold (see REQUIRED_CREDENTIALS); chat providers need none. */
const PUSH_CREDENTIALS: Record<string, Record<string, string>> = {
  fcm: { serviceAccount: '{"project_id":"test"}' },
  expo: { apiKey: 'expo-test-token' },
  'push-webhook': { webhookUrl: 'https://push.example.test/hook' },
};

/**
 * Makes an active integration of each provider (identifier: the providerId, or `identifier`), so a
 * subscriber's credentials of it can be set: every credential entry belongs to an active integration.
 */
export async function activeIntegrations(server: TestServer, providerIds: string[], key: string = KEYS.a, identifier?: (providerId: string) => string): Promise<string[]> {
  const ids: string[] = [];
  for (const providerId of providerIds) {
    const channel = providerId in PUSH_CREDENTIALS ? 'push' : 'chat';
    const body = { providerId, channel, identifier: identifier?.(providerId) ?? providerId, credentials: PUSH_CREDENTIALS[providerId] ?? {}, active: true };
    const r = await server.post('/v1/integrations', body, { key });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    ids.push(r.body._id);
  }
  return ids;
}

/** Creates (or updates) a workflow; asserts it was accepted and returns its body. */
export async function createWorkflow(server: TestServer, body: Record<string, unknown>, key: string = KEYS.a) {
  const r = await server.post('/v2/workflows', body, { key });
  assert.ok(r.status === 201 || r.status === 200, `workflow ${String(body.workflowId)}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** A workflow that waits `seconds` (a delay step), then sends one in-app message of `body`. */
export function delayedInAppWorkflow(server: TestServer, workflowId: string, seconds: number, body: string, name = workflowId) {
  return createWorkflow(server, {
    workflowId,
    name,
    steps: [
      { name: 'wait', type: 'delay', controlValues: { amount: seconds, unit: 'seconds' } },
      { name: 'inbox', type: 'in_app', controlValues: { body } },
    ],
  });
}

/** A workflow with one in-app step. */
export function inAppWorkflow(server: TestServer, workflowId: string, controlValues: InAppControls, key: string = KEYS.a) {
  return createWorkflow(server, { workflowId, name: workflowId, steps: [{ name: 'inbox', type: 'in_app', controlValues }] }, key);
}

export interface TriggerReply {
  acknowledged: boolean;
  status: string;
  transactionId: string;
}

/** Triggers a workflow; asserts 201 and returns the body. */
export async function triggerEvent(server: TestServer, body: Record<string, unknown>, key: string = KEYS.a): Promise<TriggerReply> {
  const r = await server.post('/v1/events/trigger', body, { key });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body;
}

const noopMade = new WeakMap<TestServer, Set<string>>();

/**
 * Makes sure a subscriber exists (with the given fields) by triggering a workflow that has no
 * steps: the trigger creates unknown subscribers and updates known ones.
 */
export async function ensureSubscriber(server: TestServer, subscriberId: string, fields: Record<string, unknown> = {}, key: string = KEYS.a) {
  const made = noopMade.get(server) ?? new Set<string>();
  noopMade.set(server, made);
  if (!made.has(key)) {
    await createWorkflow(server, { workflowId: 'fixture-noop', name: 'No steps', steps: [] }, key);
    made.add(key);
  }
  await triggerEvent(server, { name: 'fixture-noop', to: { subscriberId, ...fields } }, key);
}

/**
 * Sends `count` in-app messages to a subscriber, one trigger each (so createdAt grows with i),
 * with `payload(i)`; returns the transactionIds in sending order.
 */
export async function sendMessages(
  server: TestServer,
  options: { workflowId: string; subscriberId: string; count: number; payload?: (i: number) => Record<string, unknown>; key?: string },
): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < options.count; i++) {
    const r = await triggerEvent(server, { name: options.workflowId, to: options.subscriberId, payload: options.payload?.(i) ?? { i } }, options.key);
    ids.push(r.transactionId);
  }
  return ids;
}

/** Reads a feed page; asserts 200. */
export async function getFeed(server: TestServer, subscriberId: string, query: Record<string, any> = {}, key: string = KEYS.a) {
  const r = await server.get(`/v1/subscribers/${encodeURIComponent(subscriberId)}/notifications/feed`, { query, key });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body as { data: any[]; totalCount: number; hasMore: boolean; pageSize: number; page: number };
}

/** Every in-app message of a subscriber, newest first (all pages). */
export async function allMessages(server: TestServer, subscriberId: string, query: Record<string, any> = {}, key: string = KEYS.a) {
  const out: any[] = [];
  for (let page = 0; ; page++) {
    const body = await getFeed(server, subscriberId, { ...query, page, limit: 100 }, key);
    out.push(...body.data);
    if (!body.hasMore) return out;
  }
}

export async function unseenCount(server: TestServer, subscriberId: string, query: Record<string, any> = {}, key: string = KEYS.a): Promise<number> {
  const r = await server.get(`/v1/subscribers/${encodeURIComponent(subscriberId)}/notifications/unseen`, { query, key });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.count;
}
