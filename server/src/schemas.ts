import { Type, type TUnsafe } from '@sinclair/typebox';

// Schema pieces shared by the route modules. Enums are plain JSON-schema enums (not unions of
// literals) so a failure reads "must be one of: a, b" rather than one error per branch.

export function StringEnum<const T extends readonly string[]>(values: T, options: { default?: T[number]; description?: string } = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

export const CHANNELS = ['in_app', 'email', 'sms', 'chat', 'push'] as const;
export type Channel = (typeof CHANNELS)[number];
export const Channel = StringEnum(CHANNELS);

/** A query parameter that may be given once or repeated; always an array after coercion. */
export const StringList = (options: { maxItems?: number } = {}) =>
  Type.Array(Type.String({ minLength: 1 }), { maxItems: options.maxItems ?? 100 });

export const SubscriberIdParam = Type.Object({ subscriberId: Type.String({ minLength: 1, maxLength: 255 }) });

/** Free-form JSON object (payload, data, overrides...). */
export const JsonObject = Type.Record(Type.String(), Type.Unknown());

/** A text that may be null (Novu's SDK sends null for a field it leaves empty), at most `maxLength` characters. */
export const NullableString = (maxLength: number) => Type.Unsafe<string | null>({ type: 'string', nullable: true, maxLength });
/** A JSON object that may be null. */
export const NullableObject = Type.Unsafe<Record<string, unknown> | null>({ type: 'object', nullable: true });
