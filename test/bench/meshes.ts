import { join } from 'node:path';
import { resourcesServer, startAgent, tempDir } from '../support/agent-process.js';
import type { ScriptedModelServer } from '../support/scripted-model.js';
import { undoOnInterrupt } from './interrupt.js';

/** A running mesh of the bench: its URL and the stop that is also run on an interrupt. */
export interface BenchMesh {
  url: string;
  stop(): Promise<void>;
}

/** One mesh (`bin/asg up`) on SQLite, or on the PostgreSQL database `databaseUrl`. */
export async function startMesh(model: ScriptedModelServer, databaseUrl?: string): Promise<BenchMesh> {
  const agent = await startAgent({
    geminiBaseUrl: model.geminiBaseUrl,
    ...(databaseUrl ? { env: { ASG_DATABASE_URL: databaseUrl } } : {}),
  });
  return { url: agent.url, stop: undoOnInterrupt(() => agent.stop()) };
}

/**
 * `count` meshes on one PostgreSQL database: replicas of every service. Their MCP resources
 * server shares one database file too, so that a tool reads the same resources on any replica.
 */
export async function startReplicas(model: ScriptedModelServer, databaseUrl: string, count: number): Promise<BenchMesh[]> {
  const resources = join(tempDir('asg-bench-replicas-'), 'resources.db');
  const meshes: BenchMesh[] = [];
  try {
    // One after the other: the first migrates the schema, the others find it made.
    for (let i = 0; i < count; i++) {
      const agent = await startAgent({
        geminiBaseUrl: model.geminiBaseUrl,
        config: { mcp_servers: [resourcesServer(resources)] },
        env: { ASG_DATABASE_URL: databaseUrl },
      });
      meshes.push({ url: agent.url, stop: undoOnInterrupt(() => agent.stop()) });
    }
    return meshes;
  } catch (error) {
    await stopAll(meshes);
    throw error;
  }
}

export async function stopAll(meshes: readonly BenchMesh[]): Promise<void> {
  await Promise.all(meshes.map((mesh) => mesh.stop()));
}
