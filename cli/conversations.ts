import { parseArgs } from 'node:util';
import { commandGroup, DEFAULT_AGENT_URL, restCaller, type Output, UsageError } from './approvals-client.js';

/** `asg conversations …`: the conversations of a running agent over its REST API (deleting one). */

const HELP = `Usage: asg conversations delete ID [options]

Commands:
  delete ID         delete the conversation: its messages, events, run, approvals and push
                    configs; a pending approval of it is rejected first ("conversation deleted");
                    the audit trail keeps its entries. Its owner or an admin may.

Options:
  --url URL         the agent (default: $ASG_URL, else ${DEFAULT_AGENT_URL})
  --token TOKEN     sent as Authorization: Bearer (default: $ASG_TOKEN); prefer the variable:
                    a command line is visible to other users of the machine
  -h, --help        this help

Exit codes:
  0  deleted
  1  the agent failed, or answered something unexpected
  2  bad usage
  3  the agent could not be reached
  4  not signed in (401) or not allowed (403)
  5  no such conversation (404)
  6  an approved call of the conversation has no outcome yet (409): try again once it has
`;

const OPTIONS = {
  url: { type: 'string' },
  token: { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

/** Runs `asg conversations <args>` and returns the exit code; output goes through `io`. */
export function conversationsCommand(args: string[], env: NodeJS.ProcessEnv, io: Output): Promise<number> {
  const parse = () => parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true });
  return commandGroup('conversations', HELP, parse, env, io, async (command, [id, ...extra], _values, target) => {
    if (command !== 'delete') throw new UsageError(`unknown conversations command ${JSON.stringify(command)}`);
    if (!id) throw new UsageError('delete needs the id of a conversation');
    if (extra.length > 0) throw new UsageError(`delete takes one id; unexpected ${JSON.stringify(extra[0])}`);
    await restCaller(target())('DELETE', `/conversations/${encodeURIComponent(id)}`);
    io.out(`conversation ${id} deleted\n`);
  });
}
