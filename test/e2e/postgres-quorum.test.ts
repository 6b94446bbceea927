/**
 * A quorum of two on two mesh replicas of one PostgreSQL database: the two votes that complete
 * it, sent to the two replicas at the same moment, are serial in the store (each takes the
 * conversation's lock): one is recorded (202) and the other completes the quorum (200), and the
 * tool runs exactly once, on a resources database both replicas share. Repeated, since a race
 * that is lost once in a while is the one that matters.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, databaseUrl, dropTestDatabase } from '../support/storage-drivers.js';
import { resourcesServer, startAgent, tempDir, type AgentProcess } from '../support/agent-process.js';
import { post } from '../support/http.js';
import { resourceNames } from '../support/resources-db.js';
import { resourceAgentScript, startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';
import { sized } from '../support/size.js';
import { tokenAuth } from '../support/token-auth.js';

const TOKENS = { rita: 'rita-token-0123456789abcdef00', alice: 'alice-token-0123456789abcdef0', bob: 'bob-token-0123456789abcdef000' };
const auth = tokenAuth({
  rita: { token: TOKENS.rita, roles: ['chat'] },
  alice: { token: TOKENS.alice, roles: ['approve'] },
  bob: { token: TOKENS.bob, roles: ['approve'] },
});
const as = (who: keyof typeof TOKENS) => ({ authorization: `Bearer ${TOKENS[who]}` });

let model: ScriptedModelServer;
let database: string;
let a: AgentProcess;
let b: AgentProcess;
let resources: string;

beforeAll(async () => {
  model = await startScriptedModel(resourceAgentScript);
  database = await createTestDatabase();
  resources = join(tempDir('asg-quorum-replicas-'), 'resources.db');
  const replica = () =>
    startAgent({
      geminiBaseUrl: model.geminiBaseUrl,
      config: {
        ...auth.config,
        mcp_servers: [resourcesServer(resources)],
        approvals: {
          policies: [{ name: 'four-eyes', tools: ['resources_add'], require: { approvals: 2, not_requester: true } }],
        },
      },
      env: { ...auth.env, ASG_DATABASE_URL: databaseUrl(database) },
    });
  // One after the other: the second also finds the schema the first one's migration made.
  a = await replica();
  b = await replica();
}, 180_000);

afterAll(async () => {
  await a?.stop();
  await b?.stop();
  await model?.close();
  if (database) await dropTestDatabase(database);
});

describe('a quorum on two replicas of one PostgreSQL database', () => {
  it('two completing votes sent to the two replicas at once: one recorded (202), one decides (200), the tool runs once', async () => {
    const rounds = sized(5, 20);
    for (let round = 0; round < rounds; round++) {
      const name = `quorum-${round}`;
      const created = await post(`${a.url}/conversations`, { message: `add resource ${name} with value 9` }, as('rita'));
      expect(created.body.result.waiting_approval).toBe(true);
      const uuid = created.body.result.approval.uuid as string;
      // Alternate which voter goes to which replica.
      const [first, second] = round % 2 === 0 ? [a, b] : [b, a];
      const answers = await Promise.all([
        post(`${first.url}/approvals/${uuid}`, { approved: true }, as('alice')),
        post(`${second.url}/approvals/${uuid}`, { approved: true }, as('bob')),
      ]);
      expect(answers.map((answer) => answer.status).sort()).toEqual([200, 202]);
      expect(answers.find((answer) => answer.status === 202)!.body).toEqual({ status: 'pending', votes: 1, required: 2 });
      expect(resourceNames(resources).filter((each) => each === name)).toHaveLength(1);
    }
  });
});
