/** JSON text to be written as it is into a larger JSON text (see rawJson). */
export class RawJson {
  constructor(readonly text: string) {}
}

/**
 * A JSON column as its text, `fallback` serialized when the column is null: for an answer that
 * writes the column out again (the feed), parsing it only to serialize it again is wasted. Our
 * JSON columns hold only what JSON.stringify wrote.
 */
export const rawJson = (text: string | null | undefined, fallback: unknown): RawJson => new RawJson(text || JSON.stringify(fallback));

/** Reads a JSON column; `fallback` when the column is null. */
export function parseJson<T>(text: string | null | undefined, fallback: T): T {
  if (text === null || text === undefined || text === '') return fallback;
  return JSON.parse(text) as T;
}

export const toJson = (value: unknown): string => JSON.stringify(value ?? null);

export const bool = (v: number | boolean | null | undefined): boolean => v === 1 || v === true;
export const int = (v: boolean | undefined | null): number => (v ? 1 : 0);

/** A nullable column's value, or undefined (left out of the JSON) when it is null. */
export const optional = <T>(value: T | null | undefined): T | undefined => (value === null ? undefined : value);
