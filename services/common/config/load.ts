import { checkConfigFile, formatReport } from './check.js';
import { describeConfigIssue as describeIssue, describeConfigPath as describePath } from './issues.js';
import { configSchema, type AgentConfig } from './schema.js';

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/**
 * Validates configuration that is not a file (a ConfigMap's document, a test's object): every
 * problem as `file: path: what was expected`. Files go through check.ts, which also says where.
 */
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

/**
 * The file's configuration by its schema alone (YAML and fields, with line and column), for
 * tools and tests that read a configuration without starting it; starts run the whole check
 * (cli/read-config.ts).
 */
export function loadConfig(file: string): AgentConfig {
  const report = checkConfigFile(file, configSchema);
  if (!report.config) throw new ConfigError(`invalid configuration\n${formatReport(report)}`);
  return report.config;
}
