import { newId } from '../ids.ts';
import { parseJson, toJson } from '../json.ts';
import type { ExecutionDetail, JobRow, Store } from './types.ts';

/** A new execution detail; `providerId` 'novu' and `source` 'Internal' unless given. */
export function executionDetail(now: Date, status: string, detail: string, extra: Partial<ExecutionDetail> = {}): ExecutionDetail {
  return {
    _id: newId(now.getTime()),
    createdAt: now.toISOString(),
    status,
    detail,
    isRetry: false,
    isTest: false,
    providerId: 'novu',
    raw: '',
    source: 'Internal',
    ...extra,
  };
}

/** Sets a job's status and appends an execution detail to it. */
export async function finishJob(
  store: Store,
  job: JobRow,
  status: string,
  detail: ExecutionDetail,
  now: Date,
  providerId: string | null = job.provider_id,
): Promise<void> {
  const details = parseJson<ExecutionDetail[]>(job.execution_details, []);
  details.push(detail);
  await store.kysely
    .updateTable('jobs')
    .set({ status, execution_details: toJson(details), provider_id: providerId, updated_at: now.toISOString() })
    .where('id', '=', job.id)
    .execute();
  job.status = status;
  job.execution_details = toJson(details);
  job.provider_id = providerId;
}
