/** Reads a JSON column; `fallback` when the column is null. */
export function parseJson<T>(text: string | null | undefined, fallback: T): T {
  if (text === null || text === undefined || text === '') return fallback;
  return JSON.parse(text) as T;
}

export const toJson = (value: unknown): string => JSON.stringify(value ?? null);

export const bool = (v: number | boolean | null | undefined): boolean => v === 1 || v === true;
export const int = (v: boolean | undefined | null): number => (v ? 1 : 0);
