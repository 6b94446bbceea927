import { createHash } from 'node:crypto';
import { nodeAt, type AgentNode } from '../domain/tree.js';
import type { Effect, MachineEnv, Path, RunAnswer, RunEvent, RunPhase, RunState } from './types.js';

/** What every transition of the run machine (machine.ts) shares: the transition being made, ids, logs, refusals and the end. */

/** A write of the run lost the race this many times in a row: the activation gives up (ABORTED). */
export const MAX_WRITE_ATTEMPTS = 8;

/** One call of `next`: the state being changed (a copy of the one given), the configuration, and the effects asked for so far. */
export interface Transition {
  state: RunState;
  env: MachineEnv;
  effects: Effect[];
  /** When the event came, ms since the epoch, as the driver says (the machine has no clock). */
  at: number;
}

export const noChanges = () => ({ pauses: [], outputs: {}, session: {} });

export const keyOf = (path: Path) => path.join('.');

export const describePath = (path: Path) => (path.length === 0 ? 'the root' : `path ${keyOf(path)}`);

export function outOfPhaseEffect(phase: RunPhase, event: RunEvent['kind'], detail: string): Effect {
  return { kind: 'outOfPhase', phase, event, detail };
}

/** An event of the right phase that names something not waiting for it (another path, call, decision or write): refused, and said so. */
export function outOfPhase(transition: Transition, event: RunEvent['kind'], detail: string): void {
  transition.effects.push(outOfPhaseEffect(transition.state.phase, event, detail));
}

export function treeRoot(transition: Transition): AgentNode {
  if (!transition.env.root) throw new Error('an agent-tree run needs the configured tree');
  return transition.env.root;
}

export function nodeOf(transition: Transition, path: Path): AgentNode {
  const node = nodeAt(treeRoot(transition), path);
  if (!node) throw new Error(`no node at path ${keyOf(path) || '(root)'}`);
  return node;
}

export function log(
  transition: Transition,
  level: 'info' | 'warn' | 'error',
  message: string,
  fields: Record<string, string | number | boolean | undefined>,
): void {
  transition.effects.push({ kind: 'log', level, message, fields });
}

/** A UUID (version 4 layout) derived from the activation and a counter: unique per activation, the same on replay. */
export function freshId(transition: Transition): string {
  const hex = createHash('sha256')
    .update(`${transition.state.activation}:${transition.state.ids++}`)
    .digest('hex');
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** The activation stops with an error and nothing done (or, for `aborted`, nothing it could keep). */
export function refuse(transition: Transition, code: Extract<Effect, { kind: 'refuse' }>['code'], message: string): void {
  transition.state.phase = 'finished';
  transition.effects.push({ kind: 'refuse', code, message });
}

export function end(transition: Transition, answer: RunAnswer): void {
  transition.state.phase = 'finished';
  transition.state.frames = {};
  transition.effects.push({ kind: 'done', answer });
}
