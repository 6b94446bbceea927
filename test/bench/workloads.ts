/** The turns the store and replica benchmarks run, with the scripted resource agent's model. */
export interface Workload {
  key: 'read' | 'text';
  label: string;
  message: string;
}

export const WORKLOADS: readonly Workload[] = [
  { key: 'read', label: 'read turn (2 model calls, 1 tool call)', message: 'list resources' },
  { key: 'text', label: 'text turn, simple mode (1 model call)', message: 'hello' },
];

/** The load of every throughput measurement: fixed clients, a bounded time, after a warm-up left out. */
export const LOAD = { clients: 8, durationMs: 10_000, warmupMs: 2_000 } as const;
