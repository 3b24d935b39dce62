import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { FieldErrors } from '../errors.ts';
import { isSafeUrlTemplate } from '../render.ts';
import { JsonObject } from '../schemas.ts';
import type { StepType } from './types.ts';

// The controlValues each step type takes (decisions.md, "Beyond the spec"). The route validates
// them per step type here, after the body schema, so errors name the step: `steps.0.controlValues.body`.

/** An enum TypeBox's Value.Errors understands (the routes' StringEnum is for ajv only). */
const Enum = <const T extends readonly string[]>(values: T) => Type.Union(values.map((v) => Type.Literal(v)) as never) as unknown as TSchema & { static: T[number] };

const UrlTemplate = Type.String({ minLength: 1, maxLength: 2048 });
const Redirect = Type.Object({
  url: UrlTemplate,
  target: Type.Optional(Enum(['_self', '_blank', '_parent', '_top'] as const)),
});
const Action = Type.Object({
  label: Type.String({ minLength: 1, maxLength: 200 }),
  redirect: Type.Optional(Redirect),
  /** Shown in place of the buttons once this one was chosen. */
  resultContent: Type.Optional(Type.String({ maxLength: 500 })),
});
/** Feed identifiers travel comma-separated in queries, so they hold no commas or spaces. */
export const FEED_IDENTIFIER_PATTERN = '^[A-Za-z0-9_.:-]{1,100}$';

export const InAppControls = Type.Object({
  subject: Type.Optional(Type.String({ maxLength: 1000 })),
  body: Type.String({ minLength: 1, maxLength: 10_000 }),
  avatar: Type.Optional(UrlTemplate),
  redirect: Type.Optional(Redirect),
  primaryAction: Type.Optional(Action),
  secondaryAction: Type.Optional(Action),
  feedIdentifier: Type.Optional(Type.String({ pattern: FEED_IDENTIFIER_PATTERN })),
  data: Type.Optional(JsonObject),
});
export type InAppControls = Static<typeof InAppControls>;

export const TIME_UNITS = ['seconds', 'minutes', 'hours', 'days'] as const;
export type TimeUnit = (typeof TIME_UNITS)[number];
const Amount = Type.Integer({ minimum: 1, maximum: 1_000_000 });

export const DelayControls = Type.Object({ amount: Amount, unit: Enum(TIME_UNITS) });
export type DelayControls = Static<typeof DelayControls>;

export const DigestControls = Type.Object({
  amount: Amount,
  unit: Enum(TIME_UNITS),
  digestKey: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
});
export type DigestControls = Static<typeof DigestControls>;

/** Other channels: free-form for now (subject, body...); their modules may tighten this. */
const ChannelControls = JsonObject;

const CONTROLS: Record<StepType, TSchema> = {
  in_app: InAppControls,
  delay: DelayControls,
  digest: DigestControls,
  email: ChannelControls,
  sms: ChannelControls,
  chat: ChannelControls,
  push: ChannelControls,
};

/** Milliseconds in one `unit`. */
const SECOND_MS = 1000;
export const UNIT_MS: Record<TimeUnit, number> = { seconds: SECOND_MS, minutes: 60 * SECOND_MS, hours: 60 * 60 * SECOND_MS, days: 24 * 60 * 60 * SECOND_MS };

/** Validation errors of one step's controlValues, keyed `<prefix>.<path>`; empty when valid. */
export function controlErrors(type: StepType, controlValues: Record<string, unknown>, prefix: string): FieldErrors {
  const errors: FieldErrors = {};
  const add = (path: string, message: string, value: unknown) => {
    const field = path ? `${prefix}.${path}` : prefix;
    const entry = (errors[field] ??= { messages: [], value: value ?? null });
    if (!entry.messages.includes(message)) entry.messages.push(message);
  };
  for (const problem of Value.Errors(CONTROLS[type], controlValues)) {
    const path = problem.path.split('/').filter(Boolean).join('.');
    // A union of string literals (an enum) is told as its values.
    const literals = (problem.schema.anyOf as { const?: unknown }[] | undefined)?.map((branch) => branch.const);
    let message = problem.message;
    if (problem.value === undefined) message = 'is required';
    else if (literals?.every((literal) => typeof literal === 'string')) message = `must be one of: ${literals.join(', ')}`;
    add(path, message, problem.value);
  }
  if (type === 'in_app' && Object.keys(errors).length === 0) {
    const inApp = controlValues as InAppControls;
    const urls: [string, string | undefined][] = [
      ['avatar', inApp.avatar],
      ['redirect.url', inApp.redirect?.url],
      ['primaryAction.redirect.url', inApp.primaryAction?.redirect?.url],
      ['secondaryAction.redirect.url', inApp.secondaryAction?.redirect?.url],
    ];
    for (const [path, url] of urls) {
      if (url !== undefined && !isSafeUrlTemplate(url)) add(path, 'must be an http(s) URL or a relative path starting with /', url);
    }
  }
  return errors;
}
