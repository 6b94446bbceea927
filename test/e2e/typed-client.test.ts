/**
 * The typed client (agent-stop-and-go/client) as docs/client.md shows it: the example is taken
 * from the page, type-checked by the TypeScript compiler as a user's project would check it
 * (the package resolved through node_modules to this built tree), then run against a real
 * agent (bin/asg up, mcp-resources, a scripted model): it creates a conversation whose
 * destructive call stops for an approval, approves it, and reads the conversation back.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, startAgent, tempDir, type AgentProcess } from '../support/agent-process.js';
import { resourceNames } from '../support/resources-db.js';
import { resourceAgentScript, startScriptedModel, type ScriptedModelServer } from '../support/scripted-model.js';

const run = promisify(execFile);
const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { name: string };

/** The page's one TypeScript example. */
function exampleOfPage(): string {
  const page = readFileSync(join(REPO_ROOT, 'docs', 'client.md'), 'utf8');
  const blocks = [...page.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!);
  expect(blocks).toHaveLength(1);
  return blocks[0]!;
}

/** A user's project holding the example, with the package installed as a link to this tree. */
function projectWith(example: string): string {
  const dir = tempDir('asg-client-example-');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'client-example', private: true, type: 'module' }));
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(REPO_ROOT, join(dir, 'node_modules', pkg.name), 'dir');
  writeFileSync(join(dir, 'example.ts'), example);
  return dir;
}

/** The compiler's complaints about the example, as a strict NodeNext project would see them. */
function typeErrors(file: string): string[] {
  const program = ts.createProgram([file], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2023,
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: ['node'],
    typeRoots: [join(REPO_ROOT, 'node_modules', '@types')],
  });
  return ts
    .getPreEmitDiagnostics(program)
    .map((diagnostic) => `${diagnostic.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`);
}

let model: ScriptedModelServer;
let agent: AgentProcess;
let project: string;

beforeAll(async () => {
  project = projectWith(exampleOfPage());
  model = await startScriptedModel(resourceAgentScript);
  agent = await startAgent({ geminiBaseUrl: model.geminiBaseUrl });
});

afterAll(async () => {
  await agent?.stop();
  await model?.close();
});

describe('docs/client.md', () => {
  it('its example type-checks against the typed client, and a mistake in it does not', () => {
    expect(typeErrors(join(project, 'example.ts'))).toEqual([]);
    // The types are real: a wrong path parameter and a wrong body are refused.
    const wrong = join(project, 'wrong.ts');
    writeFileSync(
      wrong,
      `import { createAgentClient } from '${pkg.name}/client';
       const agent = createAgentClient({ baseUrl: 'http://127.0.0.1:9' });
       await agent.POST('/approvals/{uuid}', { params: { path: { id: 'x' } }, body: { approved: 'yes' } });
       export {};`,
    );
    const errors = typeErrors(wrong).join('\n');
    expect(errors).toMatch(/\buuid\b/);
    expect(errors).toMatch(/\bboolean\b/);
  });

  it('its example runs against a started agent: a conversation, an approval approved, the conversation read back', async () => {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', join(project, 'example.ts')], {
      cwd: REPO_ROOT,
      env: { ...process.env, AGENT_URL: agent.url },
      timeout: 60_000,
    });
    expect(stderr).toBe('');
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^conversation [0-9a-f-]{36}: Approval required \(id: [0-9a-f-]{36}\)/);
    expect(lines[1]).toMatch(/^approved resources_add: Done\. resources_add: /);
    expect(lines[2]).toMatch(/^\d+ messages, status (active|completed)$/);
    expect(resourceNames(join(agent.dir, 'resources.db'))).toContain('report-7');
  });
});
