import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { checkAgentConfigFile, formatReport } from '../services/common/config/check.js';
import { ROLES } from '../services/common/config/schema.js';
import {
  ApprovalPolicies,
  policyProblems,
  type PolicyCall,
  type PolicyContext,
  type PolicyVerdict,
} from '../services/orchestrator/domain/approval-policy.js';

/**
 * `asg policy test`: what the approval policies of a configuration decide for a call, offline,
 * with the same module the orchestrator decides with (services/orchestrator/domain/approval-policy.ts).
 * One call (`--tool`, `--args`, …) prints the rule that matched and its decision; a file of
 * cases (`--file`) checks each case's expected decision and names every one that differs.
 *
 * Exit codes: 0 the call was judged, or every case matched; 1 a case did not match; 2 bad usage,
 * a configuration that does not pass the check, or a cases file that cannot be read.
 */

export interface PolicyTestOptions {
  config: string;
  tool?: string;
  args?: string;
  server?: string;
  node?: string;
  requester?: string;
  roles?: string;
  owner?: string;
  file?: string;
}

interface Output {
  out: (text: string) => void;
  err: (text: string) => void;
}

const EXPECTATIONS = ['approve', 'reject', 'require', 'none'] as const;

const role = z.enum(ROLES, { error: `one of ${ROLES.join(', ')}` });

/** One case of a cases file. */
const caseSchema = z.strictObject({
  /** Shown in the report; default: the tool and its arguments. */
  name: z.string().min(1).optional(),
  tool: z.string().min(1, 'a tool name'),
  args: z.record(z.string(), z.unknown()).default({}),
  server: z.string().default(''),
  node: z.string().default(''),
  requester: z.string().default(''),
  roles: z.array(role).default([]),
  owner: z.string().default(''),
  expect: z.enum(EXPECTATIONS, { error: `one of ${EXPECTATIONS.join(', ')}` }),
  /** The rule expected to decide (not checked when absent). */
  rule: z.string().min(1).optional(),
});

/** A list of cases, or an object with `cases`. */
const casesSchema = z.union([
  z.array(caseSchema).min(1),
  z.strictObject({ cases: z.array(caseSchema).min(1) }).transform((file) => file.cases),
]);

type PolicyCase = z.infer<typeof caseSchema>;

export function policyTest(options: PolicyTestOptions, io: Output): number {
  if ((options.tool === undefined) === (options.file === undefined)) {
    io.err('asg policy test: give either --tool (one call, with --args …) or --file (a table of cases), not both\n');
    return 2;
  }
  const policies = loadPolicies(options.config, io);
  if (!policies) return 2;
  if (options.file !== undefined) return testCases(options.file, policies, io);
  const call = callFromOptions(options, io);
  if (!call) return 2;
  const verdict = policies.decide(call.call, call.context);
  io.out(`${call.call.tool} ${JSON.stringify(call.call.args)}: ${describeVerdict(verdict)}\n`);
  return 0;
}

/** The compiled policies of a configuration that passes the check; its problems printed otherwise. */
function loadPolicies(file: string, io: Output): ApprovalPolicies | undefined {
  const report = checkAgentConfigFile(file, { checks: [(config) => policyProblems(config)] });
  if (report.errors.length > 0) {
    io.err(`${formatReport(report)}\n`);
    return undefined;
  }
  // Warnings of the rest of the file (a provider key not set) are not this command's business; the policies' are.
  const own = report.warnings.filter((warning) => warning.path?.[0] === 'approvals');
  if (own.length > 0) io.err(`${formatReport({ ...report, warnings: own })}\n`);
  return ApprovalPolicies.compile(report.config!.approvals.policies);
}

function callFromOptions(options: PolicyTestOptions, io: Output): { call: PolicyCall; context: PolicyContext } | undefined {
  let args: unknown;
  try {
    args = JSON.parse(options.args ?? '{}');
  } catch (error) {
    io.err(`asg policy test: --args is not JSON: ${(error as Error).message}\n`);
    return undefined;
  }
  if (args === null || typeof args !== 'object' || Array.isArray(args)) {
    io.err('asg policy test: --args must be a JSON object, e.g. \'{"value": 5}\'\n');
    return undefined;
  }
  const roles = (options.roles ?? '')
    .split(',')
    .map((each) => each.trim())
    .filter(Boolean);
  const unknown = roles.filter((each) => !role.safeParse(each).success);
  if (unknown.length > 0) {
    io.err(`asg policy test: --roles: ${unknown.join(', ')} is not a role (${ROLES.join(', ')})\n`);
    return undefined;
  }
  return judged({
    tool: options.tool!,
    args: args as Record<string, unknown>,
    server: options.server ?? '',
    node: options.node ?? '',
    requester: options.requester ?? '',
    roles,
    owner: options.owner ?? '',
  });
}

function judged(given: Omit<PolicyCase, 'expect' | 'name' | 'rule' | 'roles'> & { roles: string[] }): {
  call: PolicyCall;
  context: PolicyContext;
} {
  return {
    call: { tool: given.tool, server: given.server, args: given.args, node: given.node },
    context: {
      conversation: { id: '', owner: given.owner },
      requester: { name: given.requester, roles: given.roles },
      now: Date.now(),
    },
  };
}

function testCases(file: string, policies: ApprovalPolicies, io: Output): number {
  let cases: PolicyCase[];
  try {
    const parsed = casesSchema.safeParse(parseYaml(readFileSync(file, 'utf8')));
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      io.err(`${file}: ${issue ? `${issue.path.join('.') || '(top level)'}: ${issue.message}` : 'not a list of cases'}\n`);
      return 2;
    }
    cases = parsed.data;
  } catch (error) {
    io.err(`${file}: ${(error as Error).message}\n`);
    return 2;
  }
  const mismatches: string[] = [];
  for (const [index, testCase] of cases.entries()) {
    const { call, context } = judged(testCase);
    const verdict = policies.decide(call, context);
    const label = testCase.name ?? `case ${index + 1} (${testCase.tool} ${JSON.stringify(testCase.args)})`;
    const rule = verdict.kind === 'none' ? undefined : verdict.rule;
    const matches = verdict.kind === testCase.expect && (testCase.rule === undefined || testCase.rule === rule);
    if (matches) {
      io.out(`ok      ${label}: ${describeVerdict(verdict)}\n`);
      continue;
    }
    const expected = testCase.rule === undefined ? testCase.expect : `${testCase.expect} by rule "${testCase.rule}"`;
    mismatches.push(label);
    io.out(`differs ${label}: expected ${expected}, got ${describeVerdict(verdict)}\n`);
  }
  if (mismatches.length === 0) {
    io.out(`${cases.length} case(s), all as expected\n`);
    return 0;
  }
  io.err(`${mismatches.length} of ${cases.length} case(s) differ: ${mismatches.join('; ')}\n`);
  return 1;
}

/** A verdict in words: the decision, the rule, and what happens to the call. */
function describeVerdict(verdict: PolicyVerdict): string {
  switch (verdict.kind) {
    case 'none':
      return 'none (no rule matches: the annotations and mcp_servers[].approval decide)';
    case 'approve':
      return `approve by rule "${verdict.rule}" (runs without a human)`;
    case 'reject':
      return `reject by rule "${verdict.rule}" (not run${verdict.reason === undefined ? '' : `; the model is told: ${verdict.reason}`})`;
    case 'require':
      return verdict.error === undefined
        ? `require by rule "${verdict.rule}" (stops for a human)`
        : `require by rule "${verdict.rule}" (its condition could not be evaluated, so a human decides: ${verdict.error})`;
  }
}
