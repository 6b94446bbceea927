import type { Tool } from '../../../gen/ts/asg/tools/v1/tools.js';
import type { PolicyContext, PolicyVerdict } from '../domain/approval-policy.js';
import type { PlanOptions } from '../domain/plan.js';
import { nodeAt } from '../domain/tree.js';
import type { Path } from './types.js';
import { type Transition, log } from './transition.js';

/** The approval policies (domain/approval-policy.ts) as the machine applies them: the call's node and the run's context in, a verdict out, logged. */

/** A run whose requester the gateway did not name (a run stored before policies, or a direct gRPC call) has none: no name, no roles. */
const UNKNOWN_REQUESTER = { name: '', roles: [] };

/** The names of the nodes from the root to `path`, joined by "/" (`pipeline/executor`); empty in simple mode. */
function nodeName(transition: Transition, path: Path): string {
  const root = transition.env.root;
  if (transition.state.mode === 'simple' || !root) return '';
  const names: string[] = [];
  for (let depth = 0; depth <= path.length; depth++) {
    const node = nodeAt(root, path.slice(0, depth));
    if (node) names.push(node.name);
  }
  return names.join('/');
}

function contextOf(transition: Transition): PolicyContext {
  const facts = transition.state.facts;
  return {
    conversation: facts?.conversation ?? { id: '', owner: '' },
    requester: transition.state.requester ?? UNKNOWN_REQUESTER,
    now: facts?.now ?? 0,
  };
}

/** The verdict on the calls of the node at `path`; undefined when no policy is configured. */
export function policyAt(transition: Transition, path: Path): PlanOptions['policy'] {
  const policies = transition.env.policies;
  if (!policies || policies.size === 0) return undefined;
  const node = nodeName(transition, path);
  const context = contextOf(transition);
  return (call, tool: Tool, args) => {
    const verdict = policies.decide({ tool: call.name, server: tool.server, args, node }, context);
    logVerdict(transition, call.name, verdict);
    return verdict;
  };
}

function logVerdict(transition: Transition, tool: string, verdict: PolicyVerdict): void {
  if (verdict.kind === 'none') return;
  if (verdict.kind === 'require' && verdict.error !== undefined) {
    log(transition, 'warn', 'policy condition could not be evaluated; the call waits for a human', {
      rule: verdict.rule,
      tool,
      error: verdict.error,
    });
    return;
  }
  log(transition, 'info', 'policy decided a call', { rule: verdict.rule, tool, decision: verdict.kind });
}
