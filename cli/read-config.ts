import { readFileSync } from 'node:fs';
import {
  checkAgentConfigFile,
  formatReport,
  type ConfigCheck,
  type ConfigProblem,
  type ConfigReport,
} from '../services/common/config/check.js';
import type { AgentConfig } from '../services/common/config/schema.js';

/**
 * The one check of an agent configuration: `asg config check` and every start run
 * `checkAgentConfig`, so they agree on every file, in the same words. Beyond the file itself
 * (check.ts: YAML, fields, model names, provider keys) it runs what the services would refuse
 * at their start, without starting them: the gateway's bind rule and token variables, the
 * webhooks' secrets, the stdio MCP servers' relative paths, the approval policies' conditions.
 */

export interface AgentCheckOptions {
  env?: NodeJS.ProcessEnv;
  /** `--insecure`: as `insecure: true` in the file. */
  insecure?: boolean;
  /**
   * What will start: everything (`asg up`, and what `config check` checks for), or one service
   * (`asg serve <service>`), which is refused only for what that service needs.
   */
  service?: string;
  /** `--host`, and `--port` or PORT: where the gateway (or the served service) listens instead of the file's. */
  host?: string | undefined;
  port?: number | undefined;
}

/** The file's configuration with --host and --port (or PORT) over its `host` and `port`. */
function withListen(config: AgentConfig, options: AgentCheckOptions): AgentConfig {
  return {
    ...config,
    ...(options.host !== undefined && { host: options.host }),
    ...(options.port !== undefined && { port: options.port }),
  };
}

async function checkAgentConfig(file: string, options: AgentCheckOptions = {}): Promise<ConfigReport<AgentConfig>> {
  const env = options.env ?? process.env;
  const report = checkAgentConfigFile(file, { env });
  if (!report.config) return report;
  const checks = await serviceChecks(report.config, options);
  return checks.length === 0 ? report : checkAgentConfigFile(file, { env, checks });
}

// Loopback names the bind rule always allows: with them and no `auth`, the gateway has nothing to refuse.
const PLAIN_LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

/**
 * The services' own start checks that the configuration calls for, imported only then, so that
 * `asg config check` of a plain configuration loads no service code.
 */
async function serviceChecks(config: AgentConfig, options: AgentCheckOptions): Promise<ConfigCheck<AgentConfig>[]> {
  const service = options.service ?? 'all';
  const checks: ConfigCheck<AgentConfig>[] = [];
  // The bind rule judges where the gateway will listen: --host over the file's host.
  const gatewayMayRefuse = config.auth !== undefined || !PLAIN_LOOPBACK.has(withListen(config, options).host);
  if ((service === 'all' || service === 'gateway') && gatewayMayRefuse) {
    const check = gatewayCheck(await import('../gateway/auth/preflight.js'), options.insecure ?? false);
    checks.push((file, env) => check(withListen(file, options), env));
  }
  if ((service === 'all' || service === 'tool-broker') && config.mcp_servers.some((server) => server.command)) {
    const { stdioPathProblems } = await import('../services/common/config/stdio-paths.js');
    checks.push((file) => ({ errors: stdioPathProblems(file) }));
  }
  if ((service === 'all' || service === 'orchestrator') && config.webhooks.length > 0)
    checks.push(webhookCheck(await import('../services/orchestrator/webhooks/signing.js')));
  // Approval policies are the orchestrator's: each condition compiled and type-checked as it will run.
  if ((service === 'all' || service === 'orchestrator') && config.approvals.policies.length > 0) {
    const { policyProblems } = await import('../services/orchestrator/domain/approval-policy.js');
    checks.push((file) => policyProblems(file));
  }
  return checks;
}

export interface StartCheck {
  /** The configuration a start uses; undefined when the file has errors. */
  config: AgentConfig | undefined;
  /** Its errors and warnings, as `asg config check` prints them; undefined when there are none. */
  problems: string | undefined;
}

/** The whole check of a start, without exiting: what `asg dev` runs on every change of the file. */
export async function checkStart(file: string, options: AgentCheckOptions = {}): Promise<StartCheck> {
  const report = await checkAgentConfig(file, options);
  const problems = report.errors.length > 0 || report.warnings.length > 0 ? formatReport(report) : undefined;
  if (!report.config) return { config: undefined, problems };
  const config = withListen(report.config, options);
  return { config: options.insecure ? { ...config, insecure: true } : config, problems };
}

/** The configuration a start uses; a configuration with errors is printed and exits 1 before anything starts. */
export async function readConfig(file: string, options: AgentCheckOptions = {}): Promise<AgentConfig> {
  const { config, problems } = await checkStart(file, options);
  if (problems) process.stderr.write(`${problems}\n`);
  if (!config) process.exit(1);
  return config;
}

/**
 * `asg config check FILE`: what the start of that file would refuse, and warn of, without
 * starting anything; exit 1 on an error. The file's kind is named by its first line
 * `# yaml-language-server: $schema=…` (web.schema.json: `asg web`; filesystem.schema.json:
 * `asg mcp-filesystem`); any other file is an agent configuration (`asg up`).
 */
export async function configCheck(file: string | undefined, options: AgentCheckOptions = {}): Promise<void> {
  if (!file) {
    process.stderr.write('config check needs a FILE (asg config check FILE)\n');
    process.exit(1);
  }
  const kind = configKind(file);
  if (kind === 'web') {
    const { loadWebConfigReport } = await import('../gateway/web/config.js');
    const config = passOrExit(loadWebConfigReport(file));
    process.stdout.write(`${file}: valid (web chat on ${config.host}:${config.port}, agent at ${config.agent_url})\n`);
    return;
  }
  if (kind === 'filesystem') {
    const { loadFilesystemConfigReport } = await import('../services/mcp-filesystem/config.js');
    const config = passOrExit(loadFilesystemConfigReport(file));
    process.stdout.write(
      `${file}: valid (mcp-filesystem on ${config.host}:${config.port}, ${config.roots.length} root(s): ${config.roots.map((root) => root.name).join(', ')})\n`,
    );
    return;
  }
  const config = await readConfig(file, options);
  process.stdout.write(
    `${file}: valid (model ${config.llm.model}, ${config.mcp_servers.length} MCP server(s), ${config.a2a.length} A2A agent(s), ${config.agent ? 'agent tree' : 'simple mode'})\n`,
  );
}

function passOrExit<T>(report: ConfigReport<T>): T {
  if (report.errors.length > 0 || report.warnings.length > 0) process.stderr.write(`${formatReport(report)}\n`);
  if (!report.config) process.exit(1);
  return report.config;
}

/** The kind of configuration `file` declares by its schema line; `agent` when it names none (or cannot be read: the agent check says so). */
export function configKind(file: string): 'agent' | 'web' | 'filesystem' {
  let head = '';
  try {
    head = readFileSync(file, 'utf8').slice(0, 4096);
  } catch {
    return 'agent';
  }
  const schema = /^#\s*yaml-language-server:\s*\$schema=(\S+)/m.exec(head)?.[1] ?? '';
  if (/(^|\/)web\.schema\.json$/.test(schema)) return 'web';
  if (/(^|\/)filesystem\.schema\.json$/.test(schema)) return 'filesystem';
  return 'agent';
}

function gatewayCheck(
  { AuthConfigError, checkAuthConfig, InsecureBindingError }: typeof import('../gateway/auth/preflight.js'),
  insecure: boolean,
): ConfigCheck<AgentConfig> {
  return (config, env) => {
    try {
      checkAuthConfig(insecure ? { ...config, insecure: true } : config, env);
      return {};
    } catch (error) {
      if (error instanceof InsecureBindingError) return { errors: [{ path: ['host'], message: error.message }] };
      if (error instanceof AuthConfigError) return { errors: [tokenProblem(error.message)] };
      throw error;
    }
  };
}

/** A token's problem at its `token_env`, when the message names the entry ("auth.tokens[2] (alice): …"). */
function tokenProblem(message: string): ConfigProblem {
  const entry = /^auth\.tokens\[(\d+)\] \([^)]*\): /.exec(message);
  if (!entry) return { path: ['auth', 'tokens'], message: message.replace(/^auth\.tokens: /, '') };
  return { path: ['auth', 'tokens', Number(entry[1]), 'token_env'], message: message.slice(entry[0].length) };
}

const webhookCheck =
  ({ webhookKey, WebhookSecretError }: typeof import('../services/orchestrator/webhooks/signing.js')): ConfigCheck<AgentConfig> =>
  (config, env) => {
    const errors: ConfigProblem[] = [];
    config.webhooks.forEach((webhook, index) => {
      try {
        webhookKey(webhook.secret_env, env[webhook.secret_env]);
      } catch (error) {
        if (!(error instanceof WebhookSecretError)) throw error;
        errors.push({ path: ['webhooks', index, 'secret_env'], message: error.message });
      }
    });
    return { errors };
  };
