/**
 * Retention end to end: two mesh processes (`bin/asg up`) on one PostgreSQL database, both with
 * `retention.conversations` and a short `retention.sweep_interval`. A conversation created on one, left idle past its
 * retention, disappears from both within a sweep or two, deleted once: one `conversation.deleted` audit entry, by
 * `retention`, whichever replica held the sweep's lease.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type AgentProcess } from '../support/agent-process.js';
import { get, post } from '../support/http.js';
import { logLines } from '../support/log-lines.js';
import { startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';
import { createTestDatabase, databaseUrl, dropTestDatabase } from '../support/storage-drivers.js';
import { until } from '../support/until.js';

let model: ScriptedModelServer;
let database: string;
let a: AgentProcess;
let b: AgentProcess;

beforeAll(async () => {
  model = await startScriptedModel();
  database = await createTestDatabase();
  const replica = () =>
    startAgent({
      geminiBaseUrl: model.geminiBaseUrl,
      config: { retention: { conversations: '3s', sweep_interval: '1s' } },
      env: { ASG_DATABASE_URL: databaseUrl(database) },
    });
  // One after the other: the second finds the schema the first one's migration made.
  a = await replica();
  b = await replica();
}, 180_000);

afterAll(async () => {
  await a?.stop();
  await b?.stop();
  await model?.close();
  if (database) await dropTestDatabase(database);
});

describe('retention with two replicas sweeping', () => {
  it('deletes a conversation idle past retention.conversations once, on both replicas', async () => {
    const created = await post(`${a.url}/conversations`, { message: 'hello' });
    expect(created.status).toBe(201);
    const id = created.body.conversation.id as string;
    expect((await get(`${b.url}/conversations/${id}`)).status).toBe(200);

    await until('the idle conversation to be deleted', async () => (await get(`${b.url}/conversations/${id}`)).status === 404);
    expect((await get(`${a.url}/conversations/${id}`)).status).toBe(404);
    const entries = (await get(`${a.url}/audit?kind=conversation.deleted&limit=500`)).body.entries as {
      subject: string;
      actor: string;
      via: string;
    }[];
    expect(entries.filter((entry) => entry.subject === id)).toEqual([expect.objectContaining({ actor: 'retention', via: 'retention' })]);
    const removed = [a, b].flatMap((replica) => logLines(replica.output()).filter((line) => line.msg === 'old data removed'));
    expect(removed.map((line) => line.conversations)).toContain(1);
  });
});
