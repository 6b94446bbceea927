import { describe, expect, it } from 'vitest';
import { checkAgentConfigFile, checkConfigText, checkModels, formatReport, knownKeys } from './check.js';
import { configSchema } from './schema.js';
import { editDistance, nearest } from './suggest.js';

/** The agent check of a YAML text, in an environment with every key but the ones taken out. */
function check(
  text: string,
  env: NodeJS.ProcessEnv = {
    GEMINI_API_KEY: 'k',
    OPENAI_API_KEY: 'k',
    MISTRAL_API_KEY: 'k',
    ANTHROPIC_API_KEY: 'k',
    OPENROUTER_API_KEY: 'k',
  },
) {
  const report = checkConfigText(text, 'agent.yaml', configSchema, { env, checks: [checkModels] });
  return { report, text: formatReport(report) };
}

describe('checkConfigText: where, what, and what was meant', () => {
  it('puts an unknown provider prefix at its line and column, lists the providers and suggests the near one', () => {
    const { report, text } = check('name: a\nllm:\n  model: opnai:gpt-4o\n');
    expect(report.config).toBeUndefined();
    expect(report.errors).toMatchObject([{ line: 3, column: 10, path: ['llm', 'model'] }]);
    expect(text).toContain(
      'agent.yaml:3:10: llm.model: model "opnai:gpt-4o" names an unknown provider "opnai" (known providers: anthropic, gemini, google, mistral, ollama, openai, openrouter); did you mean "openai:gpt-4o"?',
    );
    // The code frame: the line with a caret under the value.
    expect(text).toContain('> 3 |   model: opnai:gpt-4o\n    |          ^^^^^^^^^^^^');
  });

  it('refuses a bare model name of no provider, with the prefix it needs', () => {
    const { text } = check('agent:\n  name: p\n  type: sequential\n  agents:\n    - name: a\n      type: llm\n      model: gpt-4o\n');
    expect(text).toContain('agent.yaml:7:14: agent.agents[0].model: model "gpt-4o" names no provider');
    expect(text).toContain('did you mean "openai:gpt-4o"?');
  });

  it('keeps mistral- as part of the id, and routes bare gemini- names, without a word', () => {
    expect(check('llm:\n  model: mistral-large-latest\n').report.errors).toEqual([]);
    expect(check('llm:\n  model: gemini-2.5-pro\n').report.errors).toEqual([]);
  });

  it('routes another bare name to Gemini, and warns of it at its line', () => {
    const { report, text } = check('llm:\n  model: house-model\n');
    expect(report.errors).toEqual([]);
    expect(text).toContain('agent.yaml:2:10: warning: llm.model: model "house-model" has no provider prefix, so it goes to Gemini');
  });

  it('points at a misspelt key and suggests the field, at every depth', () => {
    const { report, text } = check(
      'llm:\n  modle: gemini-2.5-flash\nmcp_servers:\n  - name: a\n    comand: node\n    url: http://127.0.0.1:1/mcp\n',
    );
    expect(report.errors.map((error) => [error.line, error.column, error.message, error.suggestion])).toEqual([
      [2, 3, 'unknown field "modle"', 'model'],
      [5, 5, 'unknown field "comand"', 'command'],
    ]);
    expect(text).toContain('agent.yaml:2:3: llm.modle: unknown field "modle" (did you mean "model"?)');
  });

  it('suggests the nearest allowed value, and gives no suggestion when nothing is near', () => {
    expect(check('agent:\n  name: p\n  type: sequentail\n').text).toContain(
      'agent.yaml:3:9: agent.type: expected one of "llm", "sequential", "parallel", "loop", "a2a" (did you mean "sequential"?)',
    );
    expect(check('zebra: 1\n').report.errors).toMatchObject([
      { message: 'unknown field "zebra"', suggestion: undefined, line: 1, column: 1 },
    ]);
  });

  it('gives a YAML syntax error its line and column', () => {
    const { report, text } = check('name: a\nllm:\n  model: [gemini\nport: 1\n');
    expect(report.errors).toHaveLength(1);
    expect(report.errors[0]).toMatchObject({ line: 4, column: 1 });
    expect(text).toMatch(/^agent\.yaml:4:1: not valid YAML: /);
    expect(check('a: 1\na: 2\n').text).toContain('agent.yaml:2:1: not valid YAML: Map keys must be unique');
  });

  it('shows a missing field at the object that lacks it, and a tree problem with its node', () => {
    expect(check('webhooks:\n  - url: http://127.0.0.1:1/hook\n    events: [run.failed]\n').text).toContain(
      'agent.yaml:2:5: webhooks[0].secret_env: expected string (required)',
    );
    expect(check('agent:\n  name: p\n  type: loop\n').text).toContain(
      'agent.yaml:1:1: agent (node "p"): a loop node needs at least one child under "agents"',
    );
  });

  it('warns of a missing provider key, one line per variable, and still passes', () => {
    const { report, text } = check(
      'llm:\n  model: openai-gpt-4o\nagent:\n  name: p\n  type: sequential\n  agents:\n    - {name: a, type: llm, model: openai:gpt-4o-mini}\n',
      { GEMINI_API_KEY: 'k' },
    );
    expect(report.config).toBeDefined();
    expect(text).toBe('agent.yaml:2:10: warning: llm.model: OPENAI_API_KEY is not set; models openai-gpt-4o, openai:gpt-4o-mini will fail');
  });

  it('gives a warning about a default that is not in the file no line of its own', () => {
    expect(check('name: a\nport: 1\n', {}).text).toBe(
      'agent.yaml: warning: llm.model: GEMINI_API_KEY is not set; models gemini-2.5-flash will fail',
    );
  });

  it('refuses a provider base URL that is not http(s), as the llm-gateway would', () => {
    expect(check('name: a\n', { GEMINI_API_KEY: 'k', GEMINI_BASE_URL: 'localhost:1234' }).text).toBe(
      'agent.yaml: GEMINI_BASE_URL must be an absolute http(s) URL such as https://generativelanguage.googleapis.com/v1beta, got "localhost:1234"',
    );
  });

  it('names a file it cannot read', () => {
    expect(formatReport(checkAgentConfigFile('/nonexistent/agent.yaml'))).toBe(
      '/nonexistent/agent.yaml: cannot read the configuration file (ENOENT)',
    );
  });
});

describe('knownKeys and nearest', () => {
  it('finds the fields of an object anywhere in the schema, through wrappers, arrays and the tree', () => {
    expect(knownKeys(configSchema, ['llm'])).toEqual(['model', 'timeout', 'temperature', 'max_tokens', 'retry']);
    expect(knownKeys(configSchema, ['mcp_servers', 0])).toContain('trust_annotations');
    expect(knownKeys(configSchema, ['agent', 'agents', 2, 'agents', 0])).toContain('can_exit_loop');
    expect(knownKeys(configSchema, ['approvals', 'tools', 'resources_*'])).toEqual(['timeout', 'on_timeout']);
  });

  it('suggests only words near enough', () => {
    expect(editDistance('opnai', 'openai')).toBe(1);
    expect(editDistance('mdoel', 'model')).toBe(1);
    expect(nearest('opnai', ['openai', 'ollama'])).toBe('openai');
    expect(nearest('xyz', ['openai', 'ollama'])).toBeUndefined();
  });
});

describe('a problem inside a string value (an expression): its column is inside the value', () => {
  // A check that finds a problem 5 characters into approvals.policies[0].when, as the policy check reports CEL errors.
  const atFifth = () => ({ errors: [{ path: ['approvals', 'policies', 0, 'when'], message: 'here', offset: 5 }] });
  const located = (when: string) => {
    const text = `approvals:\n  policies:\n    - name: r\n      tools: [t]\n      when: ${when}\n      decide: approve\n`;
    const report = checkConfigText(text, 'agent.yaml', configSchema, { env: { GEMINI_API_KEY: 'k' }, checks: [atFifth] });
    return report.errors.map(({ line, column }) => ({ line, column }));
  };

  it('a plain, a double-quoted and a single-quoted scalar', () => {
    expect(located('tool == "x"')).toEqual([{ line: 5, column: 18 }]);
    expect(located('"tool == 1"')).toEqual([{ line: 5, column: 19 }]);
    expect(located("'tool == 1'")).toEqual([{ line: 5, column: 19 }]);
  });

  it('a block scalar: the line and column of the expression inside it', () => {
    expect(located('|\n        a &&\n        tool')).toEqual([{ line: 7, column: 9 }]);
    expect(located('|\n        a &&\n          tool')).toEqual([{ line: 7, column: 9 }]);
  });
});
