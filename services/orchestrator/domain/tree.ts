import { createHash } from 'node:crypto';
import type { AgentNodeInput } from '../../common/config/schema.js';

/**
 * The agent tree's pure parts: finding a node by its path, the fingerprint that tells a
 * resume whether the configuration still leads to the paused node, `{placeholder}`
 * resolution, where a sequential node starts on resume, and which nodes gate destructive
 * calls. The walk itself, with its I/O, is in ../pipeline.ts.
 */

export type AgentNode = AgentNodeInput;

/** The default: a loop without `max_iterations` stops after 10 rounds. */
export const DEFAULT_MAX_ITERATIONS = 10;

/** The tool an llm node with `can_exit_loop` gets; the orchestrator answers it, the broker never sees it. */
export const EXIT_LOOP_TOOL = 'exit_loop';

/** The node at `path` (child indexes from the root), or undefined when the path leads nowhere. */
export function nodeAt(root: AgentNode, path: readonly number[]): AgentNode | undefined {
  let node: AgentNode | undefined = root;
  for (const index of path) node = node?.agents?.[index];
  return node;
}

/** The nodes from the root down to the node at `path`, or undefined when the path leads nowhere. */
function nodesOnPath(root: AgentNode, path: readonly number[]): AgentNode[] | undefined {
  const nodes = [root];
  for (const index of path) {
    const child = nodes[nodes.length - 1]!.agents?.[index];
    if (!child) return undefined;
    nodes.push(child);
  }
  return nodes;
}

/**
 * sha256 of the canonical JSON of the nodes on the path, each without its children: it
 * changes when a node on the way is renamed, retyped, reprompted or moved, and stays the
 * same when an unrelated branch is edited. Undefined when the path leads nowhere.
 */
export function treeFingerprint(root: AgentNode, path: readonly number[]): string | undefined {
  const nodes = nodesOnPath(root, path);
  if (!nodes) return undefined;
  const own = nodes.map(({ agents: _children, ...fields }) => fields);
  return createHash('sha256')
    .update(canonicalJson({ path, nodes: own }))
    .digest('hex');
}

/** sha256 of the canonical JSON of the whole tree: a run's checkpoint names the tree its positions are in. */
export function wholeTreeFingerprint(root: AgentNode): string {
  return createHash('sha256').update(canonicalJson(root)).digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * `{key}` → the session state's value; `{user_message}` is the message of the run. A
 * placeholder with no value is left as written and reported, so the caller can log it.
 */
export function resolvePlaceholders(
  template: string,
  state: ReadonlyMap<string, string>,
  userMessage: string,
): { text: string; unknown: string[] } {
  const unknown: string[] = [];
  const text = template.replace(/\{([A-Za-z_][\w.-]*)\}/g, (whole, key: string) => {
    if (key === 'user_message') return userMessage;
    const value = state.get(key);
    if (value !== undefined) return value;
    if (!unknown.includes(key)) unknown.push(key);
    return whole;
  });
  return { text, unknown };
}

/**
 * Where a sequential node at `path` starts in a resumed run: at its child on the way to the
 * paused node, when `path` leads there; undefined (start at the first child) otherwise.
 */
export function resumeIndex(resumePath: readonly number[] | undefined, path: readonly number[]): number | undefined {
  if (!resumePath || resumePath.length <= path.length) return undefined;
  if (!path.every((index, depth) => resumePath[depth] === index)) return undefined;
  return resumePath[path.length];
}

/**
 * Whether destructive calls below `parent` stop for approval. By default (`auto`): only where no
 * parallel or loop node is above; inside them they run at once (logged and marked). A
 * parallel or loop node with `approvals: required` keeps the gate for its subtree; the
 * nearest such node decides, so an `auto` node inside a `required` one turns it off again.
 */
export function childGates(parentGates: boolean, parent: AgentNode): boolean {
  if (parent.type === 'parallel' || parent.type === 'loop') return parent.approvals === 'required';
  return parentGates;
}

/** A parallel node's output: its children's outputs in declaration order. */
export function joinOutputs(outputs: readonly string[]): string {
  return outputs.filter((output) => output !== '').join('\n\n');
}
