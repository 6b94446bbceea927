/** The JSON Schemas of the configuration files: generated from zod, committed, and named by every shipped file. */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../test/support/agent-process.js';
import { SHIPPED_CONFIGS } from '../test/support/shipped-configs.js';
import { CONFIG_SCHEMAS, generatedSchemaFiles } from './config-schemas.js';
import { configKind } from './read-config.js';

describe('config/*.schema.json', () => {
  it.each(generatedSchemaFiles(join(REPO_ROOT, 'config')))(
    '$path is what the zod schema generates (node --import tsx scripts/write-config-schema.ts)',
    ({ path, text }) => {
      expect(readFileSync(path, 'utf8'), `${path} is stale: run node --import tsx scripts/write-config-schema.ts`).toBe(text);
    },
  );

  it('gives the defaults in the form a file writes them', () => {
    const agent = JSON.parse(readFileSync(join(REPO_ROOT, 'config', 'agent.schema.json'), 'utf8'));
    expect(agent.properties.llm.properties.model.default).toBe('gemini-2.5-flash');
    expect(agent.properties.llm.properties.timeout.default).toBe('60s');
    expect(agent.properties.chat.properties.turn_timeout.default).toBe('5m');
    expect(agent.properties.approvals.properties.timeout.default).toBe(0);
    expect(agent.additionalProperties).toBe(false);
    expect(agent.properties.agent.$ref).toBe('#/$defs/agentNode');
  });
});

describe('shipped configuration files', () => {
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  const validators = new Map(
    CONFIG_SCHEMAS.map(({ file }) => [file, ajv.compile(JSON.parse(readFileSync(join(REPO_ROOT, 'config', file), 'utf8')))]),
  );

  it.each(SHIPPED_CONFIGS)('$file names $schema on its first line, and the editor would find nothing to flag', ({ file, schema }) => {
    const path = join(REPO_ROOT, file);
    const text = readFileSync(path, 'utf8');
    const first = text.split('\n')[0]!;
    const named = /^# yaml-language-server: \$schema=(\S+)$/.exec(first)?.[1];
    expect(named, first).toBeDefined();
    expect(resolve(dirname(path), named!)).toBe(join(REPO_ROOT, 'config', schema));
    const validate = validators.get(schema)!;
    expect(validate(parse(text)), JSON.stringify(validate.errors)).toBe(true);
    expect(configKind(path)).toBe(schema.replace('.schema.json', ''));
  });

  it('the editor schema flags what the check refuses', () => {
    const validate = validators.get('agent.schema.json')!;
    expect(validate({ llm: { modle: 'x' } })).toBe(false);
    expect(validate({ llm: { timeout: 'soon' } })).toBe(false);
    expect(validate({ agent: { name: 'p', type: 'sequentail' } })).toBe(false);
    expect(validate({ agent: { name: 'p', type: 'sequential', agents: [{ name: 'a', type: 'llm', timeout: '2m' }] } })).toBe(true);
  });
});
