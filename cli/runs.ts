import { parseArgs } from 'node:util';
import { commandGroup, DEFAULT_AGENT_URL, runsApi, type RunsApi, type Output, UsageError } from './approvals-client.js';
import { forkText, runListText, runText } from './runs-format.js';
import { RUNS_USAGE } from './usage.js';

/** `asg runs …`: a conversation's runs and a run's steps, read from a running agent over its REST API. */

const HELP = `Usage: asg runs <list|show|fork> [options]

Commands:
${RUNS_USAGE}

Options:
  --url URL       the agent (default: $ASG_URL, else ${DEFAULT_AGENT_URL})
  --token TOKEN   sent as Authorization: Bearer (default: $ASG_TOKEN); prefer the variable:
                  a command line is visible to other users of the machine
  --limit N       runs per page, 1 to 500 (default 50); --cursor C reads the next page
  --step N        fork: the step to go on from, as asg runs show numbers them (the run's step
                  count forks after its last step)
  --message TEXT  fork: sent as the new conversation's next message
  --json          print the agent's JSON answer instead of text
  -h, --help      this help

Exit codes:
  0  done
  1  the agent failed, or answered something unexpected
  2  bad usage, or input the agent refused (400)
  3  the agent could not be reached
  4  not signed in (401) or not allowed (403)
  5  no such conversation or run (404; also one of another owner's)
  6  fork: the step is outside the run, or the run cannot be forked (409)
`;

const OPTIONS = {
  url: { type: 'string' },
  token: { type: 'string' },
  limit: { type: 'string' },
  cursor: { type: 'string' },
  step: { type: 'string' },
  message: { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

type Values = ReturnType<typeof parseArgs<{ args: string[]; options: typeof OPTIONS; allowPositionals: true }>>['values'];

function oneId(positionals: string[], command: string, what: string): string {
  const [id, ...extra] = positionals;
  if (!id) throw new UsageError(`${command} needs the id of ${what}`);
  if (extra.length > 0) throw new UsageError(`${command} takes one id; unexpected ${JSON.stringify(extra[0])}`);
  return id;
}

function limitOf(limit: string | undefined): number | undefined {
  if (limit === undefined) return undefined;
  if (!/^\d+$/.test(limit) || Number(limit) < 1 || Number(limit) > 500)
    throw new UsageError(`--limit must be an integer from 1 to 500, got ${JSON.stringify(limit)}`);
  return Number(limit);
}

async function run(api: RunsApi, command: string, positionals: string[], values: Values, io: Output): Promise<void> {
  const print = (json: unknown, text: () => string) => io.out(values.json ? `${JSON.stringify(json, null, 2)}\n` : text());
  const now = new Date();
  switch (command) {
    case 'list': {
      if (values.step !== undefined || values.message !== undefined) throw new UsageError('--step and --message are for fork');
      const conversationId = oneId(positionals, 'list', 'a conversation');
      const reply = await api.list(conversationId, { limit: limitOf(values.limit), ...(values.cursor && { cursor: values.cursor }) });
      // The same page size with the next cursor; never --url or --token (a token is not printed).
      const next = (cursor: string) =>
        ['asg runs list', conversationId, ...(values.limit !== undefined ? ['--limit', values.limit] : []), '--cursor', cursor].join(' ');
      print(reply, () => runListText(reply, now, next));
      return;
    }
    case 'show': {
      if (values.limit !== undefined || values.cursor !== undefined) throw new UsageError('show does not take --limit or --cursor');
      if (values.step !== undefined || values.message !== undefined) throw new UsageError('--step and --message are for fork');
      const journal = await api.show(oneId(positionals, 'show', 'a run (see asg runs list CONVERSATION)'));
      print(journal, () => runText(journal, now));
      return;
    }
    case 'fork': {
      if (values.limit !== undefined || values.cursor !== undefined) throw new UsageError('fork does not take --limit or --cursor');
      const runId = oneId(positionals, 'fork', 'a run (see asg runs list CONVERSATION)');
      if (values.step === undefined) throw new UsageError('fork needs --step N: the step to go on from (see asg runs show RUN)');
      if (!/^\d+$/.test(values.step)) throw new UsageError(`--step must be an integer, 0 or more, got ${JSON.stringify(values.step)}`);
      if (values.message !== undefined && values.message.trim() === '') throw new UsageError('--message must not be empty');
      const reply = await api.fork(runId, { step: Number(values.step), ...(values.message !== undefined && { message: values.message }) });
      print(reply, () => forkText(runId, Number(values.step), reply));
      return;
    }
    default:
      throw new UsageError(`unknown runs command ${JSON.stringify(command)}`);
  }
}

/** Runs `asg runs <args>` and returns the exit code; output goes through `io`. */
export function runsCommand(args: string[], env: NodeJS.ProcessEnv, io: Output): Promise<number> {
  const parse = () => parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true });
  return commandGroup('runs', HELP, parse, env, io, (command, rest, values, target) => run(runsApi(target()), command, rest, values, io));
}
