import { STATUS_CODES } from 'node:http';

/** Per-field validation detail, as decisions.md gives it: `{<field>: {messages, value}}`. */
export type FieldErrors = Record<string, { messages: string[]; value: unknown }>;

/**
 * An error that is the caller's to fix, or a state the caller must know of. The error handler in
 * plugins/errors.ts turns it into the error body of decisions.md; anything else becomes a 500 with an errorId.
 */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly errors?: FieldErrors,
    readonly headers?: Record<string, string>,
    /** Fields the answer carries beside the error body's (a 409's existing resource, as Novu's SDK reads it). */
    readonly resource?: Record<string, unknown>,
  ) {
    super(message);
  }
}

export const badRequest = (message: string) => new HttpError(400, message);
export const notFound = (what: string, id?: string) =>
  new HttpError(404, id === undefined ? `${what} not found` : `${what} '${id}' not found`);
export const conflict = (message: string, resource?: Record<string, unknown>) => new HttpError(409, message, undefined, undefined, resource);
export const unprocessable = (message: string, errors?: FieldErrors) => new HttpError(422, message, errors);
/** 422 for one field: its message is the field's name and `problem`, its value not echoed. */
export const fieldProblem = (field: string, problem: string) => unprocessable(`${field} ${problem}`, { [field]: { messages: [problem], value: null } });

export function errorBody(statusCode: number, message: string, path: string, extra?: Record<string, unknown>) {
  return {
    statusCode,
    error: STATUS_CODES[statusCode] ?? 'Error',
    message,
    timestamp: new Date().toISOString(),
    path,
    // A 422 always names its fields' problems, if only as `{}` (Novu's SDK reads a 422 only with them).
    ...(statusCode === 422 ? { errors: {} } : {}),
    ...extra,
  };
}

/** One sentence naming every field's problems: "limit must be <= 100; markAs is required". */
export function errorMessage(errors: FieldErrors): string {
  return Object.entries(errors)
    .map(([field, e]) => e.messages.map((m) => `${field} ${m}`).join('; '))
    .join('; ');
}
