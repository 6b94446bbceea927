import { randomFillSync } from 'node:crypto';

// Ids drawn on every request (trace and span ids, session ids) come from one pool of random
// bytes, refilled whole when it runs out: one system call per few hundred ids, where
// `randomBytes` makes one (and a buffer) for each. The bytes are the same CSPRNG's, each used once.
const pool = Buffer.allocUnsafe(4096);
let next = pool.length;

/** `bytes` random bytes (at most 4096) as lowercase hex. */
export function randomHex(bytes: number): string {
  if (next + bytes > pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  const hex = pool.toString('hex', next, next + bytes);
  next += bytes;
  return hex;
}
