/**
 * Texts shared by the commands, kept apart from them: the help of `asg` (cli/main.ts, on
 * commander) loads this module and no package but commander, so that it answers at once.
 */

export const APPROVALS_USAGE = `  approvals list [--status S] [--conversation ID] [--needs-my-vote] [--limit N] [--cursor C]
                                          approvals of a running agent (default: pending ones);
                                          --needs-my-vote: only those you may still vote for
  approvals show UUID                     one approval: its call, arguments and decision
  approvals approve UUID [--arguments JSON | --input JSON] [--reason TEXT]
                                          approve; --arguments runs the call with these instead,
                                          --input answers an MCP server's question
  approvals reject UUID [--reason TEXT]   reject; the reason is told to the model`;

export const RUNS_USAGE = `  runs list CONVERSATION [--limit N] [--cursor C]
                                          a conversation's runs, newest first
  runs show RUN                           a run step by step: nodes, model and tool calls,
                                          approvals and who decided them
  runs fork RUN --step N [--message TEXT] a new conversation with the run's history before step N,
                                          going on from there; a destructive call asks anew`;

/** Says what went wrong on stderr and exits (2: bad usage or configuration). */
export function fail(message: string, code = 1): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}
