import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';
import { KeyResolver } from '../db/keys.ts';
import type { Db } from '../db/index.ts';
import { unseenCounter, type UnseenCounter } from '../db/read.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The database (plugins/db.ts). */
    db: Db;
    /** API keys to tenants, remembered (db/keys.ts). */
    keys: KeyResolver;
    /** A subscriber's unseen (or seen) in-app messages, capped: endpoint 13's and the streams' one reader (db/read.ts). */
    unseen: UnseenCounter;
  }
}

export interface DbPluginOptions {
  db: Db;
}

/** The database and the services every part of the app reads it through. The app does not close it: its owner does. */
const database: FastifyPluginAsync<DbPluginOptions> = async (app, { db }) => {
  app.decorate('db', db);
  app.decorate('keys', new KeyResolver(db));
  app.decorate('unseen', unseenCounter(db));
};

export default fp(database, { name: 'db' });
