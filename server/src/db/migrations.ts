import { PostgresAdapter, sql, type Kysely, type Migration, type SqlBool } from 'kysely';

// Migrations run at start (server/db/index.ts). Append new ones; never edit one that has shipped.
// Column types are the portable subset (text, integer, bigint) so SQLite and PostgreSQL share them.

export const migrations: Record<string, Migration> = {
  '0001_initial': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('organizations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('environments')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('environments_org_name', ['organization_id', 'name'])
        .execute();

      await db.schema
        .createTable('api_keys')
        .addColumn('key_hash', 'text', (c) => c.primaryKey())
        .addColumn('environment_id', 'text', (c) => c.notNull().references('environments.id'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('settings')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('subscribers')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('organization_id', 'text', (c) => c.notNull())
        .addColumn('subscriber_id', 'text', (c) => c.notNull())
        .addColumn('first_name', 'text')
        .addColumn('last_name', 'text')
        .addColumn('email', 'text')
        .addColumn('phone', 'text')
        .addColumn('avatar', 'text')
        .addColumn('locale', 'text')
        .addColumn('timezone', 'text')
        .addColumn('data', 'text')
        .addColumn('channels', 'text', (c) => c.notNull())
        .addColumn('topics', 'text', (c) => c.notNull())
        .addColumn('is_online', 'integer', (c) => c.notNull())
        .addColumn('last_online_at', 'text')
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('subscribers_env_subscriber', ['environment_id', 'subscriber_id'])
        .execute();

      await db.schema
        .createTable('integrations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('organization_id', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('identifier', 'text', (c) => c.notNull())
        .addColumn('provider_id', 'text', (c) => c.notNull())
        .addColumn('channel', 'text', (c) => c.notNull())
        .addColumn('credentials', 'text', (c) => c.notNull())
        .addColumn('configurations', 'text', (c) => c.notNull())
        .addColumn('conditions', 'text', (c) => c.notNull())
        .addColumn('active', 'integer', (c) => c.notNull())
        .addColumn('primary', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('integrations_env_identifier', ['environment_id', 'identifier'])
        .execute();
      await db.schema.createIndex('integrations_org').on('integrations').column('organization_id').execute();

      await db.schema
        .createTable('workflows')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('organization_id', 'text', (c) => c.notNull())
        .addColumn('workflow_id', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('steps', 'text', (c) => c.notNull())
        .addColumn('tags', 'text', (c) => c.notNull())
        .addColumn('active', 'integer', (c) => c.notNull())
        .addColumn('critical', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('workflows_env_workflow', ['environment_id', 'workflow_id'])
        .execute();

      await db.schema
        .createTable('feeds')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('identifier', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('feeds_env_identifier', ['environment_id', 'identifier'])
        .execute();

      await db.schema
        .createTable('notifications')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('organization_id', 'text', (c) => c.notNull())
        .addColumn('subscriber_id', 'text', (c) => c.notNull())
        .addColumn('template_id', 'text', (c) => c.notNull())
        .addColumn('transaction_id', 'text', (c) => c.notNull())
        .addColumn('digested_notification_id', 'text')
        .addColumn('channels', 'text', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('controls', 'text', (c) => c.notNull())
        .addColumn('to', 'text', (c) => c.notNull())
        .addColumn('tags', 'text', (c) => c.notNull())
        .addColumn('topics', 'text', (c) => c.notNull())
        .addColumn('severity', 'text')
        .addColumn('critical', 'integer', (c) => c.notNull())
        .addColumn('context_keys', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('notifications_env_created')
        .on('notifications')
        .columns(['environment_id', 'created_at'])
        .execute();
      await db.schema
        .createIndex('notifications_env_transaction')
        .on('notifications')
        .columns(['environment_id', 'transaction_id'])
        .execute();

      await db.schema
        .createTable('jobs')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('notification_id', 'text', (c) => c.notNull())
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('organization_id', 'text', (c) => c.notNull())
        .addColumn('subscriber_id', 'text', (c) => c.notNull())
        .addColumn('template_id', 'text', (c) => c.notNull())
        .addColumn('transaction_id', 'text', (c) => c.notNull())
        .addColumn('step_index', 'integer', (c) => c.notNull())
        .addColumn('step', 'text', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('overrides', 'text', (c) => c.notNull())
        .addColumn('digest', 'text')
        .addColumn('execution_details', 'text', (c) => c.notNull())
        .addColumn('provider_id', 'text')
        .addColumn('run_at', 'bigint')
        .addColumn('locked_by', 'text')
        .addColumn('locked_until', 'bigint')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('jobs_notification').on('jobs').columns(['notification_id', 'step_index']).execute();
      await db.schema.createIndex('jobs_due').on('jobs').columns(['status', 'run_at']).execute();
      await db.schema
        .createIndex('jobs_env_transaction')
        .on('jobs')
        .columns(['environment_id', 'transaction_id'])
        .execute();

      await db.schema
        .createTable('messages')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('organization_id', 'text', (c) => c.notNull())
        .addColumn('subscriber_id', 'text', (c) => c.notNull())
        .addColumn('notification_id', 'text')
        .addColumn('template_id', 'text')
        .addColumn('message_template_id', 'text')
        .addColumn('template_identifier', 'text')
        .addColumn('transaction_id', 'text')
        .addColumn('channel', 'text', (c) => c.notNull())
        .addColumn('subject', 'text')
        .addColumn('content', 'text', (c) => c.notNull())
        .addColumn('avatar', 'text')
        .addColumn('cta', 'text', (c) => c.notNull())
        .addColumn('feed_id', 'text')
        .addColumn('feed_identifier', 'text')
        .addColumn('read', 'integer', (c) => c.notNull())
        .addColumn('seen', 'integer', (c) => c.notNull())
        .addColumn('last_read_date', 'text')
        .addColumn('last_seen_date', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('error_id', 'text')
        .addColumn('error_text', 'text')
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('overrides', 'text', (c) => c.notNull())
        .addColumn('context_keys', 'text', (c) => c.notNull())
        .addColumn('provider_id', 'text')
        .addColumn('email', 'text')
        .addColumn('phone', 'text')
        .addColumn('device_tokens', 'text')
        .addColumn('direct_webhook_url', 'text')
        .addColumn('title', 'text')
        .addColumn('delivered_at', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      // The feed and the unseen count are the hot paths: one subscriber's in-app messages,
      // newest first, optionally filtered by read/seen.
      await db.schema
        .createIndex('messages_feed')
        .on('messages')
        .columns(['subscriber_id', 'channel', 'created_at', 'id'])
        .execute();
      await db.schema
        .createIndex('messages_unseen')
        .on('messages')
        .columns(['subscriber_id', 'channel', 'seen'])
        .execute();
      await db.schema
        .createIndex('messages_env_transaction')
        .on('messages')
        .columns(['environment_id', 'transaction_id'])
        .execute();

      await db.schema
        .createTable('idempotency_keys')
        .addColumn('organization_id', 'text', (c) => c.notNull())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('request_hash', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('status_code', 'integer')
        .addColumn('body', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('idempotency_keys_pk', ['organization_id', 'key'])
        .execute();
    },
  },
  '0002_messages_read': {
    // The feed's Unread tab (read=false) counts its matches from this index alone, as the unseen
    // filter does from messages_unseen, instead of a table lookup per message (with 100,000
    // messages for one subscriber: about 58 ms -> 5 ms per request). Narrow like messages_unseen,
    // so it stays as cheap as that one for the plain count.
    async up(db: Kysely<any>) {
      await db.schema
        .createIndex('messages_read')
        .on('messages')
        .columns(['subscriber_id', 'channel', 'read'])
        .execute();
    },
  },
  '0003_lookup_indexes': {
    // An open digest for a (subscriber, workflow) is looked up on every trigger of a digest
    // workflow; subscriber search orders by createdAt / updatedAt with _id as the tie-break.
    async up(db: Kysely<any>) {
      await db.schema
        .createIndex('jobs_open_digest')
        .on('jobs')
        .columns(['subscriber_id', 'template_id', 'status', 'run_at'])
        .execute();
      await db.schema
        .createIndex('subscribers_env_created')
        .on('subscribers')
        .columns(['environment_id', 'created_at', 'id'])
        .execute();
      await db.schema
        .createIndex('subscribers_env_updated')
        .on('subscribers')
        .columns(['environment_id', 'updated_at', 'id'])
        .execute();
    },
  },
  '0004_durable_runs': {
    // Durable runs (engine/lease.ts). An in-app message carries the job that wrote it, unique, so a
    // step run twice (a process that died after writing, a lease taken over) writes it once; other
    // channels may write several messages per job and leave it null. Pending jobs whose lease ran out
    // are found by status and lease end.
    async up(db: Kysely<any>) {
      await db.schema.alterTable('messages').addColumn('job_key', 'text').execute();
      await db.schema.createIndex('messages_job_key').on('messages').column('job_key').unique().execute();
      await db.schema.createIndex('jobs_lease').on('jobs').columns(['status', 'locked_until']).execute();
    },
  },
  '0005_preferences': {
    // A subscriber's preferences (endpoint 14 and its PATCH extensions): one row per setting, so two
    // PATCHes of different channels never lose each other's change. `workflow_id` is the workflow's
    // row id, or '' for the global preferences; `setting` is 'enabled' or a channel name.
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('preferences')
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('subscriber_id', 'text', (c) => c.notNull())
        .addColumn('workflow_id', 'text', (c) => c.notNull())
        .addColumn('setting', 'text', (c) => c.notNull())
        .addColumn('enabled', 'integer', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('preferences_pk', ['subscriber_id', 'workflow_id', 'setting'])
        .execute();
    },
  },
  '0006_message_seq': {
    // The order in which in-app messages became visible (committed), for the stream's ids and its
    // Last-Event-ID replay (inbox/stream.ts). Creation time cannot serve: a message written by a
    // transaction that commits late (another process, a slow step) may be older than one already
    // told. seq is given last in the writing transaction, under a lock held to its commit
    // (engine/sequence.ts), so a higher seq is never visible before a lower one. Other channels leave
    // it null. Messages written before this migration are numbered by creation time.
    async up(db: Kysely<any>) {
      await db.schema.alterTable('messages').addColumn('seq', 'bigint').execute();
      await sql`update messages set seq = r.n from (
        select id, row_number() over (order by created_at, id) as n from messages where channel = 'in_app'
      ) as r where messages.id = r.id`.execute(db);
      await db.schema.createIndex('messages_seq').on('messages').column('seq').unique().execute();
      await db.schema.createIndex('messages_stream').on('messages').columns(['subscriber_id', 'seq']).execute();
      if (db.getExecutor().adapter instanceof PostgresAdapter) {
        await sql`create sequence messages_seq_numbers`.execute(db);
        await sql`select setval('messages_seq_numbers', coalesce(max(seq), 0) + 1, false) from messages`.execute(db);
      }
    },
  },
  '0007_inbox_counts': {
    // SQLite: each subscriber's in-app counts (all, unseen, unread), kept by triggers in the
    // transaction that changes a message, so they are exact whatever writes run. The unseen count
    // (every open inbox asks for it) and the feed's totalCount read one row instead of counting
    // index entries, which was most of the service's CPU for the count (bench/server.ts).
    // PostgreSQL counts as before: there the count runs in the database's own processes, and a row
    // per subscriber updated by every writer would serialize them (and deadlock across statements).
    async up(db: Kysely<any>) {
      if (db.getExecutor().adapter instanceof PostgresAdapter) return;
      await sql`create table inbox_counts (
        subscriber_id text primary key,
        total integer not null,
        unseen integer not null,
        unread integer not null
      ) without rowid`.execute(db);
      await sql`insert into inbox_counts (subscriber_id, total, unseen, unread)
        select subscriber_id, count(*), sum(seen = 0), sum(read = 0) from messages where channel = 'in_app' group by subscriber_id`.execute(db);
      // (A message counts by its row as it is after the change, and no longer by the row before it.)
      const add = (row: 'new' | 'old') =>
        sql.raw(`insert into inbox_counts (subscriber_id, total, unseen, unread)
          select ${row}.subscriber_id, 1, ${row}.seen = 0, ${row}.read = 0 where ${row}.channel = 'in_app'
          on conflict (subscriber_id) do update set total = total + 1, unseen = unseen + excluded.unseen, unread = unread + excluded.unread;`);
      const remove = sql.raw(`update inbox_counts set total = total - 1, unseen = unseen - (old.seen = 0), unread = unread - (old.read = 0)
          where subscriber_id = old.subscriber_id and old.channel = 'in_app';`);
      await sql`create trigger inbox_counts_insert after insert on messages begin ${add('new')} end`.execute(db);
      await sql`create trigger inbox_counts_delete after delete on messages begin ${remove} end`.execute(db);
      await sql`create trigger inbox_counts_update after update of subscriber_id, channel, seen, read on messages
        begin ${remove} ${add('new')} end`.execute(db);
    },
  },
  '0008_inbox_versions': {
    // SQLite: a version of each subscriber's inbox, which changes whenever anything a feed answer
    // shows could change, so the feed's answers can be kept and served again while it holds
    // (the feed's answer cache, removed since: 0015). Triggers bump it in the writing transaction, whichever code
    // writes: a message of the subscriber inserted, updated (any column) or deleted, and the
    // subscriber's own row (embedded in every message). Templates (workflows, embedded too) are
    // versioned per environment in template_versions. A bump is an upsert, so it counts whichever
    // of these triggers and 0007's runs first on a subscriber's first message.
    //
    // PostgreSQL: no row every writer updates (0007's reason), but rows every writer inserts, which
    // lock nothing: each statement that changes a subscriber's in-app messages, or a subscriber,
    // adds a row of weight 1 per subscriber to inbox_changes (workflows: per environment to
    // template_changes), and the version is the sum of the subscriber's weights. Commits become
    // visible in one order, so a sum is reached once: a later state has a larger sum whatever the
    // order the writers started in. The feed folds a subscriber's rows into one of their total
    // weight (same sum) when they pile up.
    async up(db: Kysely<any>) {
      if (db.getExecutor().adapter instanceof PostgresAdapter) return changeRows(db);
      await sql`alter table inbox_counts add column version integer not null default 0`.execute(db);
      await sql`create table template_versions (environment_id text primary key, version integer not null) without rowid`.execute(db);
      const bump = (subscriber: string, when = 'true') =>
        sql.raw(`insert into inbox_counts (subscriber_id, total, unseen, unread, version) select ${subscriber}, 0, 0, 0, 1 where ${when}
          on conflict (subscriber_id) do update set version = version + 1;`);
      await sql`create trigger inbox_version_insert after insert on messages when new.channel = 'in_app' begin ${bump('new.subscriber_id')} end`.execute(db);
      await sql`create trigger inbox_version_delete after delete on messages when old.channel = 'in_app' begin ${bump('old.subscriber_id')} end`.execute(db);
      // (A message moved to another subscriber or channel changes both inboxes.)
      await sql`create trigger inbox_version_update after update on messages when old.channel = 'in_app' or new.channel = 'in_app'
        begin ${bump('old.subscriber_id')} ${bump('new.subscriber_id', 'new.subscriber_id <> old.subscriber_id')} end`.execute(db);
      await sql`create trigger inbox_version_subscriber after update on subscribers begin ${bump('new.id')} end`.execute(db);
      const template = (row: 'new' | 'old') =>
        sql.raw(`insert into template_versions (environment_id, version) values (${row}.environment_id, 1)
          on conflict (environment_id) do update set version = version + 1;`);
      await sql`create trigger template_version_insert after insert on workflows begin ${template('new')} end`.execute(db);
      await sql`create trigger template_version_update after update on workflows begin ${template('old')} ${template('new')} end`.execute(db);
      await sql`create trigger template_version_delete after delete on workflows begin ${template('old')} end`.execute(db);
    },
  },
  '0009_idempotency_expiry': {
    // Keys past their 24 hours are deleted every minute (server/src/plugins/idempotency.ts): by their age,
    // reading only the expired rows, not the whole table.
    async up(db: Kysely<any>) {
      await db.schema.createIndex('idempotency_keys_created').on('idempotency_keys').column('created_at').execute();
    },
  },
  '0010_workflow_severity': {
    // A workflow's severity (high | medium | low | none), as Novu's workflow model carries it; null is none.
    async up(db: Kysely<any>) {
      await db.schema.alterTable('workflows').addColumn('severity', 'text').execute();
    },
  },
  '0011_inbox_family': {
    // The subscriber notifications family (/v2/subscribers/{id}/notifications/...). A message may be
    // archived or snoozed; either takes it out of the default feed, the unseen count and the stream's
    // count, until it is unarchived or wakes. `severity`, `tags` and `data` are copied when the message
    // is written, so the family's filters read the message row alone.
    //
    // message_wakes holds each snoozed message's wake-up, one per message (re-snoozing moves it), claimed
    // by a scheduler as a due job is (engine/snooze.ts). Not a `jobs` row: jobs belong to a run, and
    // cancelling a trigger (endpoint 18) must not cancel a subscriber's snooze.
    //
    // Indexes: the default feed's hot reads (the unseen count, the Unread tab, the first page) read the
    // visible rows only, through partial indexes whose predicate the queries repeat literally
    // (VISIBLE in inbox/family-filter.ts). messages_feed stays for the archived and snoozed views.
    async up(db: Kysely<any>) {
      await db.schema
        .alterTable('messages')
        .addColumn('archived', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.alterTable('messages').addColumn('archived_at', 'text').execute();
      await db.schema.alterTable('messages').addColumn('snoozed_until', 'text').execute();
      await db.schema
        .alterTable('messages')
        .addColumn('redelivered_at', 'text', (c) => c.notNull().defaultTo('[]'))
        .execute();
      await db.schema.alterTable('messages').addColumn('severity', 'text').execute();
      await db.schema
        .alterTable('messages')
        .addColumn('tags', 'text', (c) => c.notNull().defaultTo('[]'))
        .execute();
      await db.schema.alterTable('messages').addColumn('data', 'text').execute();

      const visible = sql<SqlBool>`archived = 0 and snoozed_until is null`;
      await db.schema.dropIndex('messages_unseen').execute();
      await db.schema.dropIndex('messages_read').execute();
      await db.schema.createIndex('messages_unseen').on('messages').columns(['subscriber_id', 'channel', 'seen']).where(visible).execute();
      await db.schema.createIndex('messages_read').on('messages').columns(['subscriber_id', 'channel', 'read']).where(visible).execute();
      await db.schema
        .createIndex('messages_visible')
        .on('messages')
        .columns(['subscriber_id', 'channel', 'created_at', 'id'])
        .where(visible)
        .execute();

      await db.schema
        .createTable('message_wakes')
        .addColumn('message_id', 'text', (c) => c.primaryKey())
        .addColumn('subscriber_id', 'text', (c) => c.notNull())
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('run_at', 'bigint', (c) => c.notNull())
        .addColumn('locked_by', 'text')
        .addColumn('locked_until', 'bigint')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('message_wakes_due').on('message_wakes').column('run_at').execute();

      if (db.getExecutor().adapter instanceof PostgresAdapter) return;
      // SQLite: the kept counts (0007) count a message only while it is visible. Every message is
      // visible when this runs (the columns are new), so the counts kept so far stay right.
      const visibleRow = (row: 'new' | 'old') => `${row}.channel = 'in_app' and ${row}.archived = 0 and ${row}.snoozed_until is null`;
      const add = (row: 'new' | 'old') =>
        sql.raw(`insert into inbox_counts (subscriber_id, total, unseen, unread)
          select ${row}.subscriber_id, 1, ${row}.seen = 0, ${row}.read = 0 where ${visibleRow(row)}
          on conflict (subscriber_id) do update set total = total + 1, unseen = unseen + excluded.unseen, unread = unread + excluded.unread;`);
      const remove = sql.raw(`update inbox_counts set total = total - 1, unseen = unseen - (old.seen = 0), unread = unread - (old.read = 0)
          where subscriber_id = old.subscriber_id and ${visibleRow('old')};`);
      for (const name of ['inbox_counts_insert', 'inbox_counts_delete', 'inbox_counts_update']) await sql.raw(`drop trigger ${name}`).execute(db);
      await sql`create trigger inbox_counts_insert after insert on messages begin ${add('new')} end`.execute(db);
      await sql`create trigger inbox_counts_delete after delete on messages begin ${remove} end`.execute(db);
      await sql`create trigger inbox_counts_update after update of subscriber_id, channel, seen, read, archived, snoozed_until on messages
        begin ${remove} ${add('new')} end`.execute(db);
    },
  },
  '0012_topics': {
    // Topics (a key naming a group of subscribers a trigger may address) and who is subscribed to each.
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('topics')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('organization_id', 'text', (c) => c.notNull())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('name', 'text')
        .addColumn('data', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('topics_env_key', ['environment_id', 'key'])
        .execute();
      await db.schema
        .createTable('topic_subscriptions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('environment_id', 'text', (c) => c.notNull())
        .addColumn('topic_id', 'text', (c) => c.notNull())
        .addColumn('subscriber_id', 'text', (c) => c.notNull())
        .addColumn('identifier', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('topic_subscriptions_topic_subscriber', ['topic_id', 'subscriber_id'])
        .execute();
      await db.schema.createIndex('topic_subscriptions_subscriber').on('topic_subscriptions').column('subscriber_id').execute();
    },
  },
  '0013_trigger_payloads': {
    // A trigger's payload (and overrides) stored once, not in each of its notifications, jobs and
    // messages (a 1 MB payload to 100 recipients through 5 steps was 1.1 GB): new rows refer to it
    // by payload_id and hold '{}' in their own columns; rows written before keep theirs
    // (server/src/db/payloads.ts reads either).
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('payloads')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('environment_id', 'text', (column) => column.notNull())
        .addColumn('organization_id', 'text', (column) => column.notNull())
        .addColumn('transaction_id', 'text')
        .addColumn('payload', 'text', (column) => column.notNull())
        .addColumn('overrides', 'text', (column) => column.notNull())
        .addColumn('bytes', 'integer', (column) => column.notNull())
        .addColumn('created_at', 'text', (column) => column.notNull())
        .execute();
      for (const table of ['notifications', 'jobs', 'messages']) {
        await db.schema.alterTable(table).addColumn('payload_id', 'text').execute();
        await db.schema.createIndex(`${table}_payload`).on(table).column('payload_id').execute();
      }
    },
  },
  '0014_idempotency_caps': {
    // The answers kept are capped per subscriber and per organization, oldest evicted first
    // (server/src/plugins/idempotency.ts): each key says whose it is and how large its answer is.
    async up(db: Kysely<any>) {
      await db.schema.alterTable('idempotency_keys').addColumn('subscriber_key', 'text').execute();
      await db.schema.alterTable('idempotency_keys').addColumn('bytes', 'integer', (column) => column.notNull().defaultTo(0)).execute();
      await db.schema.createIndex('idempotency_keys_subscriber').on('idempotency_keys').columns(['organization_id', 'subscriber_key', 'created_at']).execute();
    },
  },
  '0015_no_feed_versions': {
    // The feed's answer cache is gone (inbox/answer.ts), and with it what 0008 kept for it: the
    // versions every write of a message, a subscriber or a workflow bumped (SQLite: triggers and
    // template_versions; PostgreSQL: the change rows' statement triggers, their functions and
    // tables). Each was one more write in every transaction that wrote messages.
    async up(db: Kysely<any>) {
      if (db.getExecutor().adapter instanceof PostgresAdapter) {
        for (const [table, ops] of [
          ['messages', ['insert', 'update', 'delete']],
          ['subscribers', ['update']],
          ['workflows', ['insert', 'update', 'delete']],
        ] as const) {
          for (const op of ops) await sql.raw(`drop trigger if exists ${table}_changed_${op} on ${table}`).execute(db);
        }
        for (const fn of ['messages_changed', 'subscribers_changed', 'workflows_changed']) await sql.raw(`drop function if exists ${fn}()`).execute(db);
        for (const table of ['inbox_changes', 'template_changes']) await sql.raw(`drop table if exists ${table}`).execute(db);
        return;
      }
      for (const trigger of [
        'inbox_version_insert',
        'inbox_version_delete',
        'inbox_version_update',
        'inbox_version_subscriber',
        'template_version_insert',
        'template_version_update',
        'template_version_delete',
      ]) {
        await sql.raw(`drop trigger if exists ${trigger}`).execute(db);
      }
      await sql`drop table if exists template_versions`.execute(db);
      await sql`alter table inbox_counts drop column version`.execute(db);
    },
  },
  '0016_idempotency_organization_oldest': {
    // An organization's answered keys in the order they were stored, with their bytes
    // (server/src/plugins/idempotency.ts): counting what an organization keeps reads this index
    // alone, and evicting its oldest reads only those it deletes. Without it both read every key
    // the organization keeps (100,000 at its default cap): 40 ms to count and 220 ms to evict with
    // SQLite in memory, on the event loop, once every 1,000 answers a process stores.
    async up(db: Kysely<any>) {
      await db.schema
        .createIndex('idempotency_keys_organization_oldest')
        .on('idempotency_keys')
        // (created_at before state: led by organization and state, SQLite's planner took this index for
        // a subscriber's count too, and read every key of the organization in each claim.)
        .columns(['organization_id', 'created_at', 'state', 'bytes'])
        .execute();
    },
  },
};

/** Migration 0008 on PostgreSQL: the insert-only change rows the feed's versions are sums of. */
async function changeRows(db: Kysely<any>) {
  for (const [table, column] of [['inbox_changes', 'subscriber_id'], ['template_changes', 'environment_id']]) {
    await sql.raw(`create table ${table} (${column} text not null, weight bigint not null)`).execute(db);
    await sql.raw(`create index ${table}_key on ${table} (${column}) include (weight)`).execute(db);
  }
  // One function per table changed; each trigger names its transition tables old_rows / new_rows.
  const fn = (name: string, target: string, rows: (t: string) => string) =>
    sql.raw(`create function ${name}() returns trigger language plpgsql as $$
      begin
        if TG_OP = 'INSERT' then insert into ${target} ${rows('new_rows')};
        elsif TG_OP = 'DELETE' then insert into ${target} ${rows('old_rows')};
        else insert into ${target} ${rows('old_rows')} union ${rows('new_rows')};
        end if;
        return null;
      end $$`);
  await fn('messages_changed', 'inbox_changes', (t) => `select distinct subscriber_id, 1 from ${t} where channel = 'in_app'`).execute(db);
  await fn('subscribers_changed', 'inbox_changes', (t) => `select distinct id, 1 from ${t}`).execute(db);
  await fn('workflows_changed', 'template_changes', (t) => `select distinct environment_id, 1 from ${t}`).execute(db);
  for (const [table, fnName, ops] of [
    ['messages', 'messages_changed', ['insert', 'update', 'delete']],
    ['subscribers', 'subscribers_changed', ['update']],
    ['workflows', 'workflows_changed', ['insert', 'update', 'delete']],
  ] as const) {
    for (const op of ops) {
      const referencing = op == 'insert' ? 'new table as new_rows' : op == 'delete' ? 'old table as old_rows' : 'old table as old_rows new table as new_rows';
      await sql.raw(`create trigger ${table}_changed_${op} after ${op} on ${table} referencing ${referencing} for each statement execute function ${fnName}()`).execute(db);
    }
  }
}
