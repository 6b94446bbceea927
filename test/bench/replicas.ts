/**
 * Throughput of 1, 2 and 3 mesh processes on one PostgreSQL database: the same
 * load (LOAD.clients clients, LOAD.durationMs) spread round robin over the replicas' HTTP
 * ports, so that each client's conversation is served by every replica in turn. Each replica
 * count gets a fresh database. On one machine the replicas share its cores: this measures what
 * replication costs and gains there, not what a cluster of machines would do.
 */
import { resourceAgentScript, startScriptedModel } from '../support/scripted-model.js';
import { createBenchDatabase } from './bench-database.js';
import { concurrentTurns } from './load.js';
import { startReplicas, stopAll } from './meshes.js';
import { printRows } from './table.js';
import type { ThroughputResult } from './throughput.js';
import { LOAD, WORKLOADS, type Workload } from './workloads.js';

export interface ReplicaMeasurement {
  replicas: number;
  workload: Workload['key'];
  label: string;
  throughput: ThroughputResult;
}

export interface ReplicaBenchOptions {
  counts?: readonly number[];
  load?: { clients: number; durationMs: number; warmupMs: number };
}

export async function replicaBenchmarks(options: ReplicaBenchOptions = {}): Promise<ReplicaMeasurement[]> {
  const load = options.load ?? LOAD;
  const model = await startScriptedModel(resourceAgentScript);
  const measurements: ReplicaMeasurement[] = [];
  try {
    for (const count of options.counts ?? [1, 2, 3]) {
      const database = await createBenchDatabase();
      try {
        const meshes = await startReplicas(model, database.url, count);
        try {
          const targets = meshes.map((mesh) => mesh.url);
          for (const workload of WORKLOADS) {
            await concurrentTurns({ targets, clients: load.clients, durationMs: load.warmupMs, message: workload.message });
            const throughput = await concurrentTurns({
              targets,
              clients: load.clients,
              durationMs: load.durationMs,
              message: workload.message,
            });
            measurements.push({ replicas: count, workload: workload.key, label: workload.label, throughput });
          }
        } finally {
          await stopAll(meshes);
        }
      } finally {
        await database.drop();
      }
    }
  } finally {
    await model.close();
  }
  return measurements;
}

export function printReplicaTable(measurements: readonly ReplicaMeasurement[]): void {
  const ordered = WORKLOADS.flatMap((workload) => measurements.filter((m) => m.workload === workload.key));
  printRows(
    ['turn', 'replicas', 'clients', 'turns', 'turns/s', 'p50 ms', 'p99 ms', 'failed', 'turns per replica'],
    ordered.map((m) => [
      m.label,
      String(m.replicas),
      String(m.throughput.clients),
      String(m.throughput.turns),
      m.throughput.turnsPerSecond.toFixed(1),
      m.throughput.latency.p50.toFixed(2),
      m.throughput.latency.p99.toFixed(2),
      String(m.throughput.failures),
      m.throughput.turnsPerTarget.join(' / '),
    ]),
  );
  for (const m of measurements) {
    if (m.throughput.failures > 0)
      console.log(`${m.replicas} replica(s), ${m.label}: ${m.throughput.failures} failed turns, e.g. ${m.throughput.failureSamples[0]}`);
  }
}
