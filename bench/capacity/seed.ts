// The capacity bench's database: N subscribers (`user-0` ... `user-<N-1>`), each with a history of
// in-app messages as a running service leaves it (50 to 100 over the last 30 days, most of them
// read, the newest few unseen), one workflow the load triggers, and the bench's API key.
//
// Written through the service's own database module (migrations, key registration, row shapes), as
// bench/server.ts does; this is the one file of the capacity bench that imports server code.
import { sql } from 'kysely';
import { openDatabase } from '../../server/src/db/index.ts';
import { registerKey } from '../../server/src/db/keys.ts';
import { newId } from '../../server/src/ids.ts';
import { newSubscriberRow } from '../../server/src/engine/subscribers.ts';
import { integerBetween, seededRandom } from './random.ts';

export const BENCH_KEY = 'bench_capacity_key';
export const BENCH_TENANT = 'capacity/production';
/** The workflow every trigger of the load names. */
export const WORKFLOW_ID = 'comment-added';

export interface SeedOptions {
  /** A SQLite file path, or a postgres:// URL of an existing, empty database. */
  location: string;
  users: number;
  minMessages: number;
  maxMessages: number;
}

const DAY_MS = 24 * 3600 * 1000;
const HISTORY_DAYS = 30;
/** Of the messages older than the unseen ones, the share that was read. */
const READ_SHARE = 0.8;
/** The most unseen messages a subscriber has before the load starts. */
const MAX_UNSEEN = 3;
const SEED = 20_240_601;
const SQLITE_ROWS_PER_INSERT = 400;
const POSTGRES_ROWS_PER_INSERT = 1000;

/** The subscriber id of user number `index`, as the load generator names it too. */
export const subscriberIdOf = (index: number) => `user-${index}`;

/** One message of the history, before it becomes a row: whose, when, and its state. */
interface PlannedMessage {
  user: number;
  at: number;
  read: boolean;
  seen: boolean;
}

export async function seedDatabase(options: SeedOptions): Promise<{ messages: number; seconds: number }> {
  const started = Date.now();
  const db = await openDatabase({ location: options.location });
  const postgres = db.dialect === 'postgres';
  try {
    const tenant = await registerKey(db, BENCH_KEY, ...(BENCH_TENANT.split('/') as [string, string]));
    const now = Date.now();
    const nowIso = new Date(now).toISOString();
    const workflowRowId = newId();
    const stepId = newId();
    await db.kysely
      .insertInto('workflows')
      .values({
        id: workflowRowId,
        environment_id: tenant.environmentId,
        organization_id: tenant.organizationId,
        workflow_id: WORKFLOW_ID,
        name: 'Comment added',
        description: 'Someone commented on your document',
        steps: JSON.stringify([
          {
            _id: stepId,
            name: 'In-app',
            type: 'in_app',
            controlValues: {
              subject: '{{payload.author}} commented',
              body: '{{payload.comment}}',
              primaryAction: { label: 'Reply' },
              secondaryAction: { label: 'Dismiss' },
            },
          },
        ]),
        tags: '[]',
        active: 1,
        critical: 0,
        created_at: nowIso,
        updated_at: nowIso,
      })
      .execute();

    const random = seededRandom(SEED);
    const internalIds: string[] = [];
    const subscriberRows = [];
    for (let user = 0; user < options.users; user++) {
      const id = newId(now - HISTORY_DAYS * DAY_MS);
      internalIds.push(id);
      subscriberRows.push(
        newSubscriberRow(tenant, subscriberIdOf(user), nowIso, {
          id,
          first_name: `First${user}`,
          last_name: `Last${user}`,
          email: `user${user}@example.com`,
          locale: 'en',
        }),
      );
    }
    for (let i = 0; i < subscriberRows.length; i += SQLITE_ROWS_PER_INSERT) {
      await db.kysely.insertInto('subscribers').values(subscriberRows.slice(i, i + SQLITE_ROWS_PER_INSERT)).execute();
    }

    // Every user's history, then all of it in the order it was written (the commit numbers follow it).
    const planned: PlannedMessage[] = [];
    for (let user = 0; user < options.users; user++) {
      const count = integerBetween(random, options.minMessages, options.maxMessages);
      const unseen = integerBetween(random, 0, MAX_UNSEEN);
      const times = Array.from({ length: count }, () => now - Math.floor(random() * HISTORY_DAYS * DAY_MS)).sort((a, b) => a - b);
      times.forEach((at, i) => {
        const isUnseen = i >= count - unseen;
        const read = !isUnseen && random() < READ_SHARE;
        planned.push({ user, at, read, seen: !isUnseen });
      });
    }
    planned.sort((a, b) => a.at - b.at);

    const rowsPerInsert = postgres ? POSTGRES_ROWS_PER_INSERT : SQLITE_ROWS_PER_INSERT;
    await db.kysely.transaction().execute(async (trx) => {
      for (let start = 0; start < planned.length; start += rowsPerInsert) {
        const rows = planned.slice(start, start + rowsPerInsert).map((message, offset) => {
          const number = start + offset;
          const created = new Date(message.at).toISOString();
          const author = `Author ${number % 37}`;
          const done = message.read && number % 3 === 0;
          return {
            id: newId(message.at),
            environment_id: tenant.environmentId,
            organization_id: tenant.organizationId,
            subscriber_id: internalIds[message.user]!,
            notification_id: newId(message.at),
            template_id: workflowRowId,
            message_template_id: stepId,
            template_identifier: WORKFLOW_ID,
            transaction_id: newId(message.at),
            channel: 'in_app',
            subject: `${author} commented`,
            content: JSON.stringify([{ type: 'text', content: `This is comment number ${number}, with a little more text to be realistic.` }]),
            avatar: null,
            cta: JSON.stringify({
              type: 'redirect',
              data: { url: `/documents/${number}` },
              action: {
                status: done ? 'done' : 'pending',
                buttons: [
                  { type: 'primary', content: 'Reply' },
                  { type: 'secondary', content: 'Dismiss' },
                ],
                ...(done && { result: { type: 'primary', payload: {} } }),
              },
            }),
            feed_id: null,
            feed_identifier: null,
            read: message.read ? 1 : 0,
            seen: message.seen ? 1 : 0,
            last_read_date: message.read ? created : null,
            last_seen_date: message.seen ? created : null,
            status: 'sent',
            error_id: null,
            error_text: null,
            payload: JSON.stringify({ author, comment: `comment ${number}`, documentId: number }),
            overrides: '{}',
            context_keys: '[]',
            provider_id: null,
            email: null,
            phone: null,
            device_tokens: null,
            direct_webhook_url: null,
            title: null,
            delivered_at: created,
            created_at: created,
            updated_at: created,
            seq: number + 1,
          };
        });
        await trx.insertInto('messages').values(rows).execute();
      }
    });

    if (postgres) {
      // The next message the service writes is numbered after the history.
      await sql`select setval('messages_seq_numbers', ${planned.length + 1}, false)`.execute(db.kysely);
      // As autovacuum leaves a table that stopped growing, not as a bulk load does (visibility map,
      // statistics). (bench/server.ts does the same.)
      await sql`vacuum analyze`.execute(db.kysely);
    } else {
      await sql`analyze`.execute(db.kysely);
    }
    return { messages: planned.length, seconds: (Date.now() - started) / 1000 };
  } finally {
    await db.close();
  }
}
