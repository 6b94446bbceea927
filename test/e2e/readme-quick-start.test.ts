/**
 * The README's quick start works when pasted: its shell blocks that call the
 * agent run as written — in bash, one after the other, sharing variables — against a started
 * agent with a scripted model, only `localhost:8080` pointed at that agent's port. Each such
 * block is followed by a JSON block that shows the answer to its last command; the real answer
 * must hold everything shown there, where `"…"` stands for any value. The agent has the shipped
 * agent's name, so the examples of "The faces" that stand alone (the OpenAI and A2A requests)
 * run as written too: the OpenAI one names the model `GET /v1/models` lists. The CLI's block
 * runs from the clone's root, each `<uuid>` an approval waiting there.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { parse } from 'yaml';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, startAgent, tempDir, type AgentProcess } from '../support/agent-process.js';
import { post } from '../support/http.js';
import { resourceValues } from '../support/resources-db.js';
import { startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';

interface Step {
  /** The commands of one shell block, continuation lines joined, comments dropped. */
  commands: string[];
  /** What the README shows its last command answering. */
  shown: unknown;
}

/** The quick start's shell blocks that call the agent, each with the JSON block after it. */
function quickStartSteps(readme: string): Step[] {
  const start = readme.indexOf('\n## Quick start\n');
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  const blocks = [...section.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((match) => ({ language: match[1]!, text: match[2]! }));
  const steps: Step[] = [];
  blocks.forEach((block, index) => {
    if (block.language !== 'sh' || !block.text.includes('localhost:8080')) return;
    const next = blocks[index + 1];
    if (next?.language !== 'json') throw new Error(`the README shows no answer after:\n${block.text}`);
    const commands = block.text
      .replace(/\\\n\s*/g, '')
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.trim().startsWith('#'));
    steps.push({ commands, shown: JSON.parse(next.text) });
  });
  return steps;
}

/** The section's curl blocks that call the agent and stand alone (no variable of an earlier block), continuation lines joined. */
function standaloneCalls(readme: string, heading: string): string[] {
  const start = readme.indexOf(`\n## ${heading}\n`);
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)]
    .map((match) => match[1]!.replace(/\\\n\s*/g, '').trim())
    .filter((block) => block.startsWith('curl') && block.includes('localhost:8080') && !block.includes('$'));
}

/** Runs commands in one bash, stopping at the first that fails, with `localhost:8080` pointed at `host`. */
async function run(
  command: string,
  host: string,
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  // Not spawnSync: the scripted model that answers the turns runs on this process's event loop.
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', `set -euo pipefail\n${command.replaceAll('localhost:8080', host)}`], {
      cwd: options.cwd ?? tempDir(),
      env: { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH}`, ...options.env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The name of the shipped agent, config/agent.yaml: the model id of its OpenAI face. */
const SHIPPED_NAME = (parse(readFileSync(join(REPO_ROOT, 'config', 'agent.yaml'), 'utf8')) as { name: string }).name;

/** `actual` holds everything `shown` shows: the same values, `"…"` any value, objects possibly with more fields. */
function expectShown(actual: unknown, shown: unknown, path = '$'): void {
  if (shown === '…') {
    expect(actual, path).toBeDefined();
    return;
  }
  if (shown !== null && typeof shown === 'object' && !Array.isArray(shown)) {
    expect(actual, path).toBeTypeOf('object');
    for (const [key, value] of Object.entries(shown)) {
      expect(Object.keys(actual as object), `${path} has "${key}"`).toContain(key);
      expectShown((actual as Record<string, unknown>)[key], value, `${path}.${key}`);
    }
    return;
  }
  expect(actual, path).toEqual(shown);
}

let model: ScriptedModelServer;
let agent: AgentProcess;

beforeAll(async () => {
  model = await startScriptedModel();
  agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl, config: { name: SHIPPED_NAME } });
}, 120_000);

afterAll(async () => {
  await agent?.stop();
  await model?.close();
});

describe('the README quick start', () => {
  const steps = quickStartSteps(readFileSync(join(REPO_ROOT, 'README.md'), 'utf8'));

  it('shows a request that stops at an approval and one that approves it, each with its answer', () => {
    expect(steps.map((step) => step.commands.length)).toEqual([1, 3]);
  });

  it('runs as written, and every answer is the one shown', async () => {
    const host = new URL(agent.url).host;
    // One bash for every step, as one terminal: UUID= of one command is read by the next. A
    // marker after each command tells its output from the next one's (curl ends no line).
    const marker = '@@@ command done';
    const commands = steps.flatMap((step) => step.commands);
    const ran = await run(commands.map((command) => `${command}\necho; echo '${marker}'`).join('\n'), host);
    expect(ran.code, ran.stderr).toBe(0);
    const outputs = ran.stdout.split(`${marker}\n`).map((output) => output.trim());
    expect(outputs).toHaveLength(commands.length + 1);
    let done = 0;
    steps.forEach((step, index) => {
      done += step.commands.length;
      expectShown(JSON.parse(outputs[done - 1]!), step.shown, `step ${index + 1}`);
    });
    // The approved call ran, once, with the arguments the model chose.
    expect(resourceValues(join(agent.dir, 'resources.db'))).toMatchObject({ 'web-1': 5 });
  });
});

describe('the README faces', () => {
  const calls = standaloneCalls(readFileSync(join(REPO_ROOT, 'README.md'), 'utf8'), 'The faces');

  it('has an OpenAI and an A2A request that stand alone', () => {
    expect(calls.map((call) => /\/v1\/chat\/completions|\/a2a/.exec(call)?.[0])).toEqual(['/v1/chat/completions', '/a2a']);
  });

  it('the OpenAI request names the model GET /v1/models lists, and is answered as a chat completion', async () => {
    const models = (await (await fetch(`${agent.url}/v1/models`)).json()) as { data: { id: string }[] };
    expect(models.data.map((entry) => entry.id)).toEqual([SHIPPED_NAME]);
    const ran = await run(calls[0]!, new URL(agent.url).host);
    expect(ran.code, ran.stderr).toBe(0);
    expect(JSON.parse(ran.stdout)).toMatchObject({ object: 'chat.completion', model: SHIPPED_NAME, conversation_id: expect.any(String) });
  });

  it('the A2A request is answered with a task', async () => {
    const ran = await run(calls[1]!, new URL(agent.url).host);
    expect(ran.code, ran.stderr).toBe(0);
    expect(JSON.parse(ran.stdout)).toMatchObject({ jsonrpc: '2.0', id: 1, result: { kind: 'task', status: { state: 'completed' } } });
  });

  it('the REST examples run as written, but for the event stream, which does not end', async () => {
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    const start = readme.indexOf('\n### REST\n');
    const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(start, readme.indexOf('\n### ', start + 1)))?.[1];
    expect(block, 'a sh block under "### REST"').toBeDefined();
    const commands = block!
      .split('\n')
      .map((line) => line.replace(/\s+#.*$/, ''))
      .filter((line) => line.trim() !== '' && !line.includes('/events'));
    const marker = '@@@ command done';
    const ran = await run(commands.map((command) => `${command}\necho; echo '${marker}'`).join('\n'), new URL(agent.url).host);
    expect(ran.code, ran.stderr).toBe(0);
    const [, conversation, approvals] = ran.stdout.split(`${marker}\n`).map((output) => output.trim());
    expect(JSON.parse(conversation!)).toMatchObject({ conversation: { id: expect.any(String), messages: expect.any(Array) } });
    // The quick start's approval, decided above, is among the decided ones.
    expect(JSON.parse(approvals!).approvals).toContainEqual(expect.objectContaining({ tool_name: 'resources_add', status: 'approved' }));
  });

  it('the OpenAI TypeScript example runs as written, with the official client', async () => {
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    const start = readme.indexOf('\n### OpenAI-compatible\n');
    const section = readme.slice(start, readme.indexOf('\n### ', start + 1));
    const example = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
    expect(example, 'a ts block under "### OpenAI-compatible"').toBeDefined();
    // Inside the checkout (gitignored), so that `openai` resolves from its node_modules.
    const folder = join(REPO_ROOT, 'test', 'artifacts', 'readme-examples');
    mkdirSync(folder, { recursive: true });
    // The example is TypeScript that is also JavaScript (no types of its own): node runs it as is.
    const file = join(folder, `openai-${process.pid}.mjs`);
    writeFileSync(file, example!.replaceAll('localhost:8080', new URL(agent.url).host));
    const ran = await run(`${JSON.stringify(process.execPath)} ${JSON.stringify(file)}`, new URL(agent.url).host);
    expect(ran.code, ran.stderr).toBe(0);
    // The scripted model lists the resources, then answers in words.
    expect(ran.stdout.trim()).not.toBe('');
  });

  it('the CLI example runs as written from the clone: each <uuid> a pending approval (one listed, one approved, one rejected), a <conversation> read and deleted', async () => {
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    const start = readme.indexOf('\n### CLI\n');
    const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(start, readme.indexOf('\n## ', start + 1)))?.[1];
    expect(block, 'a sh block under "### CLI"').toBeDefined();
    const waiting = async (name: string) => {
      const created = await post(`${agent.url}/conversations`, { message: `add resource ${name} with value 2` });
      expect(created.body.result?.waiting_approval).toBe(true);
      return created.body.result.approval.uuid as string;
    };
    const [approve, reject] = [await waiting('cli-yes'), await waiting('cli-no')];
    const placeholders = [approve, reject];
    // A conversation of its own, answered in one run: its runs listed, then deleted.
    const other = await post(`${agent.url}/conversations`, { message: 'list resources' });
    expect(other.status).toBe(201);
    const conversation = other.body.conversation.id as string;
    const commands = block!
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) =>
        line.includes('<uuid>') ? line.replace('<uuid>', placeholders.shift()!) : line.replaceAll('<conversation>', conversation),
      );
    expect(commands).toHaveLength(5);
    // The README's default address is the quick start's agent: here it is given as ASG_URL, as the text says.
    const marker = '@@@ command done';
    const ran = await run(commands.map((command) => `${command}\necho '${marker}'`).join('\n'), new URL(agent.url).host, {
      cwd: REPO_ROOT,
      env: { ASG_URL: agent.url, ASG_TOKEN: '' },
    });
    expect(ran.code, ran.stderr).toBe(0);
    const [listed] = ran.stdout.split(`${marker}\n`);
    for (const uuid of [approve, reject]) expect(listed).toContain(uuid);
    const decided = async (uuid: string) => (await (await fetch(`${agent.url}/approvals/${uuid}`)).json()) as Record<string, unknown>;
    expect(await decided(approve)).toMatchObject({ status: 'approved', reason: 'looks right', via: 'cli' });
    expect(await decided(reject)).toMatchObject({ status: 'rejected', reason: 'wrong resource', via: 'cli' });
    expect(resourceValues(join(agent.dir, 'resources.db'))).toMatchObject({ 'cli-yes': 2 });
    expect(resourceValues(join(agent.dir, 'resources.db'))).not.toHaveProperty('cli-no');
    expect(ran.stdout.split(`${marker}\n`)[3]).toMatch(/completed/);
    expect((await fetch(`${agent.url}/conversations/${conversation}`)).status).toBe(404);
  });
});
