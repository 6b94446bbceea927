/**
 * Replicas, scaled up: three full mesh processes (`bin/asg up`) on one PostgreSQL
 * database, 50 conversations each waiting for one approval (20 on CI; ASG_TEST_SIZE=full for
 * 50), and four decisions per approval racing over the three replicas at once. Each approval is
 * claimed exactly once (one 200, three 409, whichever replica is asked) and each stored call runs
 * exactly once (one resource per approval on the shared resources database, no duplicate).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, databaseUrl, dropTestDatabase } from '../support/storage-drivers.js';
import { resourcesServer, startAgent, tempDir, type AgentProcess } from '../support/agent-process.js';
import { post } from '../support/http.js';
import { resourceNames } from '../support/resources-db.js';
import { resourceAgentScript, startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';
import { sized } from '../support/size.js';

const APPROVALS = sized(20, 50);
const DECISIONS_PER_APPROVAL = 4;

let model: ScriptedModelServer;
let database: string;
let resources: string;
const replicas: AgentProcess[] = [];

beforeAll(async () => {
  model = await startScriptedModel(resourceAgentScript);
  database = await createTestDatabase();
  resources = join(tempDir('asg-replicas-scale-'), 'resources.db');
  // One after the other: later ones find the schema the first one's migration made.
  for (let index = 0; index < 3; index++) {
    replicas.push(
      await startAgent({
        geminiBaseUrl: model.geminiBaseUrl,
        config: { mcp_servers: [resourcesServer(resources)] },
        env: { ASG_DATABASE_URL: databaseUrl(database) },
      }),
    );
  }
}, 240_000);

afterAll(async () => {
  await Promise.all(replicas.map((replica) => replica.stop()));
  await model?.close();
  if (database) await dropTestDatabase(database);
});

describe('three mesh replicas on one PostgreSQL database', () => {
  it(`claims ${APPROVALS} approvals once each when ${APPROVALS * DECISIONS_PER_APPROVAL} decisions race over all three: each stored call runs once`, async () => {
    const replicaOf = (index: number) => replicas[index % replicas.length]!;
    // The pauses are made on every replica too.
    const uuids = await Promise.all(
      Array.from({ length: APPROVALS }, async (_, index) => {
        const created = await post(`${replicaOf(index).url}/conversations`, { message: `add resource scale-${index} with value ${index}` });
        expect(created.status).toBe(201);
        expect(created.body.result.waiting_approval).toBe(true);
        return created.body.result.approval.uuid as string;
      }),
    );
    expect(new Set(uuids).size).toBe(APPROVALS);

    const decisions = uuids.flatMap((uuid, index) =>
      Array.from({ length: DECISIONS_PER_APPROVAL }, (_, copy) => ({ uuid, replica: replicaOf(index + copy) })),
    );
    const answers = await Promise.all(
      decisions.map(async ({ uuid, replica }) => ({
        uuid,
        status: (await post(`${replica.url}/approvals/${uuid}`, { approved: true })).status,
      })),
    );

    for (const uuid of uuids) {
      const statuses = answers
        .filter((answer) => answer.uuid === uuid)
        .map((answer) => answer.status)
        .sort();
      expect(statuses, uuid).toEqual([200, 409, 409, 409]);
    }
    const names = resourceNames(resources);
    expect(names).toHaveLength(APPROVALS);
    expect(new Set(names)).toEqual(new Set(uuids.map((_, index) => `scale-${index}`)));
  }, 240_000);
});
