import { parseArgs } from 'node:util';
import {
  approvalsApi,
  commandGroup,
  DEFAULT_AGENT_URL,
  type ApprovalsApi,
  type DecisionBody,
  type Output,
  UsageError,
} from './approvals-client.js';
import { approvalListText, approvalText, decisionText } from './approvals-format.js';
import { APPROVALS_USAGE } from './usage.js';

/** `asg approvals …`: list, show, approve and reject approvals of a running agent over its REST API. */

const HELP = `Usage: asg approvals <list|show|approve|reject> [options]

Commands:
${APPROVALS_USAGE}

Options:
  --url URL         the agent (default: $ASG_URL, else ${DEFAULT_AGENT_URL})
  --token TOKEN     sent as Authorization: Bearer (default: $ASG_TOKEN); prefer the variable:
                    a command line is visible to other users of the machine
  --status S        pending, approved, rejected, expired or all; several separated by commas
                    (default: pending)
  --conversation ID only the approvals of this conversation
  --needs-my-vote   list only the pending approvals you may still vote for or decide
  --limit N         approvals per page, 1 to 500 (default 50); --cursor C reads the next page
  --arguments JSON  approve only: a JSON object, checked against the tool's input schema
  --input JSON      approve only, for an approval that asks for input (an MCP server's
                    question, see show): the answer, a JSON object checked against the schema
                    the server asked for; reject declines the question
  --reason TEXT     why, stored with the decision (at most 2,000 characters)
  --json            print the agent's JSON answer instead of text
  -h, --help        this help

Exit codes:
  0  done
  1  the agent failed, or answered something unexpected
  2  bad usage, or input the agent refused (400)
  3  the agent could not be reached
  4  not signed in (401) or not allowed (403)
  5  no such approval (404)
  6  the approval was decided already, or expired (409)
`;

const OPTIONS = {
  url: { type: 'string' },
  token: { type: 'string' },
  status: { type: 'string' },
  conversation: { type: 'string' },
  'needs-my-vote': { type: 'boolean', default: false },
  limit: { type: 'string' },
  cursor: { type: 'string' },
  arguments: { type: 'string' },
  input: { type: 'string' },
  reason: { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

type Values = ReturnType<typeof parseArgs<{ args: string[]; options: typeof OPTIONS; allowPositionals: true }>>['values'];

function onlyWith(values: Values, allowed: (keyof Values)[], command: string): void {
  const given = (['status', 'conversation', 'limit', 'cursor', 'arguments', 'input', 'reason'] as const).filter(
    (name) => values[name] !== undefined && !allowed.includes(name),
  );
  if (given.length > 0) throw new UsageError(`${command} does not take --${given[0]}`);
  if (values['needs-my-vote'] && !allowed.includes('needs-my-vote')) throw new UsageError(`${command} does not take --needs-my-vote`);
}

function oneUuid(positionals: string[], command: string): string {
  const [uuid, ...extra] = positionals;
  if (!uuid) throw new UsageError(`${command} needs the UUID of an approval (see asg approvals list)`);
  if (extra.length > 0) throw new UsageError(`${command} takes one UUID; unexpected ${JSON.stringify(extra[0])}`);
  return uuid;
}

function statusFilter(status: string | undefined): string | undefined {
  if (status === undefined) return 'pending';
  return status.trim() === 'all' ? undefined : status;
}

function limitOf(limit: string | undefined): number | undefined {
  if (limit === undefined) return undefined;
  if (!/^\d+$/.test(limit) || Number(limit) < 1 || Number(limit) > 500)
    throw new UsageError(`--limit must be an integer from 1 to 500, got ${JSON.stringify(limit)}`);
  return Number(limit);
}

/** The JSON object an option gives (--arguments, --input), if given. */
function jsonObjectOption(text: string | undefined, option: string): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${option} must be JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new UsageError(`${option} must be a JSON object, e.g. '{"name": "x"}'`);
  return parsed as Record<string, unknown>;
}

/** Shell-quotes one word for a command line printed back to the user. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

async function run(api: ApprovalsApi, command: string, positionals: string[], values: Values, io: Output): Promise<void> {
  const print = (json: unknown, text: () => string) => io.out(values.json ? `${JSON.stringify(json, null, 2)}\n` : text());
  const now = new Date();
  switch (command) {
    case 'list': {
      onlyWith(values, ['status', 'conversation', 'needs-my-vote', 'limit', 'cursor'], 'list');
      if (positionals.length > 0) throw new UsageError(`list takes no UUID; unexpected ${JSON.stringify(positionals[0])}`);
      const reply = await api.list({
        status: statusFilter(values.status),
        conversationId: values.conversation,
        needsMyVote: values['needs-my-vote'],
        limit: limitOf(values.limit),
        cursor: values.cursor,
      });
      // The same filters with the next cursor; never --url or --token (a token is not printed).
      const next = (cursor: string) => {
        const words = ['list'];
        if (values.status !== undefined) words.push('--status', values.status);
        if (values.conversation !== undefined) words.push('--conversation', values.conversation);
        if (values['needs-my-vote']) words.push('--needs-my-vote');
        if (values.limit !== undefined) words.push('--limit', values.limit);
        return `asg approvals ${[...words, '--cursor', cursor].map(shellWord).join(' ')}`;
      };
      print(reply, () => approvalListText(reply, now, next));
      return;
    }
    case 'show': {
      onlyWith(values, [], 'show');
      const approval = await api.show(oneUuid(positionals, 'show'));
      // Who reads it, for "you cannot approve your own request"; an agent that cannot say is shown without.
      const viewer =
        approval.required !== undefined
          ? await api.whoami().then(
              (who) => who.principal,
              () => undefined,
            )
          : undefined;
      print(approval, () => approvalText(approval, now, viewer));
      return;
    }
    case 'approve':
    case 'reject': {
      const approved = command === 'approve';
      onlyWith(values, approved ? ['arguments', 'input', 'reason'] : ['reason'], command);
      const uuid = oneUuid(positionals, command);
      const edited = jsonObjectOption(values.arguments, '--arguments');
      const input = jsonObjectOption(values.input, '--input');
      const body: DecisionBody = {
        approved,
        ...(values.reason !== undefined && { reason: values.reason }),
        ...(edited && { arguments: edited }),
        ...(input && { input }),
      };
      const reply = await api.decide(uuid, body);
      print(reply, () => decisionText(uuid, approved, reply));
      return;
    }
    default:
      throw new UsageError(`unknown approvals command ${JSON.stringify(command)}`);
  }
}

/** Runs `asg approvals <args>` and returns the exit code; output goes through `io`. */
export function approvalsCommand(args: string[], env: NodeJS.ProcessEnv, io: Output): Promise<number> {
  const parse = () => parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true });
  return commandGroup('approvals', HELP, parse, env, io, (command, rest, values, target) =>
    run(approvalsApi(target()), command, rest, values, io),
  );
}
