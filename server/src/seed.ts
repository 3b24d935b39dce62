import type { Db } from './db/index.ts';
import { generateKey, hashKey, registerKey, type Tenant } from './db/keys.ts';
import { trigger } from './engine/trigger.ts';
import { saveWorkflow, workflowErrors, type WorkflowInput } from './workflows/workflows.ts';
import { inTransaction } from './db/store.ts';

/** True when the database has no environment yet. */
export async function isFresh(db: Db): Promise<boolean> {
  const row = await db.kysely.selectFrom('environments').select('id').limit(1).executeTakeFirst();
  return !row;
}

/** The demo subscribers, the first one ('ada') being the one the demo page shows. */
export const DEMO_SUBSCRIBERS = [
  { subscriberId: 'ada', firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', avatar: '/avatars/ada.svg' },
  { subscriberId: 'grace', firstName: 'Grace', lastName: 'Hopper', email: 'grace@example.com', avatar: '/avatars/grace.svg' },
  { subscriberId: 'alan', firstName: 'Alan', lastName: 'Turing', email: 'alan@example.com' },
  { subscriberId: 'katherine', firstName: 'Katherine', lastName: 'Johnson', email: 'katherine@example.com' },
  { subscriberId: 'linus', firstName: 'Linus', lastName: 'Torvalds', email: 'linus@example.com', avatar: '/avatars/linus.svg' },
] as const;
export const DEMO_SUBSCRIBER_IDS = DEMO_SUBSCRIBERS.map((s) => s.subscriberId);

export const DEMO_WORKFLOWS: WorkflowInput[] = [
  {
    workflowId: 'project-invite',
    name: 'Project invitation',
    description: 'Someone invites the subscriber to a project; the subscriber accepts or declines.',
    tags: ['collaboration'],
    steps: [
      {
        name: 'inbox',
        type: 'in_app',
        controlValues: {
          subject: '{{payload.actor.name}} invited you to {{payload.project}}',
          body: 'Hi {{subscriber.firstName}}, {{payload.actor.name}} would like you to join {{payload.project}} as {{payload.role}}.',
          avatar: '{{payload.actor.avatar}}',
          redirect: { url: '/projects/{{payload.projectId}}' },
          primaryAction: { label: 'Accept', resultContent: 'You joined {{payload.project}}' },
          secondaryAction: { label: 'Decline', resultContent: 'Invitation declined' },
        },
      },
    ],
  },
  {
    workflowId: 'comment-reply',
    name: 'Reply to a comment',
    description: 'Someone replied to one of the subscriber\'s comments.',
    tags: ['social'],
    steps: [
      {
        name: 'inbox',
        type: 'in_app',
        controlValues: {
          subject: '{{payload.actor.name}} replied to your comment',
          body: '"{{payload.excerpt}}" on {{payload.post}}',
          avatar: '{{payload.actor.avatar}}',
          redirect: { url: '/posts/{{payload.postId}}#comment-{{payload.commentId}}' },
        },
      },
    ],
  },
  {
    workflowId: 'invoice-paid',
    name: 'Invoice paid',
    description: 'A payment went through; shown in the billing feed.',
    tags: ['billing'],
    steps: [
      {
        name: 'inbox',
        type: 'in_app',
        controlValues: {
          subject: 'Invoice {{payload.invoice}} paid',
          body: 'We received your payment of {{payload.amount}}. Thank you!',
          redirect: { url: '/billing/invoices/{{payload.invoice}}' },
          feedIdentifier: 'billing',
        },
      },
    ],
  },
  {
    workflowId: 'announcement',
    name: 'Announcement',
    description: 'News from the app itself (a new feature, planned maintenance, an export that is ready): the payload gives its subject, body and, optionally, a link.',
    tags: ['product'],
    steps: [
      {
        name: 'inbox',
        type: 'in_app',
        controlValues: {
          subject: '{{payload.subject}}',
          body: '{{payload.body}}',
          // Dropped from the message when the payload has no url.
          redirect: { url: '{{payload.url}}' },
        },
      },
    ],
  },
];

const PROJECTS = ['Analytical Engine', 'COBOL compiler', 'Bombe', 'Apollo trajectories', 'Kernel 0.01'];
const POSTS = ['Notes on the Engine', 'Why debugging is hard', 'On computable numbers', 'Orbital mechanics 101'];
const EXCERPTS = ['Great point about loops!', 'I ran into the same bug last week.', 'Could you share the source?', 'This deserves a follow-up post.', 'Nicely put.'];

/** A linear congruential generator's multiplier and increment (Numerical Recipes), modulo 2^32. */
const LCG_MULTIPLIER = 1664525;
const LCG_INCREMENT = 1013904223;
const TWO_TO_THE_32 = 0x1_0000_0000;

/** A small deterministic generator of numbers in [0, 1), so the demo looks the same on every machine. */
function random(seed: number) {
  // (`>>> 0` keeps a number an unsigned 32-bit integer.)
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, LCG_MULTIPLIER) + LCG_INCREMENT) >>> 0;
    return state / TWO_TO_THE_32;
  };
}

/** The seed of the demo's generator. */
const DEMO_SEED = 20240611;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
export const DEMO_MESSAGE_COUNT = 50;
/** The messages are spread over this many days before now; the workflows were made a day before that. */
const DEMO_DAYS = 14;
/** Of every five messages, this many are for ada (the demo page's subscriber). */
const ADA_PER_FIVE = 3;
/** Messages older than this were mostly read; a read or seen message was opened at most OPENED_WITHIN after it came. */
const OLD_AFTER = 3 * DAY;
const OPENED_WITHIN = 6 * HOUR;
/** Chances a message was read, by age; and, when not read, that it was seen. */
const READ_CHANCE = { old: 0.7, recent: 0.15 };
const SEEN_CHANCE = { old: 0.6, day: 0.4, recent: 0.1 };

/** Which demo workflow the message at `index` comes from: an invoice now and then, then invitations and replies. */
function demoWorkflowOf(index: number): 'invoice-paid' | 'project-invite' | 'comment-reply' {
  if (index % 7 === 3) return 'invoice-paid';
  if (index % 3 === 0) return 'project-invite';
  return 'comment-reply';
}

/**
 * Creates the demo environment and its data: four workflows, five subscribers and about fifty
 * in-app messages over the last two weeks (most for 'ada'), made by the same engine a trigger
 * uses, some read and some seen. Returns the development key and the subscriber ids.
 */
export async function seedDemo(db: Db, now = new Date()): Promise<{ key: string; subscriberIds: string[] }> {
  const key = generateKey();
  const tenant = await registerKey(db, key, 'demo', 'development');
  const rand = random(DEMO_SEED);
  const pick = <T>(list: readonly T[]) => list[Math.floor(rand() * list.length)]!;

  await inTransaction(db, async (trx) => {
    for (const body of DEMO_WORKFLOWS) {
      const errors = workflowErrors(body);
      if (Object.keys(errors).length > 0) throw new Error(`demo workflow ${body.workflowId}: ${JSON.stringify(errors)}`);
      await saveWorkflow(trx, tenant, body, new Date(now.getTime() - (DEMO_DAYS + 1) * DAY));
    }

    // Times over the last DEMO_DAYS days (a minute ago at the latest), oldest first, so ids and createdAt grow together.
    const times = Array.from({ length: DEMO_MESSAGE_COUNT }, () => now.getTime() - Math.floor(rand() * DEMO_DAYS * DAY) - MINUTE).sort((a, b) => a - b);
    for (const [index, time] of times.entries()) {
      // Three in five for ada, the rest spread over the others.
      const recipient = index % 5 < ADA_PER_FIVE ? DEMO_SUBSCRIBERS[0] : DEMO_SUBSCRIBERS[1 + (index % 4)]!;
      const others = DEMO_SUBSCRIBERS.filter((subscriber) => subscriber.subscriberId !== recipient.subscriberId);
      const actor = pick(others);
      const actorInfo = { name: `${actor.firstName} ${actor.lastName}`, avatar: 'avatar' in actor ? actor.avatar : undefined };
      const workflowId = demoWorkflowOf(index);
      // (Made up numbers: invoices from INV-1040, amounts of $19 to $198, and ids of projects, posts and comments.)
      let payload: Record<string, unknown>;
      if (workflowId === 'invoice-paid') {
        payload = { invoice: `INV-${1040 + index}`, amount: `$${(19 + Math.floor(rand() * 180)).toFixed(2)}` };
      } else if (workflowId === 'project-invite') {
        payload = { actor: actorInfo, project: pick(PROJECTS), projectId: 100 + index, role: pick(['editor', 'viewer', 'maintainer']) };
      } else {
        payload = { actor: actorInfo, post: pick(POSTS), postId: 200 + index, commentId: 300 + index, excerpt: pick(EXCERPTS) };
      }
      await trigger(trx, tenant, { name: workflowId, to: { ...recipient }, payload }, { now: new Date(time) });
    }

    // Older messages were mostly read (and so seen); some recent ones were seen in the bell but not read.
    const messages = await trx.kysely
      .selectFrom('messages')
      .select(['id', 'created_at'])
      .where('environment_id', '=', tenant.environmentId)
      .execute();
    for (const message of messages) {
      const age = now.getTime() - Date.parse(message.created_at);
      const read = rand() < (age > OLD_AFTER ? READ_CHANCE.old : READ_CHANCE.recent);
      let seenChance = SEEN_CHANCE.recent;
      if (age > OLD_AFTER) seenChance = SEEN_CHANCE.old;
      else if (age > DAY) seenChance = SEEN_CHANCE.day;
      // (A message read is seen; only one not read draws again.)
      const seen = read || rand() < seenChance;
      if (!read && !seen) continue;
      const at = new Date(Date.parse(message.created_at) + Math.min(age / 2, OPENED_WITHIN)).toISOString();
      await trx.kysely
        .updateTable('messages')
        .set({ read: read ? 1 : 0, seen: 1, last_seen_date: at, last_read_date: read ? at : null, updated_at: at })
        .where('id', '=', message.id)
        .execute();
    }
  });
  return { key, subscriberIds: [...DEMO_SUBSCRIBER_IDS] };
}

/**
 * Adds to the demo environment of a database seeded by an earlier version (the environment of the
 * key kept in settings 'demo_api_key') the demo workflows it lacks. The workflows it has, the
 * seeded ones as they were changed since and any other, stay as they are. Returns the ids added.
 */
export async function addMissingDemoWorkflows(db: Db, now = new Date()): Promise<string[]> {
  const k = db.kysely;
  const setting = await k.selectFrom('settings').select('value').where('name', '=', 'demo_api_key').executeTakeFirst();
  if (!setting) return [];
  const env = await k
    .selectFrom('api_keys')
    .innerJoin('environments', 'environments.id', 'api_keys.environment_id')
    .select(['environments.id as environmentId', 'environments.organization_id as organizationId'])
    .where('api_keys.key_hash', '=', hashKey(setting.value))
    .executeTakeFirst();
  if (!env) return [];
  const tenant: Tenant = { environmentId: env.environmentId, organizationId: env.organizationId };
  const rows = await k.selectFrom('workflows').select('workflow_id').where('environment_id', '=', tenant.environmentId).execute();
  const have = new Set(rows.map((row) => row.workflow_id));
  const missing = DEMO_WORKFLOWS.filter((workflow) => !have.has(workflow.workflowId));
  for (const body of missing) await saveWorkflow(db, tenant, body, now);
  return missing.map((workflow) => workflow.workflowId);
}
