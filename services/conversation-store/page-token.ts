import { invalidArgument } from '../common/grpc/errors.js';
import { storedId } from './ids.js';

/** Where the previous page ended, in the listing order (created_at DESC, id DESC). */
export interface PageCursor {
  createdAt: string;
  id: string;
}

const ISO_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A token as the store issues it: JSON, base64url, opaque to callers. */
function encoded(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

/** The JSON inside a token, or undefined for anything that is not one. */
function decoded(token: string): unknown {
  try {
    return JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}

function foreign(rpc: string): never {
  throw invalidArgument(
    `page_token was not issued by this store for ${rpc}: pass next_page_token from the previous ${rpc} response unchanged`,
  );
}

export function encodePageToken(cursor: PageCursor): string {
  return encoded([cursor.createdAt, cursor.id]);
}

/** The cursor inside a token from `encodePageToken`; INVALID_ARGUMENT for anything else. */
export function decodePageToken(token: string, rpc = 'ListConversations'): PageCursor {
  const value = decoded(token);
  if (Array.isArray(value) && value.length === 2) {
    const [createdAt, id] = value as unknown[];
    if (typeof createdAt === 'string' && ISO_MILLIS.test(createdAt) && typeof id === 'string' && id.length > 0) return { createdAt, id };
  }
  return foreign(rpc);
}

/** ListApprovals: (created_at, uuid). The token names its list: another list's token is refused, not read as a position. */
export function encodeApprovalsPageToken(cursor: PageCursor): string {
  return encoded(['approvals', cursor.createdAt, cursor.id]);
}

export function decodeApprovalsPageToken(token: string): PageCursor {
  const value = decoded(token);
  if (Array.isArray(value) && value.length === 3 && value[0] === 'approvals') {
    const [, createdAt, id] = value as unknown[];
    const uuid = typeof id === 'string' ? storedId(id) : undefined;
    if (typeof createdAt === 'string' && ISO_MILLIS.test(createdAt) && uuid !== undefined) return { createdAt, id: uuid };
  }
  return foreign('ListApprovals');
}

/** ListRuns: (started_at, run_id) of the last run of the previous page (newest first). */
export function encodeRunsPageToken(cursor: PageCursor): string {
  return encoded(['runs', cursor.createdAt, cursor.id]);
}

export function decodeRunsPageToken(token: string): PageCursor {
  const value = decoded(token);
  if (Array.isArray(value) && value.length === 3 && value[0] === 'runs') {
    const [, startedAt, id] = value as unknown[];
    const runId = typeof id === 'string' ? storedId(id) : undefined;
    if (typeof startedAt === 'string' && ISO_MILLIS.test(startedAt) && runId !== undefined) return { createdAt: startedAt, id: runId };
  }
  return foreign('ListRuns');
}

/** ListAudit: the id of the last entry of the previous page (newest first). */
export function encodeAuditPageToken(id: number): string {
  return encoded(['audit', id]);
}

export function decodeAuditPageToken(token: string): number {
  const value = decoded(token);
  if (Array.isArray(value) && value.length === 2 && value[0] === 'audit') {
    const id = value[1];
    if (typeof id === 'number' && Number.isSafeInteger(id) && id > 0) return id;
  }
  return foreign('ListAudit');
}
