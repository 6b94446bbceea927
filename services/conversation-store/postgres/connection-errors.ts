import type pg from 'pg';

/**
 * Whether a `pg` error says the database could not be reached or the connection was lost (it passes once the database
 * is back: try again), rather than one it answered (a constraint, a refused login: it needs a person).
 */
export function isConnectionError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    // 08: connection exception; 57P01-57P03: admin or crash shutdown, cannot connect now
    // (starting up, shutting down, in recovery); 53: insufficient resources (too many connections).
    if (code.startsWith('08') || ['57P01', '57P02', '57P03'].includes(code) || code.startsWith('53')) return true;
    if (NETWORK_CODES.has(code)) return true;
  }
  const message = (error as { message?: unknown }).message;
  return typeof message === 'string' && LOST_CONNECTION.test(message);
}

/** Node's codes of a connection that could not be made or broke. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** pg's own words for a connection that ended, timed out or broke earlier. */
const LOST_CONNECTION =
  /Connection terminated|timeout exceeded when trying to connect|connection timeout|not queryable|Query read timeout/i;

/** Ends a connection given up on without waiting for it or hearing from it again (one that hangs is never waited for). */
export function discard(client: pg.Client): Promise<void> {
  client.removeAllListeners('end');
  client.on('error', () => undefined);
  return client.end().catch(() => undefined);
}

/** `work`, or a rejection saying `message` once `ms` passed. */
export async function within<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
