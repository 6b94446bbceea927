/**
 * What the bench must undo if it is interrupted (Ctrl-C, SIGTERM) rather than fail: the meshes
 * run in their own process groups and would outlive it, and its databases would stay behind.
 * Failures are handled by the `finally` blocks; this covers the signals that skip them.
 */
const pending = new Set<() => Promise<unknown>>();
let installed = false;

function install(): void {
  if (installed) return;
  installed = true;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      console.error(`\n${signal}: stopping the bench's meshes and dropping its databases`);
      void (async () => {
        // Newest first: the meshes stop before the database they use is dropped.
        for (const undo of [...pending].reverse()) await undo().catch((error: unknown) => console.error(error));
        process.exit(130);
      })();
    });
  }
}

/**
 * Registers `undo` to run on an interrupt; the function returned runs it now (once) and
 * forgets it, for the `finally` of the normal path.
 */
export function undoOnInterrupt(undo: () => Promise<unknown>): () => Promise<void> {
  install();
  let done: Promise<unknown> | undefined;
  const once = () => (done ??= undo());
  pending.add(once);
  return async () => {
    pending.delete(once);
    await once();
  };
}
