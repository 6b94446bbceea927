/**
 * `kill -9` of the mesh process running a turn (the model slow on
 * purpose) → another replica takes the run over once its lease has expired and finishes it
 * within lease + 10 s. Twenty times in a loop (six on CI: each of the three places, on each of the
 * two replicas; ASG_TEST_SIZE=full for twenty), over two replicas on one PostgreSQL, each killed
 * replica replaced by a new process: no run is lost, no destructive call runs twice, no
 * conversation is left stuck. The kills land at three places of a turn:
 *  - at the model of a message's turn: the run goes on from the stored history;
 *  - at the model after an approved call whose result was recorded: it goes on after the
 *    result, and the call is not run again;
 *  - inside the approved destructive call: its outcome is unknown, so it is NOT run again —
 *    the conversation waits on a new approval marked outcome_unknown; rejecting it ends it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, databaseUrl, dropTestDatabase } from '../support/storage-drivers.js';
import { MISBEHAVING } from '../fixtures/mcp-peers.js';
import { startAgent, tempDir, type AgentProcess } from '../support/agent-process.js';
import { gates } from '../support/gates.js';
import { get, post } from '../support/http.js';
import { startScriptedModel, type ModelScript, type ScriptedModelServer } from '../support/scripted-model.js';
import { sized } from '../support/size.js';
import { until } from '../support/until.js';

const LEASE_TTL_MS = 2_000;
const ROUNDS = sized(6, 20);

let model: ScriptedModelServer;
let database: string;
let callsFile: string;
let replicas: AgentProcess[] = [];
const retired: AgentProcess[] = [];

/** The model call a kill lands on waits at gate(tag) until the killed replica is gone: it surely lands while the model thinks. */
const gate = gates();

/**
 * "slow <tag>": a text answer. "write <tag> <ms>": the destructive slow_write, then a text
 * answer after its result. In a round (tag rN), the answer to "slow" and the one after a
 * 10 ms write's result wait for the kill.
 */
const script: ModelScript = async (request) => {
  const [verb, tag, ms] = request.lastUserText.split(' ');
  const killedHere = /^r\d+$/.test(tag ?? '') && (verb === 'slow' || (verb === 'write' && ms === '10' && request.toolResults.length > 0));
  if (killedHere) await gate(tag!).opened;
  if (verb === 'write' && request.toolResults.length === 0) return { toolCalls: [{ name: 'slow_write', args: { ms: Number(ms), tag } }] };
  if (verb === 'write') return { text: `wrote ${tag}: ${request.toolResults.map((result) => result.output).join(' | ')}` };
  return { text: `answer to ${request.lastUserText}` };
};

const replica = () =>
  startAgent({
    geminiBaseUrl: model.geminiBaseUrl,
    config: {
      runs: { lease_ttl: `${LEASE_TTL_MS}ms`, takeover_interval: '200ms' },
      mcp_servers: [{ name: 'wild', command: process.execPath, args: [MISBEHAVING], env: { CALLS_FILE: callsFile }, timeout: '30s' }],
    },
    env: { ASG_DATABASE_URL: databaseUrl(database) },
  });

beforeAll(async () => {
  model = await startScriptedModel(script);
  database = await createTestDatabase();
  callsFile = join(tempDir('asg-takeover-'), 'calls.txt');
  replicas = [await replica(), await replica()];
}, 120_000);

afterAll(async () => {
  await Promise.all([...replicas, ...retired].map((agent) => agent.stop()));
  await model?.close();
  if (database) await dropTestDatabase(database);
});

/** Lines slow_write appended for `tag`: how often the destructive call ran (started). */
const writes = (tag: string) =>
  existsSync(callsFile)
    ? readFileSync(callsFile, 'utf8')
        .split('\n')
        .filter((line) => line.startsWith('slow_write ') && line.includes(`"tag":"${tag}"`)).length
    : 0;
const modelSaw = (predicate: (text: string, withResults: boolean) => boolean) =>
  model.requests.filter((request) => predicate(request.lastUserText, request.toolResults.length > 0)).length;

interface ConversationJson {
  status: string;
  turn_running?: true;
  messages: Array<{ role: string; content: string }>;
  pending_approvals?: Array<{ uuid: string; tool_name: string; outcome_unknown?: true; replaces?: string }>;
}

async function conversationOn(agent: AgentProcess, id: string): Promise<ConversationJson> {
  const response = await get(`${agent.url}/conversations/${id}`);
  expect(response.status).toBe(200);
  return response.body.conversation as ConversationJson;
}

/** Kills the whole process group (the mesh and its MCP child) with SIGKILL, then lets the model answer round `tag`; a new replica takes its place. */
async function killAndReplace(index: number, tag: string): Promise<void> {
  const victim = replicas[index]!;
  process.kill(-victim.pid, 'SIGKILL');
  await victim.exited;
  gate(tag).open();
  retired.push(victim);
  replicas[index] = await replica();
}

describe('kill -9 of the replica running a turn', () => {
  it(`another replica finishes the run within lease + 10 s, ${ROUNDS} times: no run lost, no destructive call twice, none stuck`, async () => {
    const finished: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const victimIndex = round % 2;
      const victim = replicas[victimIndex]!;
      const survivor = () => replicas[1 - victimIndex]!;
      const tag = `r${round}`;
      const id = (await post(`${victim.url}/conversations`, {})).body.conversation.id as string;
      const place = round % 3;

      if (place === 0) {
        // At the model of a message's turn.
        const message = `slow ${tag}`;
        void post(`${victim.url}/conversations/${id}/messages`, { message }).catch(() => undefined);
        await until('the turn at the model', () => (modelSaw((text) => text === message) > 0 ? true : undefined), 10_000);
        const replacing = killAndReplace(victimIndex, tag);
        // The bound of the rule is each poll's deadline: the lease and 10 s.
        const done = await until(
          'the taken-over answer',
          async () => {
            const conversation = await conversationOn(survivor(), id);
            return conversation.messages.at(-1)?.content === `answer to ${message}` && !conversation.turn_running
              ? conversation
              : undefined;
          },
          LEASE_TTL_MS + 10_000,
        );
        expect(done.messages.map((entry) => entry.role)).toEqual(['system', 'user', 'assistant']);
        await replacing;
      } else {
        // An approved destructive call: the kill lands after its result (place 1) or inside it (place 2).
        const callMs = place === 1 ? 10 : 60_000;
        const message = `write ${tag} ${callMs}`;
        const asked = await post(`${victim.url}/conversations/${id}/messages`, { message });
        expect(asked.body.result.waiting_approval).toBe(true);
        const uuid = asked.body.result.approval.uuid as string;
        void post(`${victim.url}/approvals/${uuid}`, { approved: true }).catch(() => undefined);
        if (place === 1)
          await until(
            'the continuation at the model',
            () => (modelSaw((text, results) => text === message && results) > 0 ? true : undefined),
            10_000,
          );
        else await until('the destructive call running', () => (writes(tag) > 0 ? true : undefined), 10_000);
        const replacing = killAndReplace(victimIndex, tag);
        if (place === 1) {
          const done = await until(
            'the taken-over continuation',
            async () => {
              const conversation = await conversationOn(survivor(), id);
              return conversation.messages.at(-1)?.content.startsWith(`wrote ${tag}:`) && !conversation.turn_running
                ? conversation
                : undefined;
            },
            LEASE_TTL_MS + 10_000,
          );
          expect(done.messages.filter((entry) => entry.role === 'tool')).toHaveLength(1);
        } else {
          const waiting = await until(
            'the outcome-unknown approval',
            async () => {
              const conversation = await conversationOn(survivor(), id);
              return conversation.status === 'waiting_approval' && !conversation.turn_running ? conversation : undefined;
            },
            LEASE_TTL_MS + 10_000,
          );
          const again = waiting.pending_approvals!;
          expect(again).toHaveLength(1);
          expect(again[0]).toMatchObject({ tool_name: 'slow_write', outcome_unknown: true, replaces: uuid });
          // The first decision stands as it was: deciding it again is a 409, not a second run.
          expect((await post(`${survivor().url}/approvals/${uuid}`, { approved: true })).status).toBe(409);
          const rejected = await post(`${survivor().url}/approvals/${again[0]!.uuid}`, { approved: false, reason: 'it may have run' });
          expect(rejected.status).toBe(200);
          expect((await conversationOn(survivor(), id)).turn_running).toBeUndefined();
        }
        await replacing;
        // Never twice: the approved call started once, whatever the kill cut.
        expect(writes(tag)).toBe(1);
      }
      finished.push(id);
    }

    // None stuck: every conversation of the loop takes a new message on either replica.
    for (const [index, id] of finished.entries()) {
      const next = await post(`${replicas[index % 2]!.url}/conversations/${id}/messages`, { message: `slow after-${index}` });
      expect(next.status).toBe(200);
      expect(next.body.result.response).toBe(`answer to slow after-${index}`);
    }
  }, 600_000);
});
