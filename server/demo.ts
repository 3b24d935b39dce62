import type { Db } from './db/index.ts';

/**
 * Serves the designers' playground (demo/) beside the service for `npm start`.
 * Returns the playground's URL, or null when there is nothing to serve yet.
 */
export async function startPlayground(_options: { apiUrl: string; db: Db }): Promise<{ url: string; close(): Promise<void> } | null> {
  return null;
}
