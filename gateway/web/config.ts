import { z } from 'zod';
import { checkConfigFile, formatReport, type ConfigReport } from '../../services/common/config/check.js';
import { ConfigError } from '../../services/common/config/load.js';
import { configSchema } from '../../services/common/config/schema.js';

/**
 * `config/web.yaml` of `asg web`: where the chat is
 * served and which agent it talks to.
 */
export const webConfigSchema = z
  .object({
    host: z.string().min(1).default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).default(3000),
    /** The agent's base URL (its REST API, tRPC router and events). */
    agent_url: z
      .url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' })
      .default('http://localhost:8080')
      .transform((url) => url.replace(/\/+$/, '')),
    /**
     * What the chat's own port answers for, as in the agent's config:
     * `allowed_hosts`, `public_url`, `cors.allowed_origins`. The same cross-site guard runs here.
     */
    // The chat's server stops at once (it holds no turns) and serves no agent card: the agent's drain_delay and trusted_proxies are not its fields.
    server: configSchema.shape.server.unwrap().omit({ drain_delay: true, trusted_proxies: true }).prefault({}),
  })
  .strict();

export type WebConfig = z.infer<typeof webConfigSchema>;

function describeIssue(issue: z.core.$ZodIssue): string {
  const path = issue.path.length > 0 ? issue.path.map(String).join('.') : '(top level)';
  if (issue.code === 'unrecognized_keys')
    return `${path}: unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((key) => `"${key}"`).join(', ')} (expected host, port, agent_url, server)`;
  return `${path}: ${issue.message}`;
}

/** Validates parsed YAML; every problem is reported as `file: path: what was expected`. */
export function parseWebConfig(raw: unknown, file: string): WebConfig {
  const result = webConfigSchema.safeParse(raw ?? {});
  if (result.success) return result.data;
  throw new ConfigError(`invalid web configuration\n${result.error.issues.map((issue) => `${file}: ${describeIssue(issue)}`).join('\n')}`);
}

/** The file's web configuration, checked as `asg config check` checks it (line, column, did you mean). */
export function loadWebConfig(file: string): WebConfig {
  const report = loadWebConfigReport(file);
  if (!report.config) throw new ConfigError(`invalid web configuration\n${formatReport(report)}`);
  return report.config;
}

/** What `asg web` and `asg config check` say of the file. */
export function loadWebConfigReport(file: string): ConfigReport<WebConfig> {
  return checkConfigFile(file, webConfigSchema);
}
