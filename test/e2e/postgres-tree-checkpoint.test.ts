/**
 * A tree node's finish is a checkpoint: `kill -9` of the replica running an agent tree part-way
 * through → another replica takes the run over once its lease has expired and goes on at the
 * first unfinished node. Two replicas on one PostgreSQL, each killed replica replaced by a new
 * process. The tree: `first` (asks for the destructive slow_write, approved) → `second` →
 * `fan`, a parallel node (approvals: required) of `left` and `right`, whose joined answer is
 * the turn's. The kills land:
 *  - at `second`'s model call (sequential): `first` is not called again, the approved call
 *    does not run again, `second` runs again from its start, the join's answer comes;
 *  - at `right`'s model call with `left` finished (parallel): `left` is not called again,
 *    `right` runs again from its start, the join has both.
 * And on one machine (SQLite): `asg up` killed at `second` and started again on the same data
 * directory takes over its previous boot's run and finishes it the same way.
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

const LEASE_TTL_MS = 1_500;
/** Rounds alternate the replica and, two by two, the kill point: at full size ten at each kill point. */
const ROUNDS = sized(4, 20);

let model: ScriptedModelServer;
let database: string;
let callsFile: string;
let replicas: AgentProcess[] = [];
const retired: AgentProcess[] = [];

/** The model call a kill lands on waits at gate(tag) until the killed replica is gone. */
const gate = gates();

const TREE = {
  name: 'pipeline',
  type: 'sequential',
  agents: [
    { name: 'first', type: 'llm', prompt: 'node first', output_key: 'one' },
    { name: 'second', type: 'llm', prompt: 'node second', output_key: 'two' },
    {
      name: 'fan',
      type: 'parallel',
      approvals: 'required',
      agents: [
        { name: 'left', type: 'llm', prompt: 'node left' },
        { name: 'right', type: 'llm', prompt: 'node right' },
      ],
    },
  ],
};

/**
 * The message is "<seq|par> <tag>". `first` asks for slow_write (10 ms), then answers after its
 * result; in a "seq" turn `second` waits for the kill, in a "par" turn `right` does.
 */
const script: ModelScript = async (request) => {
  const [mode, tag] = request.lastUserText.split(' ');
  const node = request.system.replace(/^node /, '');
  if (node === 'first' && request.toolResults.length === 0) return { toolCalls: [{ name: 'slow_write', args: { ms: 10, tag } }] };
  if ((mode === 'seq' && node === 'second') || (mode === 'par' && node === 'right')) await gate(tag!).opened;
  return { text: `${node} ${tag}` };
};

const modelCalls = (node: string, message: string) =>
  model.requests.filter((request) => request.system === `node ${node}` && request.lastUserText === message).length;

/** Lines slow_write appended for `tag`: how often the destructive call ran (started). */
const writes = (tag: string) =>
  existsSync(callsFile)
    ? readFileSync(callsFile, 'utf8')
        .split('\n')
        .filter((line) => line.startsWith('slow_write ') && line.includes(`"tag":"${tag}"`)).length
    : 0;

const config = () => ({
  agent: TREE,
  runs: { lease_ttl: `${LEASE_TTL_MS}ms`, takeover_interval: '200ms' },
  mcp_servers: [{ name: 'wild', command: process.execPath, args: [MISBEHAVING], env: { CALLS_FILE: callsFile }, timeout: '30s' }],
});

const replica = () =>
  startAgent({ geminiBaseUrl: model.geminiBaseUrl, config: config(), env: { ASG_DATABASE_URL: databaseUrl(database) } });

interface ConversationJson {
  status: string;
  turn_running?: true;
  messages: Array<{ role: string; content: string }>;
}

async function conversationOn(agent: AgentProcess, id: string): Promise<ConversationJson> {
  const response = await get(`${agent.url}/conversations/${id}`);
  expect(response.status).toBe(200);
  return response.body.conversation as ConversationJson;
}

/** Kills the whole process group (the mesh and its MCP child) with SIGKILL, then lets the model answer round `tag`. */
async function kill(victim: AgentProcess, tag: string): Promise<void> {
  process.kill(-victim.pid, 'SIGKILL');
  await victim.exited;
  gate(tag).open();
  retired.push(victim);
}

/** Starts the turn on `agent` and approves its first node's slow_write; the approval's request runs the rest of the tree (it is cut by the kill). */
async function startTurn(agent: AgentProcess, message: string): Promise<string> {
  const id = (await post(`${agent.url}/conversations`, {})).body.conversation.id as string;
  const asked = await post(`${agent.url}/conversations/${id}/messages`, { message });
  expect(asked.body.result.waiting_approval).toBe(true);
  void post(`${agent.url}/approvals/${asked.body.result.approval.uuid}`, { approved: true }).catch(() => undefined);
  return id;
}

/**
 * The turn ended on `agent` with the parallel node's answer (both branches' answers, which the
 * run's finish write stores with its end): within lease + 10 s of the kill.
 */
function joinedAnswer(agent: () => AgentProcess, id: string, tag: string): Promise<ConversationJson> {
  return until(
    'the taken-over answer',
    async () => {
      const conversation = await conversationOn(agent(), id);
      const contents = conversation.messages.map((entry) => entry.content);
      return contents.includes(`left ${tag}`) && contents.includes(`right ${tag}`) && !conversation.turn_running ? conversation : undefined;
    },
    LEASE_TTL_MS + 10_000,
  );
}

beforeAll(async () => {
  model = await startScriptedModel(script);
  database = await createTestDatabase();
  callsFile = join(tempDir('asg-checkpoint-'), 'calls.txt');
  replicas = await Promise.all([replica(), replica()]);
}, 120_000);

afterAll(async () => {
  await Promise.all([...replicas, ...retired].map((agent) => agent.stop()));
  await model?.close();
  if (database) await dropTestDatabase(database);
});

describe('kill -9 of the replica running an agent tree part-way through (PostgreSQL, two replicas)', () => {
  it(`the other replica goes on at the first unfinished node, ${ROUNDS} times: no finished node called again, no destructive call twice`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const victimIndex = round % 2;
      const victim = replicas[victimIndex]!;
      const survivor = () => replicas[1 - victimIndex]!;
      const parallel = round % 4 >= 2;
      const tag = `r${round}`;
      const message = `${parallel ? 'par' : 'seq'} ${tag}`;
      const id = await startTurn(victim, message);

      if (parallel) {
        // right's model call is in flight and left's finish is stored (its checkpoint carried its answer).
        await until(
          'left finished, right at the model',
          async () =>
            modelCalls('right', message) > 0 && (await conversationOn(victim, id)).messages.some((entry) => entry.content === `left ${tag}`)
              ? true
              : undefined,
          10_000,
        );
      } else await until('second at the model', () => (modelCalls('second', message) > 0 ? true : undefined), 10_000);
      await kill(victim, tag);
      const replacing = replica().then((started) => {
        replicas[victimIndex] = started;
      });

      const done = await joinedAnswer(survivor, id, tag);
      // first: the call it asked for and its answer after the result, before the kill only.
      expect(modelCalls('first', message)).toBe(2);
      expect(writes(tag)).toBe(1);
      if (parallel) {
        expect(modelCalls('second', message)).toBe(1);
        expect(modelCalls('left', message)).toBe(1);
        // The cut branch ran again from its start.
        expect(modelCalls('right', message)).toBe(2);
      } else {
        // The cut node ran again from its start; the parallel node after it ran once.
        expect(modelCalls('second', message)).toBe(2);
        expect(modelCalls('left', message)).toBe(1);
        expect(modelCalls('right', message)).toBe(1);
      }
      // Each finished node's answer is recorded once.
      for (const node of ['first', 'second', 'left', 'right'])
        expect(
          done.messages.filter((entry) => entry.content === `${node} ${tag}`),
          node,
        ).toHaveLength(1);
      expect(done.messages.filter((entry) => entry.role === 'tool')).toHaveLength(1);
      await replacing;
    }
  }, 300_000);
});

describe('one machine (SQLite): asg up killed part-way through a tree and started again', () => {
  it('the new boot takes over its previous boot run and goes on at the first unfinished node', async () => {
    const dir = tempDir('asg-checkpoint-sqlite-');
    const first = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, config: config(), dir });
    const message = 'seq local';
    let restarted: AgentProcess | undefined;
    try {
      const id = await startTurn(first, message);
      await until('second at the model', () => (modelCalls('second', message) > 0 ? true : undefined), 10_000);
      await kill(first, 'local');
      restarted = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, config: config(), dir });
      const done = await joinedAnswer(() => restarted!, id, 'local');
      expect(modelCalls('first', message)).toBe(2);
      expect(modelCalls('second', message)).toBe(2);
      expect(writes('local')).toBe(1);
      expect(done.messages.filter((entry) => entry.content === 'first local')).toHaveLength(1);
    } finally {
      await restarted?.stop();
    }
  }, 120_000);
});
