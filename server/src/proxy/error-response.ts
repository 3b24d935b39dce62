import { errorBody } from '../errors.ts';

/** decisions.md's error body, the service's own (errors.ts), as a Response. */
export function errorResponse(status: number, message: string, path: string): Response {
  return Response.json(errorBody(status, message, path), { status });
}
