import { existsSync, readFileSync } from 'node:fs';
import { Argument, Command, type CommanderError, InvalidArgumentError, Option } from 'commander';
import { registerEnvironmentSecrets } from '../services/common/secrets.js';
import { SERVICE_NAMES } from './service-names.js';
import { APPROVALS_USAGE, RUNS_USAGE } from './usage.js';

/**
 * `asg <command>` on commander. Each command's code is imported when that command
 * runs, so that the help texts, `config check`, `approvals` and the built-in MCP servers (which
 * the tool broker starts as its children) load neither the services nor gRPC, OpenTelemetry or
 * the AI SDK: `asg --help` loads commander and nothing else.
 *
 * Exit codes: 0 done (help and --version included), 1 a failure (an agent configuration that does
 * not pass the check included), 2 bad usage (commander's own refusals) or a bad `asg web`
 * configuration; `asg approvals` documents its own.
 */

/**
 * Without --config or ASG_CONFIG: config/agent.yaml, as in a clone; else the agent.yaml that
 * `asg init` writes, when the folder has one.
 */
const DEFAULT_CONFIG = !existsSync('config/agent.yaml') && existsSync('agent.yaml') ? 'agent.yaml' : 'config/agent.yaml';
/** pino's levels: what LOG_LEVEL takes. */
const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/** The package's version: its package.json is above dist/cli/main.js by two levels, above cli/main.ts (under tsx) by one. */
function version(): string {
  for (const path of ['../../package.json', '../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'agent-stop-and-go' && pkg.version) return pkg.version;
    } catch {
      /* not this level */
    }
  }
  return '0.0.0';
}

function portNumber(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65535) throw new InvalidArgumentError('expected a port number from 0 to 65535.');
  return Number(value);
}

function hostName(value: string): string {
  if (value.trim() === '' || /\s/.test(value)) throw new InvalidArgumentError('expected a host name or IP address.');
  return value;
}

const configOption = () => new Option('-c, --config <file>', 'agent configuration').env('ASG_CONFIG').default(DEFAULT_CONFIG);
const insecureOption = () =>
  new Option(
    '--insecure',
    'let the gateway listen beyond loopback without auth (as insecure: true): anyone who reaches the port may chat and approve',
  );
/** What listens: `--port` beats PORT, which beats the configuration. */
const listenOptions = (what: string) => [
  new Option('--host <host>', `interface ${what} listens on (default: the configuration's)`).argParser(hostName),
  new Option('--port <port>', `port ${what} listens on; 0 picks a free one (default: the configuration's)`)
    .env('PORT')
    .argParser(portNumber),
];

interface ListenOptions {
  host?: string;
  port?: number;
}

function program(): Command {
  const asg = new Command('asg')
    .description(
      'Agent Stop and Go: LLM agents that call MCP tools and A2A agents, and stop before destructive actions until a human approves.',
    )
    .version(version(), '-V, --version', 'print the version')
    .addOption(
      new Option(
        '--log-format <format>',
        'log lines as JSON or pretty text (sets LOG_FORMAT; default: json, pretty on a terminal)',
      ).choices(['json', 'pretty']),
    )
    .addOption(new Option('--log-level <level>', 'the least severe level logged (sets LOG_LEVEL; default: info)').choices(LOG_LEVELS))
    .helpOption('-h, --help', 'show help (also after any command)')
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false })
    .showSuggestionAfterError()
    // Set before any command's code loads: the logger reads them when it is first created.
    .hook('preAction', () => {
      const { logFormat, logLevel } = asg.opts<{ logFormat?: string; logLevel?: string }>();
      if (logFormat) process.env.LOG_FORMAT = logFormat;
      if (logLevel) {
        process.env.LOG_LEVEL = logLevel;
        // The logger before pino (services/common/log.ts) reads this name.
        process.env.ASG_LOG_LEVEL = logLevel;
      }
    })
    // Commander's refusals (unknown command or option, missing argument) are bad usage: exit 2, as before it.
    .exitOverride((error: CommanderError) => process.exit(error.exitCode === 0 ? 0 : 2));

  asg
    .command('up')
    .description('every service in one process (what `npm start` runs); the gateway listens on --host and --port')
    .addOption(configOption())
    .addOption(insecureOption())
    .addOption(listenOptions('the gateway')[0]!)
    .addOption(listenOptions('the gateway')[1]!)
    .action(async (options: { config: string; insecure?: boolean } & ListenOptions) => {
      const { up } = await import('./agent.js');
      await up(options.config, { insecure: options.insecure === true, host: options.host, port: options.port });
    });

  asg
    .command('dev')
    .description('run the agent as `up` does, and restart it with its data whenever the configuration file changes')
    .addOption(configOption())
    .addOption(insecureOption())
    .addOption(listenOptions('the gateway')[0]!)
    .addOption(listenOptions('the gateway')[1]!)
    .addHelpText('after', '\nA configuration that does not pass `asg config check` is reported and the last good one keeps running.')
    .action(async (options: { config: string; insecure?: boolean } & ListenOptions) => {
      const { dev } = await import('./dev.js');
      await dev(options.config, { insecure: options.insecure === true, host: options.host, port: options.port });
    });

  asg
    .command('init')
    .description('a new agent in DIR: agent.yaml, .env.example, a README of its own and a .gitignore')
    .argument('[dir]', 'the folder (made if missing)', '.')
    .option('--force', 'overwrite those files if they exist')
    .action(async (dir: string, options: { force?: boolean }) => {
      const { init } = await import('./init.js');
      init(dir, { force: options.force === true });
    });

  asg
    .command('serve')
    .description('one service alone, for one container per service')
    .addArgument(new Argument('<service>', 'the service to run').choices(SERVICE_NAMES))
    .addOption(configOption())
    .addOption(insecureOption())
    .addOption(listenOptions('the service')[0]!)
    .addOption(listenOptions('the service')[1]!)
    .addHelpText(
      'after',
      '\nWithout --host and --port, a service other than the gateway listens on 0.0.0.0 (or ASG_LISTEN) at the port of its address in services.<name>.',
    )
    .action(async (service: (typeof SERVICE_NAMES)[number], options: { config: string; insecure?: boolean } & ListenOptions) => {
      const { serve } = await import('./agent.js');
      await serve(service, options.config, { insecure: options.insecure === true, host: options.host, port: options.port });
    });

  asg
    .command('migrate')
    .description(
      "bring the conversation store's PostgreSQL schema to this build's, then exit: run it with a role that owns the schema before a new build's store starts (docs/deploy.md)",
    )
    .addOption(
      new Option('-c, --config <file>', 'agent configuration whose store.url names the database (ASG_DATABASE_URL wins)').env('ASG_CONFIG'),
    )
    .addHelpText(
      'after',
      '\nThe database is ASG_DATABASE_URL, else store.url of --config. Exit codes: 0 done or nothing to do, 1 the database refused, 2 no database named.',
    )
    .action(async (options: { config?: string }) => {
      const { migrateCommand } = await import('./migrate.js');
      await migrateCommand(options);
    });

  asg
    .command('mcp-resources')
    .description('the built-in resources MCP server (stdio, or Streamable HTTP at /mcp with --http)')
    .option('--db <file>', 'its SQLite database', './resources.db')
    .addOption(new Option('--http <port>', 'serve Streamable HTTP on this port instead of stdio').argParser(portNumber))
    .addOption(new Option('--port <port>', 'the same as --http').argParser(portNumber).conflicts('http'))
    .option('--host <host>', 'interface the HTTP server listens on', '127.0.0.1')
    .action(async (options: { db: string; http?: number; port?: number; host: string }) => {
      const { mcpResources } = await import('./mcp-servers.js');
      await mcpResources({ db: options.db, host: options.host, port: options.http ?? options.port });
    });

  asg
    .command('mcp-filesystem')
    .description("the built-in sandboxed filesystem MCP server (Streamable HTTP at /mcp on the config's host and port, or stdio)")
    .requiredOption('-c, --config <file>', 'its configuration (roots, host, port)')
    .option('--stdio', 'serve over stdio instead of HTTP')
    .addOption(new Option('--host <host>', "interface the HTTP server listens on (default: the configuration's)").argParser(hostName))
    .addOption(new Option('--port <port>', "port the HTTP server listens on (default: the configuration's)").argParser(portNumber))
    .action(async (options: { config: string; stdio?: boolean } & ListenOptions) => {
      const { mcpFilesystem } = await import('./mcp-servers.js');
      await mcpFilesystem({ config: options.config, stdio: options.stdio === true, host: options.host, port: options.port });
    });

  const config = asg.command('config').description('agent configuration files');
  config
    .command('check')
    .description('validate an agent configuration file the way startup does, and say what it defines')
    .argument('[file]', 'the file (default: --config, else $ASG_CONFIG, else config/agent.yaml)')
    .addOption(configOption())
    .addOption(insecureOption())
    .action(async (file: string | undefined, options: { config: string; insecure?: boolean }) => {
      const { configCheck } = await import('./read-config.js');
      await configCheck(file ?? options.config, { insecure: options.insecure === true });
    });

  const policy = asg.command('policy').description('approval policies (approvals.policies of an agent configuration)');
  policy
    .command('test')
    .description('which policy rule decides a call and what it decides, offline; or check a table of cases (--file)')
    .addOption(configOption())
    .option('--tool <name>', 'the tool name as the agent sees it (resources_add, a2a_<name>)')
    .option('--args <json>', "the call's arguments, a JSON object", '{}')
    .option('--server <name>', 'the MCP server of the tool (CEL `server`; default: empty)')
    .option('--node <path>', 'the agent-tree node making the call, e.g. pipeline/executor (CEL `node`; default: empty)')
    .option('--requester <principal>', 'who sent the message, e.g. token:alice (CEL `requester.name`; default: empty)')
    .option('--roles <list>', "the requester's roles, comma-separated: chat, approve, admin")
    .option('--owner <principal>', "the conversation's owner (CEL `conversation.owner`; default: empty)")
    .option('--file <cases.yaml>', 'a table of cases, each with tool, args, expect (approve|reject|require|none) and optionally rule')
    .addHelpText(
      'after',
      '\nExit codes: 0 judged, or every case as expected; 1 a case differs (each is named); 2 bad usage, a configuration that does not pass the check, or a cases file that cannot be read.',
    )
    .action(async (options: import('./policy.js').PolicyTestOptions) => {
      const { policyTest } = await import('./policy.js');
      process.exitCode = policyTest(options, { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text) });
    });

  asg
    .command('web')
    .description('the web chat on its own port, in front of an agent')
    .option('-c, --config <file>', 'its configuration (host, port, agent_url)', 'config/web.yaml')
    .addOption(listenOptions('the chat')[0]!)
    .addOption(listenOptions('the chat')[1]!)
    .action(async (options: { config: string } & ListenOptions) => {
      const { runWeb } = await import('./web.js');
      await runWeb(options);
    });

  // `asg approvals` parses its own arguments: its options, help and exit codes are documented there (cli/approvals.ts).
  asg
    .command('approvals')
    .description(
      'list, show, approve and reject the approvals of a running agent (asg approvals --help: --url, --token, --json, exit codes)',
    )
    .usage('<list|show|approve|reject> [options]')
    .argument('[arguments...]')
    .helpOption(false)
    // What `asg help approvals` shows: commander's help of this command knows none of its options.
    .addHelpText('after', '\nRun asg approvals --help for its commands, options and exit codes.')
    .allowUnknownOption()
    .allowExcessArguments()
    .action(async (args: string[]) => {
      const { approvalsCommand } = await import('./approvals.js');
      process.exitCode = await approvalsCommand(args, process.env, {
        out: (text) => process.stdout.write(text),
        err: (text) => process.stderr.write(text),
      });
    });

  // `asg conversations` parses its own arguments, as `asg approvals` does (cli/conversations.ts).
  asg
    .command('conversations')
    .description('delete a conversation of a running agent (asg conversations --help: --url, --token, exit codes)')
    .usage('delete ID [options]')
    .argument('[arguments...]')
    .helpOption(false)
    .addHelpText('after', '\nRun asg conversations --help for its options and exit codes.')
    .allowUnknownOption()
    .allowExcessArguments()
    .action(async (args: string[]) => {
      const { conversationsCommand } = await import('./conversations.js');
      process.exitCode = await conversationsCommand(args, process.env, {
        out: (text) => process.stdout.write(text),
        err: (text) => process.stderr.write(text),
      });
    });

  // `asg runs` too (cli/runs.ts).
  asg
    .command('runs')
    .description("a conversation's runs and a run's steps, read from a running agent (asg runs --help: --url, --token, --json)")
    .usage('<list|show> [options]')
    .argument('[arguments...]')
    .helpOption(false)
    .addHelpText('after', '\nRun asg runs --help for its commands, options and exit codes.')
    .allowUnknownOption()
    .allowExcessArguments()
    .action(async (args: string[]) => {
      const { runsCommand } = await import('./runs.js');
      process.exitCode = await runsCommand(args, process.env, {
        out: (text) => process.stdout.write(text),
        err: (text) => process.stderr.write(text),
      });
    });

  asg.addHelpText(
    'after',
    `\nApprovals:\n${APPROVALS_USAGE}\n\nRuns:\n${RUNS_USAGE}\n\nRun asg <command> --help for the options of a command.`,
  );
  return asg;
}

async function main(argv: string[]): Promise<void> {
  registerEnvironmentSecrets();
  const asg = program();
  // Plain `asg` prints the help and succeeds, as it did before commander.
  if (argv.length === 0) {
    asg.outputHelp();
    return;
  }
  await asg.parseAsync(argv, { from: 'user' });
}

main(process.argv.slice(2)).catch(async (error: unknown) => {
  const { createLogger } = await import('../services/common/log.js');
  createLogger('asg').error('failed to start', { error: error instanceof Error ? error.message : String(error) });
  process.exit(1);
});
