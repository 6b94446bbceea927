/**
 * Resolves once the event loop has polled for I/O: what waits meanwhile (a request, a health
 * check) is served before the caller goes on. One setImmediate is not enough: called from an I/O
 * callback it runs in the same turn of the loop, before the next poll; the second one, made
 * from the check phase, runs only after it.
 */
export async function turnOfEventLoop(): Promise<void> {
  for (let i = 0; i < 2; i++) await new Promise((resolve) => setImmediate(resolve));
}
