import { celEnv, celFunc, CelScalar, isCelError, parse, plan, type CelEnv } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import type { Expr } from '@bufbuild/cel-spec/cel/expr/syntax_pb.js';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import type { AgentConfig, ApprovalPolicyRule } from '../../common/config/schema.js';
import { wildcardPattern } from '../../common/wildcard.js';
import { BOOL, CelTypeError, describeType, DYN, STRING, TIMESTAMP, typeOf, type StaticType } from './cel-types.js';

/**
 * Approval policies (`approvals.policies`): rules that decide a planned tool call before the
 * annotations do. The first rule whose `tools` patterns match the call's tool name and whose
 * `when` (a CEL expression over the call; absent: always) is true decides: `approve` (the call
 * runs without a human, audited as decided by `policy:<name>`), `reject` (it does not run; the
 * model is told the rule's reason) or `require` (it stops for a human, as a destructive call
 * does). No rule matching: the annotations and `mcp_servers[].approval` decide, as without
 * policies.
 *
 * A condition that cannot be evaluated — a run-time error, a result that is not a bool, an
 * evaluation past its bounds — is never an approval: the call stops for a human, and the
 * approval's description says why. Evaluation is a pure function of the call and the run's
 * context (the clock comes in as `now`), bounded so that no argument a model makes up can make
 * it run long: the expression's length and size are bounded when the configuration loads, the
 * arguments' size before each evaluation, and the steps of its comprehensions (`all`,
 * `exists`, `map`, `filter`) while it runs.
 *
 * This one module compiles and evaluates policies for the run machine, `asg config check`
 * and `asg policy test`, so that all three decide alike.
 */

/** The bounds of a condition. */
export const POLICY_BOUNDS = {
  /** Characters of one `when` expression. */
  expressionLength: 2_000,
  /** Nodes of its syntax tree, macros expanded. */
  expressionNodes: 400,
  /** Comprehensions inside comprehensions: two levels are quadratic in the arguments, three would be cubic. */
  comprehensionDepth: 2,
  /** Iterations of all comprehensions of one evaluation together (some tens of milliseconds at most). */
  steps: 1_000,
  /** The call's arguments as JSON, in bytes. */
  argumentBytes: 64 * 1024,
} as const;

/** The person whose message led to the call: their principal (`token:alice`, `jwt:<issuer>#bob`, `anonymous`) and roles. */
export interface Requester {
  name: string;
  roles: string[];
}

/** The planned call a policy judges. */
export interface PolicyCall {
  tool: string;
  /** The MCP server of the tool (`a2a` for an A2A delegation). */
  server: string;
  args: Record<string, unknown>;
  /** The agent-tree node's path of names (`pipeline/executor`); empty in simple mode. */
  node: string;
}

/** The run's context of a call. */
export interface PolicyContext {
  conversation: { id: string; owner: string };
  requester: Requester;
  /** Milliseconds since the epoch. */
  now: number;
}

/**
 * What `require` asks for: `approvals` distinct people, each holding `role` (by name; absent:
 * "approve"), none of them the requester with `notRequester`; with `escalate`, after that long
 * the people of its role may vote too.
 */
export interface RequiredApprovals {
  approvals: number;
  role?: string;
  notRequester: boolean;
  escalate?: { afterMs: number; toRole: string };
}

export type PolicyVerdict =
  /** No rule matched: the annotations and the server's approval rules decide. */
  | { kind: 'none' }
  | { kind: 'approve'; rule: string }
  | { kind: 'reject'; rule: string; reason?: string }
  /** Stop for a human; with `error`, because the rule's condition could not be evaluated. */
  | { kind: 'require'; rule: string; require: RequiredApprovals; error?: string };

/** A problem of a rule, at its path under `approvals.policies`; `offset` is a character offset into a `when` expression. */
export interface PolicyProblem {
  path: (string | number)[];
  message: string;
  offset?: number;
}

/** Thrown by compilePolicies for a configuration that did not pass `asg config check`. */
export class PolicyConfigError extends Error {}

type Condition = (bindings: Record<string, unknown>) => unknown;

interface CompiledRule {
  name: string;
  tools: RegExp[];
  when?: Condition;
  decision: Exclude<PolicyVerdict, { kind: 'none' }>;
}

/** The variables of a condition and their types. */
const VARIABLES: ReadonlyMap<string, StaticType> = new Map<string, StaticType>([
  ['tool', STRING],
  ['server', STRING],
  ['node', STRING],
  ['args', { kind: 'map', key: STRING, value: DYN }],
  ['conversation', { kind: 'record', name: 'conversation', fields: { id: STRING, owner: STRING } }],
  ['requester', { kind: 'record', name: 'requester', fields: { name: STRING, roles: { kind: 'list', element: STRING } } }],
  ['now', TIMESTAMP],
]);

/**
 * The steps of the evaluation under way. Evaluation is synchronous, so one counter serves
 * every call; each evaluation resets it.
 */
const budget = { steps: 0, exceeded: false };

/** Counts one iteration of a comprehension; past the bound, an error ends the comprehension (and the evaluation fails). */
const STEP_FUNCTION = 'asg_policy_step';
const stepFunction = celFunc(STEP_FUNCTION, [CelScalar.DYN], CelScalar.DYN, (condition) => {
  budget.steps += 1;
  if (budget.steps > POLICY_BOUNDS.steps) {
    budget.exceeded = true;
    throw new Error(`stopped after ${POLICY_BOUNDS.steps} comprehension steps`);
  }
  return condition;
});

/** The environment a condition is checked in (the standard functions and the strings extension)… */
const CHECK_ENV: CelEnv = celEnv({ funcs: [...strings] });
/** …and the one it runs in: the same, with the step counter the compiler weaves into every comprehension. */
const RUN_ENV: CelEnv = celEnv({ funcs: [...strings, stepFunction] });

/** A compiled condition, or what is wrong with it and where (a character offset into the expression). */
export function compileCondition(text: string): { condition: Condition } | { problem: string; offset: number } {
  if (text.length > POLICY_BOUNDS.expressionLength)
    return { problem: `the expression is ${text.length} characters long; at most ${POLICY_BOUNDS.expressionLength}`, offset: 0 };
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(text);
  } catch (error) {
    return parseProblem(text, error instanceof Error ? error.message : String(error));
  }
  const positions = Object.fromEntries(Object.entries(parsed.sourceInfo?.positions ?? {}).map(([id, at]) => [id, Number(at)]));
  const size = measure(parsed.expr);
  if (size.nodes > POLICY_BOUNDS.expressionNodes)
    return { problem: `the expression has ${size.nodes} nodes; at most ${POLICY_BOUNDS.expressionNodes}`, offset: 0 };
  if (size.depth > POLICY_BOUNDS.comprehensionDepth)
    return {
      problem: `comprehensions (all, exists, map, filter) are nested ${size.depth} deep; at most ${POLICY_BOUNDS.comprehensionDepth}`,
      offset: 0,
    };
  let type: StaticType;
  try {
    type = typeOf(parsed.expr, CHECK_ENV, VARIABLES, positions);
  } catch (error) {
    if (error instanceof CelTypeError) return { problem: error.message, offset: skipSpaces(text, error.offset) };
    throw error;
  }
  if (type.kind !== 'dyn' && describeType(type) !== describeType(BOOL))
    return { problem: `a condition must be a bool; this expression is a ${describeType(type)}`, offset: 0 };
  countSteps(parsed.expr, { next: size.maxId + 1n });
  return { condition: plan(RUN_ENV, parsed) as Condition };
}

/** An operator's position is the space before it: the problem is shown at the operator. */
function skipSpaces(text: string, offset: number): number {
  let at = offset;
  while (at < text.length - 1 && /\s/.test(text[at]!)) at += 1;
  return at;
}

/** A parse error's `<input>:line:column: message` as a message and an offset into the text. */
function parseProblem(text: string, message: string): { problem: string; offset: number } {
  const where = /^<input>:(\d+):(\d+): /.exec(message);
  if (!where) return { problem: message, offset: 0 };
  const lines = text.split('\n');
  const line = Math.min(Number(where[1]), lines.length);
  const before = lines.slice(0, line - 1).reduce((sum, each) => sum + each.length + 1, 0);
  return { problem: `syntax error: ${message.slice(where[0].length)}`, offset: Math.min(text.length, before + Number(where[2]) - 1) };
}

/** The tree's node count, its deepest nesting of comprehensions and its largest id. */
function measure(expr: Expr): { nodes: number; depth: number; maxId: bigint } {
  let nodes = 0;
  let deepest = 0;
  let maxId = 0n;
  const visit = (node: Expr, depth: number): void => {
    nodes += 1;
    if (node.id > maxId) maxId = node.id;
    if (node.exprKind.case === 'comprehensionExpr') deepest = Math.max(deepest, depth + 1);
    eachChild(node, (child, inLoop) => visit(child, inLoop ? depth + 1 : depth));
  };
  visit(expr, 0);
  return { nodes, depth: deepest, maxId };
}

/**
 * Calls `visit` with each direct child of `expr`; `inLoop` is true for a comprehension's loop
 * condition and step, which run once per iteration.
 */
function eachChild(expr: Expr, visit: (child: Expr, inLoop: boolean) => void): void {
  const each = (child: Expr | undefined, inLoop = false) => {
    if (child) visit(child, inLoop);
  };
  const kind = expr.exprKind;
  switch (kind.case) {
    case 'selectExpr':
      each(kind.value.operand);
      return;
    case 'callExpr':
      each(kind.value.target);
      for (const arg of kind.value.args) each(arg);
      return;
    case 'listExpr':
      for (const element of kind.value.elements) each(element);
      return;
    case 'structExpr':
      for (const entry of kind.value.entries) {
        if (entry.keyKind.case === 'mapKey') each(entry.keyKind.value);
        each(entry.value);
      }
      return;
    case 'comprehensionExpr': {
      const { iterRange, accuInit, loopCondition, loopStep, result } = kind.value;
      each(iterRange);
      each(accuInit);
      each(loopCondition, true);
      each(loopStep, true);
      each(result);
      return;
    }
    default:
      return;
  }
}

/** Wraps every comprehension's loop condition in the step counter, so that each iteration counts against the bound. */
function countSteps(expr: Expr | undefined, ids: { next: bigint }): void {
  if (!expr) return;
  eachChild(expr, (child) => countSteps(child, ids));
  const kind = expr.exprKind;
  if (kind.case !== 'comprehensionExpr') return;
  const comprehension = kind.value;
  const condition = comprehension.loopCondition;
  if (!condition) return;
  // A call node built like the parser's own: the step function over the original condition.
  const wrapper = parse(`${STEP_FUNCTION}(true)`).expr;
  if (wrapper.exprKind.case !== 'callExpr') return;
  wrapper.id = ids.next++;
  wrapper.exprKind.value.args = [condition];
  comprehension.loopCondition = wrapper;
}

/** A JSON value as CEL sees it: whole numbers as int, other numbers as double, objects as maps. */
function celValue(value: unknown): unknown {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map(celValue);
  if (value !== null && typeof value === 'object')
    return new Map(Object.entries(value as Record<string, unknown>).map(([key, each]) => [key, celValue(each)]));
  return value;
}

/** The condition's value for the call, or why it has none. */
export function evaluateCondition(condition: Condition, call: PolicyCall, context: PolicyContext): { value: boolean } | { error: string } {
  const json = JSON.stringify(call.args);
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > POLICY_BOUNDS.argumentBytes)
    return { error: `the arguments are ${bytes} bytes of JSON; conditions judge at most ${POLICY_BOUNDS.argumentBytes}` };
  budget.steps = 0;
  budget.exceeded = false;
  let result: unknown;
  try {
    result = condition({
      tool: call.tool,
      server: call.server,
      node: call.node,
      args: celValue(call.args),
      conversation: new Map([
        ['id', context.conversation.id],
        ['owner', context.conversation.owner],
      ]),
      requester: new Map<string, unknown>([
        ['name', context.requester.name],
        ['roles', [...context.requester.roles]],
      ]),
      now: timestampFromMs(context.now),
    });
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
  // Past the bound the condition is stopped, even where CEL's logic would have absorbed the error (`… || true`).
  if (budget.exceeded) return { error: `the evaluation was stopped after ${POLICY_BOUNDS.steps} comprehension steps` };
  if (isCelError(result)) return { error: result.message };
  if (typeof result !== 'boolean') return { error: `the condition gave ${describeValue(result)}, not a bool` };
  return { value: result };
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'bigint') return `the int ${value}`;
  if (typeof value === 'string') return `the string ${JSON.stringify(value.slice(0, 40))}`;
  if (typeof value === 'number') return `the double ${value}`;
  return 'a value of another type';
}

/** The compiled rules of `approvals.policies`, in file order. */
export class ApprovalPolicies {
  private constructor(private readonly rules: readonly CompiledRule[]) {}

  /** The rules of a configuration that passed `asg config check`; anything else is a PolicyConfigError. */
  static compile(rules: readonly ApprovalPolicyRule[]): ApprovalPolicies {
    const compiled: CompiledRule[] = [];
    for (const [index, rule] of rules.entries()) {
      let when: Condition | undefined;
      if (rule.when !== undefined) {
        const result = compileCondition(rule.when);
        if ('problem' in result) throw new PolicyConfigError(`approvals.policies[${index}] (rule "${rule.name}"): when: ${result.problem}`);
        when = result.condition;
      }
      compiled.push({ name: rule.name, tools: rule.tools.map(wildcardPattern), ...(when && { when }), decision: decisionOf(rule) });
    }
    return new ApprovalPolicies(compiled);
  }

  get size(): number {
    return this.rules.length;
  }

  /** Whether some rule approves calls: they then run at once, recorded only with their step (takeover-plan.ts). */
  get approvesCalls(): boolean {
    return this.rules.some((rule) => rule.decision.kind === 'approve');
  }

  /** The first matching rule's decision; a condition that cannot be evaluated stops for a human. */
  decide(call: PolicyCall, context: PolicyContext): PolicyVerdict {
    for (const rule of this.rules) {
      if (!rule.tools.some((pattern) => pattern.test(call.tool))) continue;
      if (!rule.when) return rule.decision;
      const outcome = evaluateCondition(rule.when, call, context);
      if ('error' in outcome) return { kind: 'require', rule: rule.name, require: NO_QUORUM, error: outcome.error };
      if (outcome.value) return rule.decision;
    }
    return NONE;
  }
}

const NONE: PolicyVerdict = { kind: 'none' };
const NO_QUORUM: RequiredApprovals = { approvals: 1, notRequester: false };

function decisionOf(rule: ApprovalPolicyRule): Exclude<PolicyVerdict, { kind: 'none' }> {
  if (rule.decide === 'approve') return { kind: 'approve', rule: rule.name };
  if (rule.decide === 'reject') return { kind: 'reject', rule: rule.name, ...(rule.reason !== undefined && { reason: rule.reason }) };
  const require = rule.require ?? { approvals: 1, not_requester: false };
  return {
    kind: 'require',
    rule: rule.name,
    require: {
      approvals: require.approvals,
      ...(require.role !== undefined && { role: require.role }),
      notRequester: require.not_requester,
      ...(rule.escalate && { escalate: { afterMs: rule.escalate.after, toRole: rule.escalate.to_role } }),
    },
  };
}

/**
 * What `asg config check` (and every start) says of the policies: each condition compiled and
 * type-checked, and a quorum without `auth` (nobody could be told apart). Warnings: none yet.
 */
export function policyProblems(config: Pick<AgentConfig, 'approvals' | 'auth'>): { errors: PolicyProblem[]; warnings: PolicyProblem[] } {
  const errors: PolicyProblem[] = [];
  const warnings: PolicyProblem[] = [];
  for (const [index, rule] of config.approvals.policies.entries()) {
    const at = ['approvals', 'policies', index];
    if (rule.when !== undefined) {
      const result = compileCondition(rule.when);
      if ('problem' in result) errors.push({ path: [...at, 'when'], message: result.problem, offset: result.offset });
    }
    const require = rule.require;
    if (require && require.approvals > 1 && !config.auth)
      errors.push({
        path: [...at, 'require', 'approvals'],
        message: `${require.approvals} approvals need \`auth\`: without it every approver is "anonymous", and nobody can be told apart`,
      });
  }
  return { errors, warnings };
}
