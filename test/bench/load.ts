import { post } from '../support/http.js';
import { summarize, timed, type Summary } from './stats.js';
import { roundRobin, ThroughputTally, type ThroughputResult } from './throughput.js';

/**
 * Turns driven over HTTP against one or more meshes: one client after the other for latency,
 * or a fixed number of concurrent clients for a bounded time for throughput. Every client keeps
 * its own conversation (a fresh one every `turnsPerConversation` turns, so that the history and
 * the model request stay small) and sends each request to the next replica in a round robin
 * shared by all clients: with replicas on one store, a conversation lives on all of them.
 */

/** A fresh conversation every 10 turns, as the other turn benchmarks do. */
const TURNS_PER_CONVERSATION = 10;

async function createConversation(url: string): Promise<string> {
  const created = await post(`${url}/conversations`, {});
  if (created.status !== 201)
    throw new Error(`POST ${url}/conversations answered ${created.status}: ${JSON.stringify(created.body).slice(0, 200)}`);
  return created.body.conversation.id as string;
}

async function sendTurn(url: string, conversation: string, message: string): Promise<void> {
  const answered = await post(`${url}/conversations/${conversation}/messages`, { message });
  if (answered.status !== 200)
    throw new Error(
      `POST ${url}/conversations/${conversation}/messages answered ${answered.status}: ${JSON.stringify(answered.body).slice(0, 200)}`,
    );
  if (answered.body.result?.waiting_approval)
    throw new Error(`"${message}" stopped for an approval: the bench measures turns that run through`);
}

/** `samples` turns of `message` one after the other on one mesh, after `warmup` turns left out. */
export async function sequentialTurns(url: string, message: string, samples: number, warmup = 20): Promise<Summary> {
  const measured: number[] = [];
  let conversation = '';
  for (let i = 0; i < warmup + samples; i++) {
    if (i % TURNS_PER_CONVERSATION === 0) conversation = await createConversation(url);
    const ms = await timed(() => sendTurn(url, conversation, message));
    if (i >= warmup) measured.push(ms);
  }
  return summarize(measured);
}

export interface LoadOptions {
  /** Base URLs of the meshes (replicas) to spread the requests over. */
  targets: readonly string[];
  clients: number;
  /** No client starts a turn after this; the turns under way finish and count. */
  durationMs: number;
  message: string;
}

/** `clients` concurrent clients sending turns of `message` for `durationMs`. */
export async function concurrentTurns(options: LoadOptions): Promise<ThroughputResult> {
  const { targets, clients, durationMs, message } = options;
  const next = roundRobin(targets.length);
  const tally = new ThroughputTally(clients, targets.length);
  const started = performance.now();
  const deadline = started + durationMs;
  const client = async () => {
    let conversation = '';
    for (let turn = 0; performance.now() < deadline; turn++) {
      try {
        if (turn % TURNS_PER_CONVERSATION === 0) conversation = await createConversation(targets[next()]!);
        const target = next();
        const ms = await timed(() => sendTurn(targets[target]!, conversation, message));
        tally.turn(target, ms);
      } catch (error) {
        tally.failure(error instanceof Error ? error.message : String(error));
        // A conversation that failed mid-turn may be left running: go on with a fresh one.
        turn = TURNS_PER_CONVERSATION - 1;
      }
    }
  };
  await Promise.all(Array.from({ length: clients }, client));
  return tally.result(performance.now() - started);
}
