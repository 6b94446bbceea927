import { invalidArgument } from '../common/grpc/errors.js';

/** Where the previous page ended, in the listing order (created_at DESC, id DESC). */
export interface PageCursor {
  createdAt: string;
  id: string;
}

const ISO_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function encodePageToken(cursor: PageCursor): string {
  return Buffer.from(JSON.stringify([cursor.createdAt, cursor.id]), 'utf8').toString('base64url');
}

/** The cursor inside a token from `encodePageToken`; INVALID_ARGUMENT for anything else. */
export function decodePageToken(token: string): PageCursor {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    decoded = undefined;
  }
  if (Array.isArray(decoded) && decoded.length === 2) {
    const [createdAt, id] = decoded as unknown[];
    if (typeof createdAt === 'string' && ISO_MILLIS.test(createdAt) && typeof id === 'string' && id.length > 0) return { createdAt, id };
  }
  throw invalidArgument('page_token was not issued by this store: pass next_page_token from the previous ListConversations response unchanged');
}
