/**
 * A replica whose PostgreSQL database is away, at its start and later: it starts anyway and
 * stays alive, `/ready` answers 503 while the database refuses connections and 200 once it
 * accepts them (within 2 s either way: the store probes its database twice a second), data
 * requests are answered 503 meanwhile and served again after; and `/ready`, open to anyone,
 * never shows a stack trace or a local path — not even of an MCP server that crashed with one.
 * The database is reached through a relay that the test makes refuse connections, as a
 * database that is down does.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, databaseUrl, dropTestDatabase } from '../support/storage-drivers.js';
import { isRunning, REPO_ROOT, resourcesServer, startAgent, tempDir, type AgentProcess } from '../support/agent-process.js';
import { startCuttableProxy, type CuttableProxy } from '../support/cuttable-proxy.js';
import { get, post } from '../support/http.js';
import { resourceAgentScript, startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';
import { until } from '../support/until.js';

/** The readiness promise: 503 within 2 s of the database going away, 200 within 2 s of its return. */
const READINESS_FOLLOWS_MS = 2_000;

let model: ScriptedModelServer;
let database: string;
let proxy: CuttableProxy;
let agent: AgentProcess;
let dir: string;
/** Every /ready answer's body, as text, for the check that none shows what it must not. */
const readyBodies: string[] = [];

async function ready(): Promise<number> {
  const answer = await get(`${agent.url}/ready`);
  readyBodies.push(JSON.stringify(answer.body));
  return answer.status;
}

beforeAll(async () => {
  model = await startScriptedModel(resourceAgentScript);
  database = await createTestDatabase();
  proxy = await startCuttableProxy(databaseUrl(database));
  proxy.refuse(true);
  dir = tempDir('asg-db-outage-');
  // An MCP server that dies at start with a stack trace full of this machine's paths.
  const crashing = join(dir, 'crashing-mcp-server.mjs');
  writeFileSync(crashing, "throw new Error('the MCP server broke on purpose');\n");
  const url = new URL(databaseUrl(database));
  url.port = new URL(proxy.url).port;
  agent = await startAgent({
    geminiBaseUrl: model.geminiBaseUrl,
    config: {
      mcp_servers: [resourcesServer(join(dir, 'resources.db')), { name: 'crashing', command: process.execPath, args: [crashing] }],
    },
    env: { ASG_DATABASE_URL: url.toString() },
    dir,
  });
}, 120_000);

afterAll(async () => {
  await agent?.stop();
  await proxy?.close();
  await model?.close();
  if (database) await dropTestDatabase(database);
});

describe('a replica whose database is away', () => {
  it('starts while the database refuses connections, stays alive and not ready, and becomes ready once it accepts', async () => {
    expect(await ready()).toBe(503);
    expect(JSON.parse(readyBodies.at(-1)!)).toMatchObject({ status: 'not_ready', backends: { conversation_store: 'NOT_SERVING' } });
    expect((await get(`${agent.url}/health`)).status).toBe(200);
    const refused = await post(`${agent.url}/conversations`, { message: 'list resources' });
    expect(refused.status).toBe(503);
    expect(refused.body.error).toMatch(/cannot reach its database/);
    // It says why in its log, and keeps running and trying.
    await agent.waitForLine((line) => line.includes('the conversation store cannot reach its database'), 10_000);
    expect(isRunning(agent.pid)).toBe(true);

    proxy.refuse(false);
    await until('ready once the database accepts connections', async () => (await ready()) === 200, 20_000, 50);
    expect((await post(`${agent.url}/conversations`, { message: 'list resources' })).status).toBe(201);
  });

  it('answers /ready 503 within 2 s of the database going away and 200 within 2 s of its return, serving requests again', async () => {
    await until('ready', async () => (await ready()) === 200, 20_000, 50);
    for (let outage = 0; outage < 2; outage++) {
      proxy.refuse(true);
      await until(
        `not ready within ${READINESS_FOLLOWS_MS} ms of the database going away`,
        async () => (await ready()) === 503,
        READINESS_FOLLOWS_MS,
        50,
      );
      const during = await get(`${agent.url}/conversations`);
      expect(during.status).toBe(503);
      proxy.refuse(false);
      await until(
        `ready within ${READINESS_FOLLOWS_MS} ms of the database's return`,
        async () => (await ready()) === 200,
        READINESS_FOLLOWS_MS,
        50,
      );
      expect((await post(`${agent.url}/conversations`, { message: 'list resources' })).status).toBe(201);
    }
    expect(isRunning(agent.pid)).toBe(true);
  });

  it('never shows a stack trace or a local path in /ready, though an MCP server crashed with both (the log and GET /tools say why)', async () => {
    const tools = await get(`${agent.url}/tools`);
    const crashed = tools.body.servers.find((server: { name: string }) => server.name === 'crashing');
    expect(crashed).toMatchObject({ status: 'unavailable', error: expect.stringContaining('the MCP server broke on purpose') });
    expect(await ready()).toBe(200);
    expect(JSON.parse(readyBodies.at(-1)!).mcp_servers).toContainEqual({ name: 'crashing', status: 'unavailable', required: false });
    expect(readyBodies.length).toBeGreaterThan(5);
    for (const body of readyBodies) {
      expect(body).not.toMatch(/\n\s*at |\bat [\w.<>]+ \(|file:\/\/|node:internal/);
      for (const path of [dir, REPO_ROOT, '/tmp/', '/home/', '/usr/']) expect(body).not.toContain(path);
      expect(body).not.toContain('broke on purpose');
    }
  });
});
