import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'vite';
import { hashKey } from './db/keys.ts';
import type { Db } from './db/index.ts';

// The repository's root (server/src/demo.ts or, compiled, server/dist/demo.js): the playground runs from a checkout.
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** What the playground page needs: where the service is, its development key, who and what to try. */
export interface PlaygroundConfig {
  apiUrl: string;
  apiKey: string | null;
  subscribers: { subscriberId: string; name: string; email: string | null; avatar: string | null }[];
  workflows: { workflowId: string; name: string; description: string; variables: string[] }[];
}

/** The `{{payload.x.y}}` placeholders a workflow's steps use, as dotted paths (`x.y`). */
export function payloadVariables(steps: unknown): string[] {
  const found = new Set<string>();
  for (const m of JSON.stringify(steps ?? []).matchAll(/\{\{\s*payload\.([A-Za-z0-9_.]+)\s*\}\}/g)) found.add(m[1]!);
  return [...found];
}

/** Reads the playground's configuration: the demo key (settings row 'demo_api_key') and its environment's data. */
export async function playgroundConfig(apiUrl: string, db: Db): Promise<PlaygroundConfig> {
  const k = db.kysely;
  const setting = await k.selectFrom('settings').select('value').where('name', '=', 'demo_api_key').executeTakeFirst();
  const apiKey = setting?.value ?? null;
  const empty: PlaygroundConfig = { apiUrl, apiKey, subscribers: [], workflows: [] };
  if (!apiKey) return empty;
  const keyRow = await k.selectFrom('api_keys').select('environment_id').where('key_hash', '=', hashKey(apiKey)).executeTakeFirst();
  if (!keyRow) return empty;
  const env = keyRow.environment_id;
  const subscribers = await k
    .selectFrom('subscribers')
    .select(['subscriber_id', 'first_name', 'last_name', 'email', 'avatar'])
    .where('environment_id', '=', env)
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .limit(100)
    .execute();
  const workflows = await k
    .selectFrom('workflows')
    .select(['workflow_id', 'name', 'description', 'steps'])
    .where('environment_id', '=', env)
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .limit(100)
    .execute();
  return {
    apiUrl,
    apiKey,
    subscribers: subscribers.map((s) => ({
      subscriberId: s.subscriber_id,
      name: [s.first_name, s.last_name].filter(Boolean).join(' ') || s.subscriber_id,
      email: s.email,
      avatar: s.avatar,
    })),
    workflows: workflows.map((w) => {
      let steps: unknown = [];
      try {
        steps = JSON.parse(w.steps);
      } catch {
        // a broken row shows no variables
      }
      return { workflowId: w.workflow_id, name: w.name, description: w.description ?? '', variables: payloadVariables(steps) };
    }),
  };
}

/** Serves `/demo-config.json` to the page (the dev server listens on localhost only). */
function demoConfigPlugin(apiUrl: string, db: Db): Plugin {
  return {
    name: 'notif-demo-config',
    configureServer(server) {
      server.middlewares.use('/demo-config.json', (_req, res) => {
        playgroundConfig(apiUrl, db).then(
          (config) => {
            res.setHeader('content-type', 'application/json; charset=utf-8');
            res.setHeader('cache-control', 'no-store');
            res.end(JSON.stringify(config));
          },
          (err: unknown) => {
            res.statusCode = 500;
            res.end(JSON.stringify({ message: String(err) }));
          },
        );
      });
    },
  };
}

/**
 * Serves the designers' playground (demo/) beside the service for `npm start`: a Vite dev server on
 * a free port from 5173 up, on 127.0.0.1, whose page reads its configuration from /demo-config.json.
 */
export async function startPlayground(options: { apiUrl: string; db: Db; port?: number }): Promise<{ url: string; close(): Promise<void> } | null> {
  // vite is the repository's development dependency, not the package's: an installed service has no playground.
  const vite = await import('vite').catch(() => null);
  if (!vite || !existsSync(`${ROOT}demo/index.html`)) throw new Error('--demo serves the playground from a checkout of the notif-inbox repository (npm start there); this install has none');
  const { createServer } = vite;
  const apiUrl = options.apiUrl.replace('[::1]', 'localhost');
  const server = await createServer({
    configFile: false,
    root: `${ROOT}demo`,
    clearScreen: false,
    logLevel: 'warn',
    plugins: [demoConfigPlugin(apiUrl, options.db)],
    // The playground's own pages only: demo/react and demo/vue are apps of their own (npm run example),
    // whose imports resolve through their own configs; scanned from here they fail on a fresh clone.
    optimizeDeps: { entries: ['index.html', 'states.html'] },
    server: {
      host: '127.0.0.1',
      port: options.port ?? 5173,
      strictPort: false,
      fs: { allow: [ROOT] },
    },
  });
  await server.listen();
  const url = server.resolvedUrls?.local[0] ?? `http://127.0.0.1:${server.config.server.port}/`;
  return { url, close: () => server.close() };
}
