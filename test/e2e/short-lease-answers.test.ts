/**
 * A turn's answer stands once its last write is stored. With the shortest lease
 * (`runs.lease_ttl: 1s`, renewed every third of a second) a renewal often reaches the store
 * right after the write that ended the turn cleared the lease; the store says the lease is no
 * longer held, and that must not turn a turn that answered into "this replica lost the run"
 * (503): a client that retries a 503 creates a second conversation, or decides again.
 *
 * Four clients each create a conversation with a destructive request and approve it, round
 * after round, on SQLite and on PostgreSQL: every answer is a success, and there are exactly
 * as many conversations as creations answered 201.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, databaseUrl, dropTestDatabase } from '../support/storage-drivers.js';
import { startAgent, type AgentProcess } from '../support/agent-process.js';
import { get, post } from '../support/http.js';
import { resourceNames } from '../support/resources-db.js';
import { resourceAgentScript, startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';
import { sized } from '../support/size.js';

const CLIENTS = 4;
const ROUNDS = sized(30, 100);
const SHORT_LEASE = { runs: { lease_ttl: '1s', takeover_interval: '200ms' } };

let model: ScriptedModelServer;

beforeAll(async () => {
  model = await startScriptedModel(resourceAgentScript);
});

afterAll(async () => {
  await model?.close();
});

interface Tally {
  statuses: Record<string, number>;
  created: number;
  /** Answers other than the expected success, with their bodies, for the failure message. */
  wrong: string[];
}

/** One client: ROUNDS times, a conversation that asks for a destructive call, then its approval. */
async function client(agent: AgentProcess, index: number, tally: Tally): Promise<void> {
  const count = (what: string, status: number) => (tally.statuses[`${what} ${status}`] = (tally.statuses[`${what} ${status}`] ?? 0) + 1);
  for (let round = 0; round < ROUNDS; round++) {
    const name = `c${index}-r${round}`;
    const created = await post(`${agent.url}/conversations`, { message: `add ${name} with value ${round}` });
    count('create', created.status);
    if (created.status !== 201) {
      tally.wrong.push(`create ${name}: ${created.status} ${JSON.stringify(created.body)}`);
      continue;
    }
    tally.created += 1;
    const uuid = created.body.result.approval.uuid as string;
    const approved = await post(`${agent.url}/approvals/${uuid}`, { approved: true });
    count('approve', approved.status);
    if (approved.status !== 200) tally.wrong.push(`approve ${name}: ${approved.status} ${JSON.stringify(approved.body)}`);
  }
}

async function conversationsOn(agent: AgentProcess): Promise<number> {
  const listed = await get(`${agent.url}/conversations?limit=1`);
  expect(listed.status).toBe(200);
  return listed.body.summary.total as number;
}

async function hammer(agent: AgentProcess): Promise<void> {
  const tally: Tally = { statuses: {}, created: 0, wrong: [] };
  await Promise.all(Array.from({ length: CLIENTS }, (_, index) => client(agent, index, tally)));
  expect(tally.wrong, JSON.stringify(tally.statuses)).toEqual([]);
  expect(tally.statuses).toEqual({ 'create 201': CLIENTS * ROUNDS, 'approve 200': CLIENTS * ROUNDS });
  // No conversation exists that its client was told had failed (a retry would duplicate it).
  expect(await conversationsOn(agent)).toBe(tally.created);
  // Every approved call ran exactly once.
  expect(resourceNames(join(agent.dir, 'resources.db')).length).toBe(CLIENTS * ROUNDS);
}

describe('runs.lease_ttl: 1s — a turn that answered is answered', () => {
  it(`SQLite: ${CLIENTS} clients × ${ROUNDS} create-then-approve, no 503 and no duplicated conversation`, async () => {
    const agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, config: SHORT_LEASE });
    try {
      await hammer(agent);
    } finally {
      await agent.stop();
    }
  }, 240_000);

  it(`PostgreSQL: ${CLIENTS} clients × ${ROUNDS} create-then-approve, no 503 and no duplicated conversation`, async () => {
    const database = await createTestDatabase();
    const agent = await startAgent({
      geminiBaseUrl: model.geminiBaseUrl,
      config: SHORT_LEASE,
      env: { ASG_DATABASE_URL: databaseUrl(database) },
    });
    try {
      await hammer(agent);
    } finally {
      await agent.stop();
      await dropTestDatabase(database);
    }
  }, 240_000);
});
