import { readFileSync } from 'node:fs';
import { parse, YAMLParseError } from 'yaml';
import { describeConfigIssue as describeIssue, describeConfigPath as describePath } from './issues.js';
import { configSchema, type AgentConfig } from './schema.js';

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
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
