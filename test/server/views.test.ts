import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rawJson, RawJson } from '../../server/src/json.ts';
import type { MessageRow } from '../../server/src/db/rows.ts';
import { MESSAGE_COLUMNS, messageView, subscriberView } from '../../server/src/inbox/views.ts';
import { feedJson } from '../../server/src/inbox/feed.ts';

// The feed's fast path reads only the columns of the fields a projection names (MESSAGE_COLUMNS)
// and writes JSON columns out as stored (rawJson): both must give what messageView gives.

const row: MessageRow = {
  id: 'm1',
  environment_id: 'env',
  organization_id: 'org',
  subscriber_id: 'sub',
  notification_id: 'n1',
  template_id: 't1',
  message_template_id: 'step1',
  template_identifier: 'comment',
  transaction_id: 'tx1',
  channel: 'in_app',
  subject: 'Subject "quoted" \u2028',
  content: JSON.stringify([{ type: 'text', content: 'Body \ud83d\ude00 \\ back' }]),
  avatar: 'https://example.com/a.png',
  cta: JSON.stringify({ type: 'redirect', data: { url: '/x' } }),
  feed_id: 'f1',
  feed_identifier: 'news',
  read: 1,
  seen: 0,
  last_read_date: '2026-01-02T00:00:00.000Z',
  last_seen_date: null,
  status: 'sent',
  error_id: null,
  error_text: null,
  payload: JSON.stringify({ a: { b: [1, 2, null] } }),
  overrides: '{}',
  context_keys: '["k"]',
  provider_id: 'p',
  email: 'e@example.com',
  phone: '+100',
  device_tokens: '["d1"]',
  direct_webhook_url: 'https://hooks.example.com/x',
  title: 'Title',
  delivered_at: '2026-01-01T00:00:00.000Z',
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-03T00:00:00.000Z',
  job_key: null,
  seq: 7,
} as MessageRow;

describe('message views', () => {
  it('MESSAGE_COLUMNS names, for every field of messageView, the one column it reads', () => {
    const full = messageView(row, undefined, undefined) as Record<string, unknown>;
    for (const field of Object.keys(full)) {
      if (field == 'subscriber' || field == 'template') continue;
      const column = MESSAGE_COLUMNS[field];
      assert.ok(column, `${field} has no column in MESSAGE_COLUMNS`);
      const only = messageView({ [column]: row[column] } as MessageRow, undefined, undefined) as Record<string, unknown>;
      assert.deepEqual(only[field], full[field], `${field} from ${column} alone`);
    }
  });

  it('a feed written with JSON columns as stored is the feed written from parsed ones', () => {
    const subscriber = subscriberView({ id: 'sub', subscriber_id: 's', environment_id: 'env', organization_id: 'org', data: '{}', channels: '[]', created_at: 'x', updated_at: 'x' } as never);
    const rest = { totalCount: 2, hasMore: false, pageSize: 10, page: 0 };
    const nulls = { ...row, id: 'm2', content: null, cta: null, device_tokens: null } as unknown as MessageRow;
    for (const fields of [undefined, new Set(['_id', 'content', 'cta', 'payload', 'subject', 'deviceTokens', 'subscriber'])]) {
      const raw = [row, nulls].map((r) => messageView<RawJson>(r, subscriber, undefined, rawJson));
      assert.ok(raw[0]!.content instanceof RawJson);
      const parsed = [row, nulls].map((r) => messageView(r, subscriber, undefined));
      const expected = parsed.map(({ subscriber: s, template: _t, ...v }) => {
        return Object.fromEntries(Object.entries({ ...v, subscriber: s }).filter(([k]) => !fields || fields.has(k)));
      });
      assert.deepEqual(JSON.parse(feedJson(raw, fields, rest)), JSON.parse(JSON.stringify({ data: expected, ...rest })));
    }
  });
});
