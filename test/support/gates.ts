/**
 * Answers a test lets go, by name. A scripted model that waits at a gate keeps its turn running
 * until the test opens it, however slow the machine: a test that needs a turn in flight while it
 * does something else opens the gate after that, instead of hoping a fixed delay lasts long
 * enough, and waits no longer than it must.
 */
export interface Gate {
  /** Resolves once the gate is opened. */
  opened: Promise<void>;
  open(): void;
}

/** A set of gates, each made on first use by whoever comes first: the model waiting or the test opening it. */
export function gates(): (name: string) => Gate {
  const all = new Map<string, Gate>();
  return (name) => {
    let gate = all.get(name);
    if (!gate) {
      let open = () => {};
      const opened = new Promise<void>((resolve) => {
        open = resolve;
      });
      gate = { opened, open };
      all.set(name, gate);
    }
    return gate;
  };
}
