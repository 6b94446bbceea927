import { wildcardPattern } from '../common/wildcard.js';

/**
 * Which tool calls stop for a human: the annotations a server advertises (`readOnlyHint: true`
 * is safe; otherwise `destructiveHint !== false` is destructive, so no annotations is destructive),
 * unless its config says otherwise. Pure: names, hints and config in, a decision out.
 */

/** The two MCP annotations the policy reads; both are optional on the wire. */
export interface DestructiveHints {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
}

/**
 * MCP spec: `readOnlyHint` defaults to false and `destructiveHint` to true, and the latter
 * means something only when the tool is not read-only. So a read-only tool is safe, and any
 * other tool is destructive unless it says `destructiveHint: false` — no annotations at all
 * means destructive.
 */
export function isDestructive(hints: DestructiveHints | undefined): boolean {
  if (hints?.readOnlyHint === true) return false;
  return hints?.destructiveHint !== false;
}

/** `mcp_servers[].approval` values: `always` (needs an approval), `never` (does not), `auto` (as the annotations say). */
type ApprovalRule = 'always' | 'never' | 'auto';

/** The part of one `mcp_servers[]` entry the policy reads. */
export interface ServerPolicyConfig {
  /** false: the server's annotations are not believed, and its tools need an approval unless a rule says `never`. */
  trust_annotations: boolean;
  /** Tool-name pattern (`*`, `?` wildcards) → rule; the first matching pattern in config order applies. */
  approval: Readonly<Record<string, ApprovalRule>>;
}

interface PolicyDecision {
  /** The effective policy: true when a call needs a human approval. */
  destructive: boolean;
  /** Why, for logs: `rule "write_*": always`, `annotations`, or `trust_annotations: false`. */
  source: string;
}

/** Decides tool by tool for one server. Patterns are compiled once. */
export type ToolPolicy = (toolName: string, hints: DestructiveHints | undefined) => PolicyDecision;

/**
 * Effective destructive for one server's tools: a matching `approval` rule `always` → true,
 * `never` → false; `auto` or no rule → the annotations when the server's
 * annotations are trusted, else true. A server that lies (`readOnlyHint: true` on a tool that
 * writes) is caught by `approval: {that_tool: always}` or `trust_annotations: false`.
 *
 * Config order is the object's key order, which YAML and JSON parsing keep — except that
 * JavaScript lists integer-like keys ("42") first; a tool pattern is hardly ever one.
 */
export function toolPolicy(config: ServerPolicyConfig): ToolPolicy {
  const rules = Object.entries(config.approval).map(([pattern, rule]) => ({ pattern, rule, match: wildcardPattern(pattern) }));
  return (toolName, hints) => {
    const rule = rules.find((candidate) => candidate.match.test(toolName));
    if (rule?.rule === 'always') return { destructive: true, source: `rule ${JSON.stringify(rule.pattern)}: always` };
    if (rule?.rule === 'never') return { destructive: false, source: `rule ${JSON.stringify(rule.pattern)}: never` };
    if (!config.trust_annotations) return { destructive: true, source: 'trust_annotations: false' };
    return { destructive: isDestructive(hints), source: 'annotations' };
  };
}
