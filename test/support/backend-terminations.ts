import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, databaseUrl, dropTestDatabase, onTestServer } from './storage-drivers.js';
import { resourcesServer, startAgent, tempDir, type AgentProcess } from './agent-process.js';
import { get, post, type JsonResponse } from './http.js';
import { resourceNames } from './resources-db.js';
import { resourceAgentScript, startScriptedModel, type ScriptedModelServer } from './scripted-model.js';
import { sized } from './size.js';
import { until } from './until.js';

const ROUNDS = 5;
/** Approvals per round, each decided on both replicas at once, and as many turns beside them. */
const PER_ROUND = sized(4, 16);
/**
 * What a request in flight while the database's backends are terminated may be answered: a
 * success, a 409, a 503 that says the database is away, or — when the termination cut the
 * COMMIT of its last write, so nobody can know whether it took — a 504 that says so
 * (`"outcome": "unknown"`). Any other 504 is a request that hung past its deadline: a failure.
 */
function answered({ status, body }: JsonResponse): boolean {
  return [200, 201, 409, 503].includes(status) || (status === 504 && body?.outcome === 'unknown');
}
const describeAnswer = ({ status, body }: JsonResponse) => `${status} ${JSON.stringify(body)}`;

/** Terminates every backend of `database` (the test's own connection is on the maintenance database); how many. */
async function terminateBackends(database: string): Promise<number> {
  const rows = await onTestServer<{ terminated: boolean }>(
    'SELECT pg_terminate_backend(pid) AS terminated FROM pg_stat_activity WHERE datname = $1',
    [database],
  );
  return rows.filter((row) => row.terminated).length;
}

/** Whether a backend of `database` is in the middle of a statement or a transaction now. */
async function busy(database: string): Promise<boolean> {
  const rows = await onTestServer("SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND state IN ('active', 'idle in transaction')", [
    database,
  ]);
  return rows.length > 0;
}

interface Decided {
  name: string;
  uuid: string;
  statuses: number[];
  answers: JsonResponse[];
}

/** A destructive call that stops for approval, asked on `replica`: its approval uuid. */
async function waitingCall(replica: AgentProcess, name: string, value: number): Promise<string> {
  const created = await post(`${replica.url}/conversations`, { message: `add resource ${name} with value ${value}` });
  expect(created.status).toBe(201);
  expect(created.body.result.waiting_approval).toBe(true);
  return created.body.result.approval.uuid as string;
}

/** The approval approved on both replicas at once. */
async function approveOnBoth(replicas: AgentProcess[], name: string, uuid: string): Promise<Decided> {
  const decisions = await Promise.all(replicas.map((replica) => post(`${replica.url}/approvals/${uuid}`, { approved: true })));
  return { name, uuid, statuses: decisions.map((decision: JsonResponse) => decision.status), answers: decisions };
}

export interface TerminationsCase {
  /** Extra environment of both replicas (ASG_EVENTS_URL). */
  env: Record<string, string>;
  /** events.prefix of both replicas (their own NATS stream). */
  prefix?: string;
  /** Checks once the replicas are done, with the database's name (the NATS stream's contents). */
  finally?(database: string): Promise<void>;
}

/**
 * Two full mesh processes on one PostgreSQL database, under a load of turns and decisions,
 * while every backend of that database is terminated ROUNDS times (what a PostgreSQL restart
 * or a failover does to every connection: SQLSTATE 57P01 on each). Both replicas live through
 * it; requests in flight are answered (a success, a 409, or a 503 that says the database is
 * away), never left hanging; every request afterwards succeeds; and no approved destructive
 * call ran twice.
 */
export function survivesBackendTerminations(label: string, terminations: TerminationsCase): void {
  describe(label, () => {
    let model: ScriptedModelServer;
    let database: string;
    let resources: string;
    const replicas: AgentProcess[] = [];
    const exits: (number | null)[] = [];

    beforeAll(async () => {
      model = await startScriptedModel(resourceAgentScript);
      database = await createTestDatabase();
      resources = join(tempDir('asg-terminations-'), 'resources.db');
      const { env, prefix } = terminations;
      for (let index = 0; index < 2; index++) {
        const replica = await startAgent({
          geminiBaseUrl: model.geminiBaseUrl,
          config: { mcp_servers: [resourcesServer(resources)], ...(prefix && { events: { prefix } }) },
          env: { ASG_DATABASE_URL: databaseUrl(database), ...env },
        });
        replicas.push(replica);
        void replica.exited.then((code) => exits.push(code));
      }
    }, 180_000);

    afterAll(async () => {
      for (const replica of replicas) await replica.stop();
      await model?.close();
      if (database) await dropTestDatabase(database);
    });

    it(`lives through ${ROUNDS} terminations of every backend under load, runs no approved call twice, and answers every request after`, async () => {
      const decided: Decided[] = [];
      const turns: JsonResponse[] = [];
      let terminated = 0;
      for (let round = 0; round < ROUNDS; round++) {
        for (const replica of replicas) await until('ready', async () => (await get(`${replica.url}/ready`)).status === 200, 20_000, 50);
        const names = Array.from({ length: PER_ROUND }, (_, index) => `cut-${round}-${index}`);
        const uuids = await Promise.all(names.map((name, index) => waitingCall(replicas[index % 2]!, name, index)));
        // Decisions of every approval on both replicas, and turns of new conversations, all at once.
        const load = Promise.all([
          Promise.all(names.map((name, index) => approveOnBoth(replicas, name, uuids[index]!))),
          Promise.all(names.map((_, index) => post(`${replicas[index % 2]!.url}/conversations`, { message: 'list resources' }))),
        ]);
        // In the middle of it: while some backend runs a statement or holds a transaction open.
        await until(`a busy backend of ${database} in round ${round}`, () => busy(database), 20_000, 5);
        terminated += await terminateBackends(database);
        const [decisions, statuses] = await load;
        decided.push(...decisions);
        turns.push(...statuses);
      }
      expect(terminated).toBeGreaterThanOrEqual(ROUNDS);
      expect(exits).toEqual([]);
      const unanswered = [...turns, ...decided.flatMap(({ answers }) => answers)].filter((answer) => !answered(answer));
      expect(unanswered.map(describeAnswer)).toEqual([]);

      // Every later request is answered as if nothing happened, on both replicas: the
      // decisions the terminations cut are taken again, and new calls stop and run.
      for (const replica of replicas)
        await until('ready again', async () => (await get(`${replica.url}/ready`)).status === 200, 20_000, 50);
      for (const cut of decided.filter(({ statuses }) => !statuses.includes(200))) {
        const again = await post(`${replicas[0]!.url}/approvals/${cut.uuid}`, { approved: true });
        expect([200, 409]).toContain(again.status);
      }
      const names = Array.from({ length: PER_ROUND }, (_, index) => `after-${index}`);
      const after = await Promise.all(
        names.map(async (name, index) => approveOnBoth(replicas, name, await waitingCall(replicas[index % 2]!, name, index))),
      );
      for (const { statuses } of after) expect([...statuses].sort()).toEqual([200, 409]);

      // Each approved call ran at most once, whatever the terminations cut; once for each
      // decision that was answered 200 (it answers after the call ran).
      const counts = new Map<string, number>();
      for (const name of resourceNames(resources)) counts.set(name, (counts.get(name) ?? 0) + 1);
      expect([...counts].filter(([, count]) => count > 1)).toEqual([]);
      // And only one of the two decisions of each approval hears that it decided.
      for (const { name, statuses, answers } of [...decided, ...after]) {
        if (statuses.includes(200)) expect(counts.get(name), name).toBe(1);
        expect(statuses.filter((status) => status === 200).length, answers.map(describeAnswer).join(' / ')).toBeLessThanOrEqual(1);
      }
      await terminations.finally?.(database);
      expect(exits).toEqual([]);
    }, 120_000);
  });
}
