import { readFileSync } from 'node:fs';
import { parse, YAMLParseError } from 'yaml';
import type { z } from 'zod';
import { configSchema, type AgentConfig } from './schema.js';

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

function describePath(path: PropertyKey[]): string {
  if (path.length === 0) return '(top level)';
  return path.map((part, index) => (typeof part === 'number' ? `[${part}]` : `${index === 0 ? '' : '.'}${String(part)}`)).join('');
}

function describeIssue(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'unrecognized_keys':
      return `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((key) => `"${key}"`).join(', ')}`;
    case 'invalid_type':
      return `expected ${issue.expected}${issue.input === undefined ? ' (required)' : `, got ${Array.isArray(issue.input) ? 'array' : issue.input === null ? 'null' : typeof issue.input}`}`;
    case 'invalid_value':
      return `expected one of ${issue.values.map((value) => JSON.stringify(value)).join(', ')}`;
    default:
      return issue.message.startsWith('Invalid') || issue.message.startsWith('Too') ? issue.message : `expected ${issue.message}`;
  }
}

/** Validates parsed YAML; every problem is reported as `file: path: what was expected`. */
export function parseConfig(raw: unknown, file: string): AgentConfig {
  const result = configSchema.safeParse(raw ?? {}, { reportInput: true });
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => {
    // Agent-tree problems name the node beside its path and say the whole rule themselves.
    const node = issue.code === 'custom' ? (issue.params?.node as string | undefined) : undefined;
    if (node !== undefined) return `${file}: ${describePath(issue.path)} (node "${node}"): ${issue.message}`;
    return `${file}: ${describePath(issue.path)}: ${describeIssue(issue)}`;
  });
  throw new ConfigError(`invalid configuration\n${lines.join('\n')}`);
}

export function loadConfig(file: string): AgentConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`${file}: cannot read the configuration file (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  let raw: unknown;
  try {
    raw = parse(text);
  } catch (error) {
    const where = error instanceof YAMLParseError && error.linePos ? ` at line ${error.linePos[0].line}` : '';
    throw new ConfigError(`${file}: not valid YAML${where}: ${(error as Error).message.split('\n')[0]}`);
  }
  return parseConfig(raw, file);
}
