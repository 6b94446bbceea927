/**
 * Decisions while the database is partitioned from the agent (test/support/cuttable-proxy.ts
 * between the agent and PostgreSQL: nothing crosses, then what waited goes through). Every
 * answer a person gets is true to what happened:
 *  - a 2xx only when the decision is stored and its call ran and the turn answered;
 *  - an unknown outcome said as such (`"outcome": "unknown"`), naming the approval and the
 *    conversation to look at;
 *  - any other error only when nothing was done (the approval is still pending, nothing ran).
 * Once the network is back no conversation stays busy (a cut mark's lease runs out), no approval is
 * left executing without an execution or an outcome_unknown approval, and every approved call
 * ran at most once.
 *
 * Some decisions are in flight when the partition begins (their continuation's model call is
 * slow the first time, so that their lease runs out during the partition), the others are
 * sent during it.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, databaseUrl, dropTestDatabase } from '../support/storage-drivers.js';
import { startAgent, type AgentProcess } from '../support/agent-process.js';
import { startCuttableProxy, type CuttableProxy } from '../support/cuttable-proxy.js';
import { get, post, type JsonResponse } from '../support/http.js';
import { resourceNames } from '../support/resources-db.js';
import { resourceAgentScript, startScriptedModel, type ModelScript, type ScriptedModelServer } from '../support/scripted-model.js';
import { sized } from '../support/size.js';
import { until } from '../support/until.js';

const LEASE_TTL_MS = 3_000;
/** How long the network stays partitioned: longer than a lease, so that leases run out during it. */
const PARTITION_MS = sized(6_000, 10_000);
/** The first continuation of a decision sent before the partition is this slow: its lease runs out at the model. */
const FIRST_CONTINUATION_MS = LEASE_TTL_MS + 1_000;
const IN_FLIGHT = 5;
const DURING = 6;

let model: ScriptedModelServer;
let proxy: CuttableProxy;
let database: string;
let agent: AgentProcess;

const continued = new Set<string>();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** The resource agent; a decision's continuation (the model reading the call's result) is slow once per conversation. */
const script: ModelScript = async (request) => {
  if (request.toolResults.length > 0 && request.lastUserText.includes(' early-') && !continued.has(request.lastUserText)) {
    continued.add(request.lastUserText);
    await sleep(FIRST_CONTINUATION_MS);
  }
  return resourceAgentScript(request);
};

beforeAll(async () => {
  model = await startScriptedModel(script);
  database = await createTestDatabase();
  const direct = new URL(databaseUrl(database));
  proxy = await startCuttableProxy(`http://${direct.host}`);
  const proxied = new URL(direct);
  proxied.host = new URL(proxy.url).host;
  agent = await startAgent({
    geminiBaseUrl: model.geminiBaseUrl,
    config: { runs: { lease_ttl: `${LEASE_TTL_MS}ms`, takeover_interval: '200ms' }, chat: { turn_timeout: '40s' } },
    env: { ASG_DATABASE_URL: proxied.toString() },
  });
}, 60_000);

afterAll(async () => {
  await agent?.stop();
  await proxy?.close();
  await model?.close();
  if (database) await dropTestDatabase(database);
});

interface Asked {
  name: string;
  uuid: string;
  conversationId: string;
}

async function ask(name: string, index: number): Promise<Asked> {
  const created = await post(`${agent.url}/conversations`, { message: `add ${name} with value ${index}` });
  expect(created.status).toBe(201);
  return { name, uuid: created.body.result.approval.uuid, conversationId: created.body.conversation.id };
}

const busy = async (asked: readonly Asked[]) => {
  const reads = await Promise.all(asked.map((one) => get(`${agent.url}/conversations/${one.conversationId}?limit=1`)));
  return reads.filter((read) => read.status !== 200 || read.body.conversation.turn_running).length;
};

describe('a database partition during decisions', () => {
  it('tells every decider what happened, leaves nothing busy past lease_ttl once healed, nothing executing, nothing run twice', async () => {
    const early = await Promise.all(Array.from({ length: IN_FLIGHT }, (_, index) => ask(`early-${index}`, index)));
    const late = await Promise.all(Array.from({ length: DURING }, (_, index) => ask(`late-${index}`, index)));
    const decide = (one: Asked) => post(`${agent.url}/approvals/${one.uuid}`, { approved: true });

    const earlyAnswers = early.map(decide);
    await until('every early decision at its continuation', () => continued.size === IN_FLIGHT, 30_000);
    proxy.partition();
    const lateAnswers = late.map(decide);
    await sleep(PARTITION_MS);
    proxy.heal();

    // Nothing stays busy once the network is back: a mark the partition cut goes when its lease
    // runs out (lease_ttl); a decision that went through after the heal holds a live lease while
    // its turn runs, which on a loaded machine may take longer. Bounded, never for ever.
    await until('no conversation busy', async () => (await busy([...early, ...late])) === 0, LEASE_TTL_MS + 30_000);

    const answers = await Promise.all([...earlyAnswers, ...lateAnswers]);
    const all = [...early, ...late];
    const seen: Record<string, number> = {};
    for (const [index, answer] of answers.entries()) {
      const one = all[index]!;
      const record = (await get(`${agent.url}/approvals/${one.uuid}`)).body;
      const ran = resourceNames(join(agent.dir, 'resources.db')).filter((name) => name === one.name).length;
      const kind = answerKind(answer);
      seen[`${one.name.split('-')[0]} ${kind} ${answer.status}`] = (seen[`${one.name.split('-')[0]} ${kind} ${answer.status}`] ?? 0) + 1;
      const context = `${one.name}: ${answer.status} ${JSON.stringify(answer.body)} → ${JSON.stringify(record)}`;
      expect(ran, context).toBeLessThanOrEqual(1);
      if (kind === 'success') {
        // Decided, ran, answered.
        expect(record, context).toMatchObject({ status: 'approved', execution: 'done' });
        expect(ran, context).toBe(1);
        expect(answer.body.result.waiting_approval, context).toBe(false);
        expect(answer.body.result.response, context).toMatch(/^Done\. resources_add: /);
      } else if (kind === 'unknown') {
        // Said to be unknown, with where to look.
        expect(answer.body, context).toMatchObject({ approval_uuid: one.uuid, conversation_id: one.conversationId });
        expect(answer.body.error, context).toContain(`GET /approvals/${one.uuid}`);
      } else {
        // A failure: nothing was done.
        expect(record.status, context).toBe('pending');
        expect(ran, context).toBe(0);
      }
    }
    // Every answer is one of the three, and nothing that went through the partition is left half done.
    expect(
      Object.keys(seen).every((key) => /^(early|late) (success 200|unknown 50[34]|nothing [45]\d\d)$/.test(key)),
      JSON.stringify(seen),
    ).toBe(true);
    const approvals = (await get(`${agent.url}/approvals?limit=500`)).body.approvals as {
      uuid: string;
      status: string;
      execution?: string;
      outcome_unknown?: true;
      replaces?: string;
    }[];
    expect(approvals.filter((approval) => approval.execution === 'executing')).toEqual([]);
    for (const interrupted of approvals.filter((approval) => approval.execution === 'interrupted')) {
      expect(approvals.some((again) => again.outcome_unknown && again.replaces === interrupted.uuid)).toBe(true);
    }
    const names = resourceNames(join(agent.dir, 'resources.db'));
    expect(names.length).toBe(new Set(names).size);
  }, 120_000);
});

function answerKind(answer: JsonResponse): 'success' | 'unknown' | 'nothing' {
  if (answer.status >= 200 && answer.status < 300) return 'success';
  return answer.body?.outcome === 'unknown' ? 'unknown' : 'nothing';
}
