import { createServer } from 'node:net';

/**
 * Ports handed out here lie below the kernel's ephemeral range (Linux: 32768–60999), where
 * the OS never picks a port for a bind to port 0. A port the OS picked would be free only
 * until the next such bind: a process started on it races every service (its own mesh's
 * included) that asks the OS for any port, and may find it taken.
 */
const FIRST = 20_000;
const LAST = 32_767;
const ATTEMPTS = 50;

function listensOn(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A loopback port that was free a moment ago, outside the range the OS hands out for port 0. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const port = FIRST + Math.floor(Math.random() * (LAST - FIRST + 1));
    if (await listensOn(port)) return port;
  }
  throw new Error(`no free loopback port between ${FIRST} and ${LAST} after ${ATTEMPTS} tries`);
}
