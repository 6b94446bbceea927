/**
 * A clean stop on one node. SIGTERM or SIGINT — to `npm start`
 * (npm only, as a process manager sends it), or to the process group of `bin/asg up` — stops
 * taking requests (503 with Retry-After), lets the turns in flight answer within
 * `shutdown_grace`, closes the MCP child and exits 0 with no process left. A turn
 * that a stop cuts is handed back (its lease released) — its caller answered 503 with
 * Retry-After and the conversation where its answer will be, not left with a closed
 * connection — and a turn a crash cuts keeps its lease until it expires; either way the
 * restarted agent takes the run over and finishes it.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandLine, isRunning, processTree, startAgent, type AgentProcess } from '../support/agent-process.js';
import { gates } from '../support/gates.js';
import { get, post, type JsonResponse } from '../support/http.js';
import { startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';
import { logLines, logLineWhere } from '../support/log-lines.js';
import { until } from '../support/until.js';

/** A short lease, so that the restart after a kill -9 takes the run over soon. */
const LEASE_TTL = '2s';

let model: ScriptedModelServer;
/** "slow <tag> …" answers wait for gate(tag): the turns are in flight until a test lets them finish. */
const gate = gates();

beforeAll(async () => {
  // Text answers only: "slow <tag> …" once gate(tag) opens; "hang …" never the first time it is asked, at once after.
  const hung = new Set<string>();
  model = await startScriptedModel(async (request) => {
    if (request.lastUserText.startsWith('hang') && !hung.has(request.lastUserText)) {
      hung.add(request.lastUserText);
      return { hang: true };
    }
    if (request.lastUserText.startsWith('slow')) await gate(request.lastUserText.split(' ')[1]!).opened;
    return { text: `answer to ${request.lastUserText}` };
  });
});

afterAll(async () => {
  await model?.close();
});

/** Model requests whose last user text starts with `prefix`. */
const modelCalls = (prefix: string) => model.requests.filter((request) => request.lastUserText.startsWith(prefix)).length;

/** Whether something accepts connections on the port. */
async function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

const portOf = (agent: AgentProcess) => Number(new URL(agent.url).port);

/**
 * Three conversations with a turn each in flight (the model is answering all three) and an
 * event stream open on one of them; the process tree as it is then, and the pending answers.
 */
async function threeTurnsInFlight(agent: AgentProcess, tag: string): Promise<{ tree: number[]; answers: Promise<JsonResponse>[] }> {
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push((await post(`${agent.url}/conversations`, {})).body.conversation.id);
  // A watcher too: an event stream never ends on its own, and must not hold the drain.
  const events = await fetch(`${agent.url}/conversations/${ids[0]}/events`, { headers: { accept: 'text/event-stream' } });
  expect(events.status).toBe(200);
  void events.body!.pipeTo(new WritableStream()).catch(() => undefined);
  const before = modelCalls(`slow ${tag}`);
  const answers = ids.map((id, i) => post(`${agent.url}/conversations/${id}/messages`, { message: `slow ${tag} ${i}` }));
  await until('three turns at the model', () => modelCalls(`slow ${tag}`) - before >= 3);
  return { tree: processTree(agent.pid), answers };
}

/** After the stop: all three answered 200, a request during the drain got 503 (the probes answered), and nothing is left. */
async function expectCleanStop(agent: AgentProcess, tree: number[], answers: Promise<JsonResponse>[], tag: string): Promise<void> {
  await agent.waitForLine(logLineWhere((line) => line.msg === 'gateway draining'));
  // Liveness stays 200 while the process runs; readiness says it is draining.
  expect((await get(`${agent.url}/health`)).status).toBe(200);
  const ready = await get(`${agent.url}/ready`);
  expect(ready.status).toBe(503);
  expect(ready.body.status).toBe('draining');
  const refused = await get(`${agent.url}/conversations`);
  expect(refused.status).toBe(503);
  expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
  expect(refused.body.error).toMatch(/stopping/);
  const refusedTurn = await post(`${agent.url}/conversations`, { message: 'too late' });
  expect(refusedTurn.status).toBe(503);

  // The turns in flight all along; now they may finish, and the drain waits for them.
  gate(tag).open();
  const answered = await Promise.all(answers);
  expect(answered.map((answer) => answer.status)).toEqual([200, 200, 200]);
  expect(answered.map((answer) => answer.body.result.response).sort()).toEqual([0, 1, 2].map((i) => `answer to slow ${tag} ${i}`));
  expect(await agent.exited).toBe(0);
  expect(await listening(portOf(agent))).toBe(false);
  await until('every process of the tree gone', () => tree.every((pid) => !isRunning(pid)), 5_000).catch(() => {
    throw new Error(
      `processes left: ${tree
        .filter(isRunning)
        .map((pid) => `${pid} ${commandLine(pid)}`)
        .join('; ')}`,
    );
  });
  expect(logLines(agent.output()).find((line) => line.msg === 'gateway drained')).toMatchObject({ finished: 3, streams_ended: 1, cut: 0 });
  expect(agent.output()).not.toContain('something still holds the event loop');
}

describe('a clean stop', () => {
  it.each([
    {
      how: 'SIGTERM to `npm start` (npm only, as a process manager sends it)',
      viaNpmStart: true,
      send: (pid: number) => process.kill(pid, 'SIGTERM'),
    },
    {
      how: 'SIGINT to the process group of `bin/asg up` (Ctrl-C)',
      viaNpmStart: false,
      send: (pid: number) => process.kill(-pid, 'SIGINT'),
    },
    // npm forwards the signal its child already got from the group: that echo is not a second signal.
    { how: 'SIGINT to the process group of `npm start`', viaNpmStart: true, send: (pid: number) => process.kill(-pid, 'SIGINT') },
  ])(
    '$how: three turns in flight answer 200, new requests get 503, then nothing listens and no process is left',
    async ({ viaNpmStart, send }) => {
      const agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, viaNpmStart });
      const tag = `${viaNpmStart ? 'npm' : 'asg'}-${Math.random().toString(36).slice(2, 8)}`;
      try {
        const { tree, answers } = await threeTurnsInFlight(agent, tag);
        // The MCP stdio child is part of the tree (and npm with the node process it execs).
        expect(tree.length).toBeGreaterThanOrEqual(viaNpmStart ? 3 : 2);
        expect(tree.some((pid) => commandLine(pid)?.includes('mcp-resources'))).toBe(true);
        send(agent.pid);
        await expectCleanStop(agent, tree, answers, tag);
      } finally {
        await agent.stop();
      }
    },
  );

  it('a second signal during the drain exits at once with 130', async () => {
    const agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl });
    try {
      const { answers } = await threeTurnsInFlight(agent, 'twice');
      // Cut by the exit: not what this test looks at.
      const cut = Promise.allSettled(answers);
      let exitCode: number | null | undefined;
      void agent.exited.then((code) => (exitCode = code));
      process.kill(agent.pid, 'SIGTERM');
      await agent.waitForLine(logLineWhere((line) => line.msg === 'gateway draining'));
      // A repeat soon after the first is its echo (cli/stop.ts), so it is sent until one counts as a second signal.
      await until(
        'the agent to take a repeated SIGTERM as a second signal',
        () => {
          if (exitCode === undefined) process.kill(agent.pid, 'SIGTERM');
          return exitCode !== undefined;
        },
        10_000,
        50,
      );
      expect(exitCode).toBe(130);
      expect((await cut).map((answer) => answer.status)).toEqual(['rejected', 'rejected', 'rejected']);
    } finally {
      await agent.stop();
    }
  });

  it('hands back a turn longer than shutdown_grace, telling its caller where the answer will be, exits 0 within the grace plus a bound, and the restarted agent finishes it', async () => {
    const grace = 1_000;
    const agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, config: { shutdown_grace: `${grace}ms` } });
    let second: AgentProcess | undefined;
    try {
      const id = (await post(`${agent.url}/conversations`, {})).body.conversation.id as string;
      const before = modelCalls('hang');
      const turn = post(`${agent.url}/conversations/${id}/messages`, { message: 'hang on grace' }).then(
        (answer) => answer,
        () => 'cut' as const,
      );
      await until('the turn at the model', () => modelCalls('hang') > before);
      const tree = processTree(agent.pid);
      process.kill(agent.pid, 'SIGTERM');
      // 0: it stopped by itself once the grace ran out, not by the exit forced after the grace and its overrun.
      expect(await agent.exited).toBe(0);
      const handedBack = await turn;
      if (handedBack === 'cut') throw new Error('the turn was cut with no answer');
      expect(handedBack.status).toBe(503);
      expect(handedBack.headers.get('retry-after')).toBe('5');
      expect(handedBack.body).toMatchObject({ outcome: 'unknown', conversation_id: id });
      expect(handedBack.body.error).toMatch(/handed the run to another replica, which finishes it; its answer will be in conversation /);
      // Answered before the gateway's grace ran out: nothing was cut.
      expect(logLines(agent.output()).find((line) => line.msg === 'gateway drained')).toMatchObject({
        finished: 1,
        streams_ended: expect.any(Number),
        cut: 0,
      });
      expect(logLines(agent.output()).some((line) => line.grace_ran_out === true)).toBe(true);
      await until('every process of the tree gone', () => tree.every((pid) => !isRunning(pid)), 5_000);

      expect(logLines(agent.output()).some((line) => line.msg === 'run handed back on stop')).toBe(true);

      second = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, dir: agent.dir });
      // Released, so taken over at the first look (runs.takeover_interval), not after lease_ttl.
      const shown = await until('the run finished by the restarted agent', async () => {
        const conversation = (await get(`${second!.url}/conversations/${id}`)).body.conversation;
        return !conversation.turn_running && conversation.messages.at(-1)?.content === 'answer to hang on grace' && conversation;
      });
      expect(shown.messages.map((message: { role: string }) => message.role)).toEqual(['system', 'user', 'assistant']);
      expect(logLines(second.output()).some((line) => line.msg === 'run taken over from a replica that stopped')).toBe(true);
    } finally {
      await agent.stop();
      await second?.stop();
    }
  });

  it('after kill -9 mid-turn, the restarted agent takes the run over once its lease expired, finishes it, and answers the next message', async () => {
    const agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, config: { runs: { lease_ttl: LEASE_TTL } } });
    let second: AgentProcess | undefined;
    try {
      const id = (await post(`${agent.url}/conversations`, {})).body.conversation.id as string;
      const before = modelCalls('hang');
      void post(`${agent.url}/conversations/${id}/messages`, { message: 'hang before the crash' }).catch(() => undefined);
      await until('the turn at the model', () => modelCalls('hang') > before);
      process.kill(-agent.pid, 'SIGKILL');
      await agent.exited;

      second = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, dir: agent.dir, config: { runs: { lease_ttl: LEASE_TTL } } });
      // Busy until taken over: one run per conversation, whoever runs it.
      const shown = await until(
        'the run finished by the restarted agent',
        async () => {
          const conversation = (await get(`${second!.url}/conversations/${id}`)).body.conversation;
          return !conversation.turn_running && conversation.messages.at(-1)?.role === 'assistant' && conversation;
        },
        20_000,
      );
      expect(shown.messages.slice(-2)).toMatchObject([
        { role: 'user', content: 'hang before the crash' },
        { role: 'assistant', content: 'answer to hang before the crash' },
      ]);
      expect(logLines(second.output()).some((line) => line.msg === 'run taken over from a replica that stopped')).toBe(true);

      const next = await post(`${second.url}/conversations/${id}/messages`, { message: 'try again' });
      expect(next.status).toBe(200);
      expect(next.body.result.response).toBe('answer to try again');
      // The model saw the whole story: the message the crash cut, its answer, the new message.
      const last = model.requests.at(-1)!;
      expect(JSON.stringify(last.body)).toContain('answer to hang before the crash');
      expect(next.body.conversation.messages.slice(-4).map((message: { role: string }) => message.role)).toEqual([
        'user',
        'assistant',
        'user',
        'assistant',
      ]);
    } finally {
      await agent.stop();
      await second?.stop();
    }
  });
});
