/**
 * Votes and policies, fuzzed: seeded requests against one agent with token authentication and
 * approval policies of every kind — a rule that approves, one that rejects, one whose condition
 * fails at run time for some values (a stop for a human), and a quorum of two, not the
 * requester, that escalates to admin after a second. Messages make the model call with values
 * that land on each rule; decisions come from every principal (the requester, approvers, an
 * admin, a chat-only token, none, garbage) with approving, rejecting, editing and malformed
 * bodies, on approvals of the pool, decided ones and unknown uuids, many at once.
 *
 * Asserts: no 5xx and no request unanswered; every answer is one the rules allow (200, 201, 202
 * for a vote, 400, 401, 403, 404, 409); no call of a quorum's approval ran more than once;
 * every approval still reads back (200) after the run. The seed is fixed and printed;
 * ASG_FUZZ_SEED replays another one.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type AgentProcess } from '../support/agent-process.js';
import { get, post, request } from '../support/http.js';
import { resourceNames } from '../support/resources-db.js';
import { startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';
import { sized } from '../support/size.js';
import { prng } from '../support/seeded-random.js';
import { tokenAuth } from '../support/token-auth.js';

const SEED = Number(process.env.ASG_FUZZ_SEED ?? 27_020_027);
const TOTAL = sized(600, 3_000);
const CONCURRENCY = 12;

const TOKENS = {
  rita: 'rita-token-0123456789abcdef00',
  alice: 'alice-token-0123456789abcdef0',
  bob: 'bob-token-0123456789abcdef000',
  dave: 'dave-token-0123456789abcdef00',
  carol: 'carol-token-0123456789abcdef0',
  chatty: 'chatty-token-0123456789abcdef',
};
type Who = keyof typeof TOKENS;
const auth = tokenAuth({
  rita: { token: TOKENS.rita, roles: ['chat', 'approve'] },
  alice: { token: TOKENS.alice, roles: ['approve'] },
  bob: { token: TOKENS.bob, roles: ['approve'] },
  dave: { token: TOKENS.dave, roles: ['approve'] },
  carol: { token: TOKENS.carol, roles: ['admin'] },
  chatty: { token: TOKENS.chatty, roles: ['chat'] },
});

const POLICIES = [
  { name: 'tiny-adds', tools: ['resources_add'], when: 'args.value < 10', decide: 'approve' },
  { name: 'prod-adds', tools: ['resources_add'], when: "args.name.startsWith('prod-')", decide: 'reject', reason: 'not in production' },
  // A division by zero at 500: the condition fails, and the call stops for a human.
  {
    name: 'odd-adds',
    tools: ['resources_add'],
    when: 'args.value > 400 && args.value < 600 && 1000 / (args.value - 500) > 5',
    decide: 'approve',
  },
  {
    name: 'four-eyes',
    tools: ['resources_add'],
    when: 'args.value >= 1000',
    require: { approvals: 2, not_requester: true },
    escalate: { after: '1s', to_role: 'admin' },
  },
];

const ALLOWED = new Set([200, 201, 202, 400, 401, 403, 404, 409]);

let model: ScriptedModelServer;
let agent: AgentProcess;

beforeAll(async () => {
  model = await startScriptedModel();
  agent = await startAgent({
    geminiBaseUrl: model.geminiBaseUrl,
    env: auth.env,
    config: { ...auth.config, runs: { takeover_interval: '300ms' }, approvals: { policies: POLICIES } },
  });
}, 120_000);

afterAll(async () => {
  await agent?.stop();
  await model?.close();
});

describe('fuzz: votes and policies', () => {
  it(`${TOTAL} seeded votes and policy-shaped requests: no 5xx, no call run twice`, { timeout: 240_000 }, async () => {
    const rng = prng(SEED);
    console.log(`fuzz: votes, seed ${SEED}, ${TOTAL} requests, ${CONCURRENCY} at a time`);
    const as = (who: Who) => ({ authorization: `Bearer ${TOKENS[who]}` });
    // A pool of quorum approvals asked for by rita, each its own resource name.
    const quorum: { uuid: string; name: string }[] = [];
    for (let i = 0; i < 12; i++) {
      const name = `quorum-${i}`;
      const created = await post(`${agent.url}/conversations`, { message: `add ${name} with value ${1000 + i}` }, as('rita'));
      expect(created.status).toBe(201);
      quorum.push({ uuid: created.body.result.approval.uuid, name });
    }
    const others: string[] = [];

    const credential = (): Record<string, string> => {
      const roll = rng.next();
      if (roll < 0.8) return as(rng.pick(Object.keys(TOKENS) as Who[]));
      if (roll < 0.9) return {};
      return { authorization: rng.pick(['Bearer', 'Bearer x', `Bearer ${TOKENS.alice}x`, 'Basic abc']) };
    };
    const decisionBody = (): unknown =>
      rng.pick<() => unknown>([
        () => ({ approved: true }),
        () => ({ approved: true, reason: 'x'.repeat(rng.int(0, 2_100)) }),
        () => ({ approved: false, reason: 'no' }),
        () => ({ action: rng.pick(['approve', 'reject', 'maybe']) }),
        () => ({ answer: rng.pick(['yes', 'no', 'ok', '']) }),
        () => ({ approved: true, arguments: { name: `edited-${rng.int(0, 3)}`, value: rng.int(1000, 1003) } }),
        () => ({ approved: true, arguments: { name: 7 } }),
        () => ({ approved: true, arguments: 'not an object' }),
        () => ({ approved: false, arguments: { name: 'x', value: 1 } }),
        () => ({ approved: true, input: { name: 'x' } }),
        () => ({ approved: 'yes' }),
        () => ({}),
        () => '{"approved": tru',
        () => [true],
      ])();
    const message = (): string =>
      rng.pick<() => string>([
        () => `add tiny-${rng.int(0, 99)} with value ${rng.int(0, 9)}`,
        () => `add prod-${rng.int(0, 99)} with value ${rng.int(0, 5000)}`,
        () => `add odd-${rng.int(0, 99)} with value ${rng.pick([500, 450, 550, 499, 501])}`,
        () => `add big-${rng.int(0, 99)} with value ${rng.int(1000, 1_000_000)}`,
        () => `add mid-${rng.int(0, 99)} with value ${rng.int(10, 999)}`,
        () => 'list resources',
      ])();

    type Case = () => Promise<{ status: number; what: string }>;
    const cases: Case[] = [];
    for (let i = 0; i < TOTAL; i++) {
      const roll = rng.next();
      if (roll < 0.55) {
        const target = rng.chance(0.85) ? rng.pick(quorum).uuid : rng.chance(0.5) && others.length ? rng.pick(others) : crypto.randomUUID();
        const body = decisionBody();
        const headers = credential();
        cases.push(async () => {
          const answer = await request(
            `${agent.url}/approvals/${target}`,
            'POST',
            typeof body === 'string' ? body : JSON.stringify(body),
            headers,
          );
          return { status: answer.status, what: `POST /approvals/${target} ${JSON.stringify(body).slice(0, 80)}` };
        });
      } else if (roll < 0.75) {
        const text = message();
        const headers = credential();
        cases.push(async () => {
          const answer = await post(`${agent.url}/conversations`, { message: text }, headers);
          if (answer.status === 201 && answer.body.result?.approval?.uuid) others.push(answer.body.result.approval.uuid);
          return { status: answer.status, what: `POST /conversations ${text}` };
        });
      } else if (roll < 0.9) {
        const query = rng.pick([
          '?needs_my_vote=true',
          '?needs_my_vote=false',
          '?needs_my_vote=yes',
          '?needs_my_vote=true&status=approved',
          '?needs_my_vote=true&needs_my_vote=true',
          '?status=pending&limit=3',
        ]);
        const headers = credential();
        cases.push(async () => ({ status: (await get(`${agent.url}/approvals${query}`, headers)).status, what: `GET /approvals${query}` }));
      } else {
        const target = rng.pick(quorum).uuid;
        const headers = credential();
        cases.push(async () => ({
          status: (await get(`${agent.url}/approvals/${target}`, headers)).status,
          what: `GET /approvals/${target}`,
        }));
      }
    }

    const unexpected: string[] = [];
    const counts = new Map<number, number>();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < cases.length) {
          const { status, what } = await cases[next++]!();
          counts.set(status, (counts.get(status) ?? 0) + 1);
          if (!ALLOWED.has(status)) unexpected.push(`${status} ${what}`);
        }
      }),
    );
    console.log(
      `fuzz: votes, ${cases.length} answers: ${[...counts]
        .sort(([a], [b]) => a - b)
        .map(([status, count]) => `${status}×${count}`)
        .join(' ')}`,
    );
    expect(unexpected.slice(0, 10)).toEqual([]);
    // Votes did count: some quorum completed, some stayed pending (202 answered).
    expect(counts.get(202) ?? 0).toBeGreaterThan(0);

    const names = resourceNames(join(agent.dir, 'resources.db'));
    for (const { uuid, name } of quorum) {
      const record = await get(`${agent.url}/approvals/${uuid}`, as('carol'));
      expect(record.status).toBe(200);
      // The call of an approval runs once at most: with its own name, or with one edited in.
      const ran = names.filter((each) => each === name).length;
      expect(ran).toBeLessThanOrEqual(1);
      if (record.body.status === 'rejected' || record.body.status === 'pending') expect(ran).toBe(0);
    }
    expect((await get(`${agent.url}/health`)).status).toBe(200);
  });
});
