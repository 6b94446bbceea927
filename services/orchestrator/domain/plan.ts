import type { ToolCallPart } from '../../../gen/ts/asg/llm/v1/llm.js';
import type { Tool } from '../../../gen/ts/asg/tools/v1/tools.js';
import type { PolicyVerdict, RequiredApprovals } from './approval-policy.js';
import { checkArguments, parseArguments } from './arguments.js';
import { NOT_RETRIED } from './messages.js';

/**
 * What to do with each tool call of one model step. Pure: the model's calls and the tool
 * catalogue in, decisions out.
 *  - `reject`: the call is malformed (unknown tool, bad JSON, schema mismatch); nothing runs,
 *    the reason goes back to the model as the call's error result.
 *  - `run`: a safe call, executed at once.
 *  - `gate`: a destructive call; the first one of the step stops the turn for approval.
 *  - `defer`: a further destructive call of the same step; only one approval waits at a
 *    time, so it is answered with an error that asks the model to request it again later.
 *  - `exit`: the `exit_loop` tool of an llm node with `can_exit_loop`; the orchestrator
 *    answers it and the node ends after this step.
 *  - `refuse`: an approval policy rejected the call; nothing runs, and the model is told the
 *    rule's reason as it is told a human's.
 * Where destructive calls do not gate (inside parallel and loop nodes), they are `run` with
 * `unapproved` set, so that they are logged and marked in the conversation.
 *
 * An approval policy (approval-policy.ts) judges every well-formed call before the annotations
 * do, whether destructive or not: a rule that approves runs it (`policy` names the rule), one
 * that rejects refuses it, one that requires a human — or whose condition could not be
 * evaluated — gates it, also where destructive calls would run unapproved (a rule asking for a
 * human is explicit). No rule matching: the annotations decide, as without policies.
 */
export type PlannedCall =
  | { kind: 'reject'; call: ToolCallPart; args: Record<string, unknown>; reason: string }
  | { kind: 'run'; call: ToolCallPart; args: Record<string, unknown>; tool: Tool; unapproved?: boolean; policy?: string }
  | { kind: 'exit'; call: ToolCallPart; args: Record<string, unknown> }
  | { kind: 'gate'; call: ToolCallPart; args: Record<string, unknown>; tool: Tool; policy?: PolicyGate }
  | { kind: 'refuse'; call: ToolCallPart; args: Record<string, unknown>; tool: Tool; rule: string; reason?: string }
  | { kind: 'defer'; call: ToolCallPart; args: Record<string, unknown>; tool: Tool };

/**
 * Why a policy stops a call for a human: the rule, and the error of its condition when it could
 * not be evaluated; else who may decide it (`require`).
 */
export interface PolicyGate {
  rule: string;
  error?: string;
  require?: RequiredApprovals;
}

/** The policy's part of a `require` verdict: the error of its condition, or who may decide. */
export function policyGate(verdict: Extract<PolicyVerdict, { kind: 'require' }>): PolicyGate {
  return { rule: verdict.rule, ...(verdict.error !== undefined ? { error: verdict.error } : { require: verdict.require }) };
}

export interface PlanOptions {
  /** False inside parallel and loop nodes: destructive calls run without approval. */
  gateDestructive: boolean;
  /** The name of the exit tool when the node may end its loop. */
  exitTool?: string;
  /** The approval policies' verdict on a well-formed call; absent: none is configured. */
  policy?: (call: ToolCallPart, tool: Tool, args: Record<string, unknown>) => PolicyVerdict;
}

export function planToolCalls(
  calls: readonly ToolCallPart[],
  tools: ReadonlyMap<string, Tool>,
  options: PlanOptions = { gateDestructive: true },
): PlannedCall[] {
  let gated = false;
  return calls.map((call): PlannedCall => {
    const tool = tools.get(call.name);
    const parsed = parseArguments(call.argumentsJson);
    const args = parsed.ok ? parsed.value : {};
    if (options.exitTool !== undefined && call.name === options.exitTool) return { kind: 'exit', call, args };
    if (!tool) {
      const known = [...tools.keys()].sort().join(', ') || 'none';
      return { kind: 'reject', call, args, reason: `unknown tool "${call.name}" (available tools: ${known}); nothing was executed` };
    }
    if (!parsed.ok) return { kind: 'reject', call, args, reason: `invalid call to ${call.name}: ${parsed.error}; nothing was executed` };
    const problem = checkArguments(tool.inputSchema, args);
    if (problem) return { kind: 'reject', call, args, reason: `invalid arguments for ${call.name}: ${problem}; nothing was executed` };
    const verdict = options.policy?.(call, tool, args) ?? { kind: 'none' };
    if (verdict.kind === 'approve') return { kind: 'run', call, args, tool, policy: verdict.rule };
    if (verdict.kind === 'reject')
      return { kind: 'refuse', call, args, tool, rule: verdict.rule, ...(verdict.reason !== undefined && { reason: verdict.reason }) };
    if (verdict.kind === 'require') {
      if (gated) return { kind: 'defer', call, args, tool };
      gated = true;
      return { kind: 'gate', call, args, tool, policy: policyGate(verdict) };
    }
    if (!tool.destructive) return { kind: 'run', call, args, tool };
    if (!options.gateDestructive) return { kind: 'run', call, args, tool, unapproved: true };
    if (gated) return { kind: 'defer', call, args, tool };
    gated = true;
    return { kind: 'gate', call, args, tool };
  });
}

/** Human-readable description of a gated call, shown with the approval; with why a policy stops it, when one does. */
export function describeCall(toolName: string, server: string, args: Record<string, unknown>, policy?: PolicyGate): string {
  const where = server ? ` on ${server}` : '';
  const call = `${toolName}${where} with arguments ${JSON.stringify(args)}`;
  if (!policy) return call;
  if (policy.error === undefined) return `${call} (policy "${policy.rule}" asks a human)`;
  return `${call} (policy "${policy.rule}" could not be evaluated, so a human decides: ${policy.error})`;
}

/** What the model reads for a call an approval policy rejected: the rule, its reason, and that nothing ran. */
export function policyRejectionText(rule: string, reason: string | undefined): string {
  const said = reason?.trim();
  const why = said ? `: ${said}${/[.!?]$/.test(said) ? '' : '.'}` : '.';
  return `Rejected by policy "${rule}"${why} ${NOT_RETRIED}`;
}

export const DEFERRED_REASON = (name: string) =>
  `${name} was not executed: it needs approval and another call of the same step is already waiting for one. Request it again once that approval is resolved.`;
