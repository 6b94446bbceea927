/**
 * The conversation store's two drivers under the same turns: one mesh on SQLite,
 * then one on a fresh PostgreSQL database, each measured for latency (one client, turn after
 * turn) and for throughput (LOAD.clients concurrent clients for LOAD.durationMs).
 */
import { startScriptedModel, resourceAgentScript } from '../support/scripted-model.js';
import { createBenchDatabase } from './bench-database.js';
import { concurrentTurns, sequentialTurns } from './load.js';
import { startMesh } from './meshes.js';
import type { Summary } from './stats.js';
import { printRows } from './table.js';
import type { ThroughputResult } from './throughput.js';
import { LOAD, WORKLOADS, type Workload } from './workloads.js';

export type Driver = 'SQLite' | 'PostgreSQL';

export interface DriverMeasurement {
  driver: Driver;
  workload: Workload['key'];
  label: string;
  /** One client, turn after turn. */
  latency: Summary;
  /** LOAD.clients clients at once. */
  throughput: ThroughputResult;
}

const LATENCY_SAMPLES = 100;

export interface DriverBenchOptions {
  /** Measure PostgreSQL too (false when it is unavailable). */
  postgres: boolean;
  load?: { clients: number; durationMs: number; warmupMs: number };
  latencySamples?: number;
}

export async function storeDriverBenchmarks(options: DriverBenchOptions): Promise<DriverMeasurement[]> {
  const load = options.load ?? LOAD;
  const samples = options.latencySamples ?? LATENCY_SAMPLES;
  const model = await startScriptedModel(resourceAgentScript);
  const measurements: DriverMeasurement[] = [];
  try {
    const drivers: Driver[] = options.postgres ? ['SQLite', 'PostgreSQL'] : ['SQLite'];
    for (const driver of drivers) {
      const database = driver === 'PostgreSQL' ? await createBenchDatabase() : undefined;
      try {
        const mesh = await startMesh(model, database?.url);
        try {
          for (const workload of WORKLOADS) {
            const latency = await sequentialTurns(mesh.url, workload.message, samples);
            await concurrentTurns({ targets: [mesh.url], clients: load.clients, durationMs: load.warmupMs, message: workload.message });
            const throughput = await concurrentTurns({
              targets: [mesh.url],
              clients: load.clients,
              durationMs: load.durationMs,
              message: workload.message,
            });
            measurements.push({ driver, workload: workload.key, label: workload.label, latency, throughput });
          }
        } finally {
          await mesh.stop();
        }
      } finally {
        await database?.drop();
      }
    }
  } finally {
    await model.close();
  }
  return measurements;
}

/** Per workload, the drivers side by side. */
export function printDriverTable(measurements: readonly DriverMeasurement[]): void {
  const clients = measurements[0]?.throughput.clients ?? LOAD.clients;
  const ordered = WORKLOADS.flatMap((workload) => measurements.filter((m) => m.workload === workload.key));
  printRows(
    ['turn', 'store', 'n', 'p50 ms', 'p90 ms', 'p99 ms', `turns/s (${clients} clients)`, 'p50 ms loaded', 'p99 ms loaded', 'failed'],
    ordered.map((m) => [
      m.label,
      m.driver,
      String(m.latency.n),
      m.latency.p50.toFixed(2),
      m.latency.p90.toFixed(2),
      m.latency.p99.toFixed(2),
      m.throughput.turnsPerSecond.toFixed(1),
      m.throughput.latency.p50.toFixed(2),
      m.throughput.latency.p99.toFixed(2),
      String(m.throughput.failures),
    ]),
  );
  for (const m of measurements) {
    if (m.throughput.failures > 0)
      console.log(`${m.driver}, ${m.label}: ${m.throughput.failures} failed turns, e.g. ${m.throughput.failureSamples[0]}`);
  }
}
