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

/**
 * The tokens of a list walked by (time, id): `kind` names the list in its tokens (a ListConversations token, the first
 * kind, names none), so that another list's token is refused, not read as a position; `idOf` is the id as stored.
 */
function cursorTokens(kind: string | undefined, rpc: string, idOf: (id: string) => string | undefined) {
  const tag = kind === undefined ? [] : [kind];
  return {
    encode: (cursor: PageCursor): string => encoded([...tag, cursor.createdAt, cursor.id]),
    /** The cursor inside a token of `encode`; INVALID_ARGUMENT for anything else. */
    decode(token: string, listRpc = rpc): PageCursor {
      const value = decoded(token);
      if (Array.isArray(value) && value.length === tag.length + 2 && (kind === undefined || value[0] === kind)) {
        const [createdAt, id] = value.slice(tag.length) as unknown[];
        const stored = typeof id === 'string' ? idOf(id) : undefined;
        if (typeof createdAt === 'string' && ISO_MILLIS.test(createdAt) && stored !== undefined) return { createdAt, id: stored };
      }
      return foreign(listRpc);
    },
  };
}

/** ListConversations (and ListPendingApprovals): (created_at, id). */
export const { encode: encodePageToken, decode: decodePageToken } = cursorTokens(undefined, 'ListConversations', (id) => id || undefined);
/** ListApprovals: (created_at, uuid). */
export const { encode: encodeApprovalsPageToken, decode: decodeApprovalsPageToken } = cursorTokens('approvals', 'ListApprovals', storedId);
/** ListRuns: (started_at, run_id) of the last run of the previous page (newest first). */
export const { encode: encodeRunsPageToken, decode: decodeRunsPageToken } = cursorTokens('runs', 'ListRuns', storedId);

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
