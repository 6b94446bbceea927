/**
 * SIGTERM of a replica under steady load fails no request. Two
 * mesh replicas on one PostgreSQL sit behind a balancer that does what a Kubernetes Service
 * does with readiness: it sends requests only to replicas whose /ready said 200 at its last
 * probe (every 500 ms, as a readiness probe period). Four clients keep sending turns and approvals (bounded: a few seconds,
 * loopback only) while replica A is stopped with SIGTERM and replaced, then replica B: on a
 * stop, /ready says "draining" at once while the gateway still serves for server.drain_delay,
 * then turns in flight finish within shutdown_grace. Every request answers 2xx; every approved
 * call runs once.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, databaseUrl, dropTestDatabase } from '../support/storage-drivers.js';
import { MISBEHAVING } from '../fixtures/mcp-peers.js';
import { startAgent, tempDir, type AgentProcess } from '../support/agent-process.js';
import { get, post } from '../support/http.js';
import { logLines } from '../support/log-lines.js';
import { startScriptedModel, type ModelScript, type ScriptedModelServer } from '../support/scripted-model.js';
import { until } from '../support/until.js';

const PROBE_EVERY_MS = 500;
const CLIENTS = 4;

let model: ScriptedModelServer;
let database: string;
let callsFile: string;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** "chat <tag>": a text answer; "write <tag>": the destructive slow_write (10 ms), then a text answer. Each answer takes 150 ms. */
const script: ModelScript = async (request) => {
  await sleep(150);
  const [verb, tag] = request.lastUserText.split(' ');
  if (verb === 'write' && request.toolResults.length === 0) return { toolCalls: [{ name: 'slow_write', args: { ms: 10, tag } }] };
  return { text: `answer to ${request.lastUserText}` };
};

const replica = () =>
  startAgent({
    geminiBaseUrl: model.geminiBaseUrl,
    config: {
      shutdown_grace: '15s',
      server: { drain_delay: `${PROBE_EVERY_MS * 3}ms` },
      mcp_servers: [{ name: 'wild', command: process.execPath, args: [MISBEHAVING], env: { CALLS_FILE: callsFile }, timeout: '10s' }],
    },
    env: { ASG_DATABASE_URL: databaseUrl(database) },
  });

/** Round robin over the replicas whose /ready answered 200 at the last probe, as a Service over ready endpoints. */
class Balancer {
  private readonly members = new Map<AgentProcess, boolean>();
  private next = 0;
  private probing = true;
  private readonly prober: Promise<void>;

  constructor() {
    this.prober = (async () => {
      while (this.probing) {
        await Promise.all(
          [...this.members.keys()].map(async (agent) => {
            const ready = await get(`${agent.url}/ready`).then(
              (response) => response.status === 200,
              () => false,
            );
            if (this.members.has(agent)) this.members.set(agent, ready);
          }),
        );
        await sleep(PROBE_EVERY_MS);
      }
    })();
  }

  add(agent: AgentProcess): void {
    this.members.set(agent, true);
  }

  remove(agent: AgentProcess): void {
    this.members.delete(agent);
  }

  pick(): AgentProcess {
    const ready = [...this.members].filter(([, isReady]) => isReady).map(([agent]) => agent);
    if (ready.length === 0) throw new Error('no replica is ready');
    return ready[this.next++ % ready.length]!;
  }

  async close(): Promise<void> {
    this.probing = false;
    await this.prober;
  }
}

const agents: AgentProcess[] = [];

beforeAll(async () => {
  model = await startScriptedModel(script);
  database = await createTestDatabase();
  callsFile = join(tempDir('asg-rolling-'), 'calls.txt');
}, 60_000);

afterAll(async () => {
  await Promise.all(agents.map((agent) => agent.stop()));
  await model?.close();
  if (database) await dropTestDatabase(database);
});

const writes = (tag: string) =>
  existsSync(callsFile)
    ? readFileSync(callsFile, 'utf8')
        .split('\n')
        .filter((line) => line.includes(`"tag":"${tag}"`)).length
    : 0;

describe('a rolling restart under steady load', () => {
  it('SIGTERM of each replica in turn, each replaced: every request answers 2xx, every approved call runs once', async () => {
    const start = async () => {
      const agent = await replica();
      agents.push(agent);
      return agent;
    };
    const balancer = new Balancer();
    const [a, b] = [await start(), await start()];
    balancer.add(a);
    balancer.add(b);

    const failures: string[] = [];
    const approved: string[] = [];
    let requests = 0;
    let running = true;
    const send = async (path: string, body: unknown, expected: number) => {
      const target = balancer.pick();
      requests += 1;
      const response = await post(`${target.url}${path}`, body).catch((error: Error) => ({ status: 0, body: { error: error.message } }));
      if (response.status !== expected)
        failures.push(`${path} on ${target.url}: ${response.status} ${JSON.stringify(response.body).slice(0, 200)}`);
      return response;
    };
    const client = async (client: number) => {
      for (let round = 0; running; round++) {
        const tag = `c${client}-${round}`;
        if (round % 3 !== 2) {
          await send('/conversations', { message: `chat ${tag}` }, 201);
          continue;
        }
        const asked = await send('/conversations', { message: `write ${tag}` }, 201);
        const uuid = asked.body?.result?.approval?.uuid as string | undefined;
        if (!uuid) continue;
        const decided = await send(`/approvals/${uuid}`, { approved: true }, 200);
        if (decided.status === 200) approved.push(tag);
      }
    };
    const load = Promise.all(Array.from({ length: CLIENTS }, (_, index) => client(index)));

    /** Load running on what the balancer has: another round of every client's requests. */
    const loaded = (what: string) => {
      const from = requests;
      return until(what, () => requests >= from + CLIENTS * 3, 30_000);
    };
    const roll = async (old: AgentProcess) => {
      await loaded('load before the SIGTERM');
      const before = requests;
      process.kill(old.pid, 'SIGTERM');
      expect(await old.exited).toBe(0);
      balancer.remove(old);
      // The drain finished what it had: nothing was cut.
      expect(logLines(old.output()).find((line) => line.msg === 'gateway drained')).toMatchObject({
        finished: expect.any(Number),
        streams_ended: expect.any(Number),
        cut: 0,
      });
      expect(requests).toBeGreaterThan(before);
      balancer.add(await start());
    };
    try {
      await roll(a);
      await roll(b);
      await loaded('load after the last replacement');
    } finally {
      running = false;
      await load;
      await balancer.close();
    }

    expect(failures).toEqual([]);
    expect(requests).toBeGreaterThan(40);
    expect(approved.length).toBeGreaterThan(5);
    for (const tag of approved) expect(writes(tag), `slow_write of ${tag}`).toBe(1);
  }, 180_000);
});
