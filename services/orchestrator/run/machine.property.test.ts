/**
 * Exactly-once approvals as a property of the machine:
 * for any interleaving of approvals, rejections, duplicate decisions
 * (concurrent or later), crashes and resumes, every approved call runs at most once and every
 * rejected call never runs. The machine's own rules hold on the way: a stored call changed
 * after it was asked never runs (the argument hash), a rejection with edited arguments is never
 * claimed, an approval with edited arguments runs them, and no event the driver feeds is out of
 * the run's phase.
 *
 * The machine runs against a simulated store (the store.proto contract: an atomic claim
 * pending → approved|rejected exactly once, executing/finished records, the run with a
 * revision compare-and-set, append-only messages) through a tiny synchronous driver. The
 * driver keeps the real one's ordering rule (store effects of one activation run in the order
 * asked, model and tool calls in any order) and fast-check picks which step of which live
 * activation runs next, so concurrent resumes of parallel branches and their write conflicts
 * happen. A crash drops every live activation with its effects in flight; what the store holds
 * is all that is left, and later decisions and messages go on from it — or another replica
 * takes the turn over (the takenOver event, as orchestrator/turns.ts feeds it): a tree run goes
 * on from its last checkpoint, and no node whose finish was stored has its model called again
 * in that turn.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ToolCallPart } from '../../../gen/ts/asg/llm/v1/llm.js';
import {
  ApprovalStatus,
  type Message,
  MessageRole,
  type NewMessage,
  type PendingApproval,
  type Run,
} from '../../../gen/ts/asg/store/v1/store.js';
import type { Tool } from '../../../gen/ts/asg/tools/v1/tools.js';
import { callHash } from '../../common/call-hash.js';
import type { HistoryEntry } from '../domain/history.js';
import type { AgentNode } from '../domain/tree.js';
import { freshRun, next, storedRun } from './machine.js';
import { decodeRun, encodeRun, legacySimpleRun } from './state.js';
import type { Effect, MachineEnv, RunAnswer, RunEvent, RunState } from './types.js';

// ---- the agent --------------------------------------------------------------------------

const nameSchema = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };
const TOOLS: Tool[] = [
  {
    name: 'resources_list',
    description: 'Lists resources',
    inputSchema: { type: 'object', properties: {} },
    destructive: false,
    server: 'resources',
  },
  { name: 'resources_add', description: 'Adds a resource', inputSchema: nameSchema, destructive: true, server: 'resources' },
  { name: 'resources_remove', description: 'Removes a resource', inputSchema: nameSchema, destructive: true, server: 'resources' },
];
const DESTRUCTIVE = new Set(TOOLS.filter((tool) => tool.destructive).map((tool) => tool.name));

/** Two branches that gate (`approvals: required`) and may pause at once, then a node after the join that gates too. */
const TREE: AgentNode = {
  name: 'pipeline',
  type: 'sequential',
  agents: [
    {
      name: 'fanout',
      type: 'parallel',
      approvals: 'required',
      agents: [
        { name: 'alpha', type: 'llm', prompt: 'Alpha', output_key: 'a' },
        { name: 'beta', type: 'llm', prompt: 'Beta', output_key: 'b' },
      ],
    },
    { name: 'closer', type: 'llm', prompt: 'Close {a} {b}' },
  ],
};

type Mode = 'simple' | 'tree';
const envOf = (mode: Mode): MachineEnv => ({
  root: mode === 'tree' ? TREE : undefined,
  simple: { model: 'gemini-sim', a2aTools: [] },
  defaultModel: 'gemini-sim',
  maxModelCalls: 4,
  history: { systemPrompt: '', maxTokens: 0, compactionStrategy: 'delete-old' },
});

/** What the scripted model does on its next call. */
type Move =
  | { kind: 'text' }
  | { kind: 'fail' }
  | { kind: 'safe' }
  | { kind: 'destructive'; n: number }
  /** Two destructive calls in one step: the second is deferred. */
  | { kind: 'two'; n: number }
  /** The last call a human rejected, asked again exactly (answered with the same "no"). */
  | { kind: 'repeat' };

// ---- the simulated store --------------------------------------------------------------

interface StoredApproval {
  approval: PendingApproval;
  /** The user message (run) it was created in. */
  turn: number;
  /** runApproved effects the machine asked for it, and executions of its call. */
  asked: number;
  executions: number;
  /** Its stored call was changed after it was asked (tamper): it must never run. */
  tampered?: boolean;
}

class SimStore {
  messages: NewMessage[] = [];
  approvals: StoredApproval[] = [];
  run: Pick<Run, 'state' | 'schemaVersion'> | undefined;
  revision = 0;
  turn = 0;
  /** A turn holds the conversation (StartTurn, or a claim that continues it) until a write ends it. */
  running = false;
  takeovers = 0;
  /** Nodes of the current turn whose finish (their answer) is stored. */
  finished = new Set<string>();

  /** Appends messages; a node's answer (an assistant text with no call) stored means the node finished. */
  record(messages: readonly NewMessage[]): void {
    this.messages.push(...structuredClone(messages));
    for (const message of messages)
      if (message.node && message.role === MessageRole.MESSAGE_ROLE_ASSISTANT && !message.toolCall) this.finished.add(message.node);
  }

  approval(uuid: string): StoredApproval | undefined {
    return this.approvals.find((stored) => stored.approval.uuid === uuid);
  }

  pending(): PendingApproval[] {
    return this.approvals
      .filter((stored) => stored.approval.status === ApprovalStatus.APPROVAL_STATUS_PENDING)
      .map((stored) => structuredClone(stored.approval));
  }

  latestRun() {
    return this.run && decodeRun(this.run, this.pending()[0]?.uuid);
  }

  setRun(run: Pick<Run, 'state' | 'schemaVersion'> | undefined): void {
    if (run === undefined && this.run === undefined) return;
    this.run = run;
    this.revision += 1;
  }

  decide(stored: StoredApproval, status: ApprovalStatus, messages: readonly NewMessage[]): void {
    stored.approval.status = status;
    this.messages.push(...messages);
  }
}

// ---- the tiny driver --------------------------------------------------------------------

/** Effects that touch the store run one after another, in the order the machine asked (driver.ts IN_ORDER). */
const IN_ORDER = new Set<Effect['kind']>([
  'loadHistory',
  'loadApprovals',
  'claim',
  'runApproved',
  'forwardRejection',
  'append',
  'checkpoint',
  'write',
  'endTurnWithNote',
  'askAgain',
]);

interface Task {
  effect: Effect;
  /** runApproved: the call ran (executing recorded); its outcome is not recorded yet. A crash here leaves it executing. */
  ran?: boolean;
}

interface Live {
  name: string;
  state: RunState;
  tasks: Task[];
  answer?: RunAnswer;
  refused?: string;
}

class Sim {
  readonly store = new SimStore();
  readonly env: MachineEnv;
  live: Live[] = [];
  violations: string[] = [];
  /** What happened, so that a test can tell the scenarios are not vacuous. */
  readonly seen = { conflicts: 0, lostClaims: 0, mostPending: 0, editedRuns: 0, notRun: 0, takeovers: 0, fromCheckpoint: 0 };
  private activations = 0;
  private calls = 0;
  private cursor = 0;

  constructor(
    readonly mode: Mode,
    private readonly moves: readonly Move[],
  ) {
    this.env = envOf(mode);
  }

  /** POST a message: like TurnRunner.startTurn, nothing starts while an approval waits or a turn runs. */
  message(): void {
    if (this.live.length > 0 || this.store.pending().length > 0 || this.store.running) return;
    // Approved calls whose outcome was never recorded were cut off by a crash: interrupted, never re-run.
    for (const stored of this.store.approvals) {
      const status = stored.approval.status;
      if (status === ApprovalStatus.APPROVAL_STATUS_APPROVED || status === ApprovalStatus.APPROVAL_STATUS_EXECUTING) {
        this.store.decide(stored, ApprovalStatus.APPROVAL_STATUS_INTERRUPTED, [
          toolMessage(stored.approval, 'interrupted; not run again', true),
        ]);
      }
    }
    this.store.turn += 1;
    this.store.finished.clear();
    this.store.running = true;
    this.store.takeovers = 0;
    this.store.messages.push({ role: MessageRole.MESSAGE_ROLE_USER, content: `message ${this.store.turn}` });
    // A started turn begins a new run (store.proto StartTurn).
    this.store.setRun(undefined);
    const id = ++this.activations;
    this.start(`message-${id}`, freshRun(this.env.root ? 'tree' : 'simple', this.store.revision), {
      kind: 'userMessage',
      runId: `run-${id}`,
      activation: `activation-${id}`,
      text: `message ${this.store.turn}`,
    });
  }

  /** POST /approvals/:uuid: reads the approval and the run as stored now (TurnRunner.resolveApproval). */
  decide(pick: number, approved: boolean, reason: string | undefined, edited = false): void {
    if (this.store.approvals.length === 0) return;
    const stored = this.store.approvals[pick % this.store.approvals.length]!;
    const approval = structuredClone(stored.approval);
    const run = this.store.run ? decodeRun(this.store.run, approval.uuid) : legacySimpleRun(approval);
    const id = ++this.activations;
    const event: RunEvent = {
      kind: 'approvalDecided',
      activation: `activation-${id}`,
      uuid: approval.uuid,
      approved,
      ...(reason !== undefined && { reason }),
      // Arguments a human edited: with a rejection the machine refuses the decision, with an approval they fit the tools' schema.
      ...(edited && { editedArgs: { name: 'edited by a human' } }),
      approval,
    };
    this.start(`decision-${id}`, storedRun(run, this.store.revision), event);
  }

  indexOf(uuid: string): number {
    return this.store.approvals.findIndex((stored) => stored.approval.uuid === uuid);
  }

  /**
   * The stored call of a waiting approval changes under it (a corrupted row): it no longer
   * matches the hash it was asked with. (After its claim, what runs is the call the claim
   * returned, which the driver runs as it is.)
   */
  tamper(pick: number): void {
    const waiting = this.store.approvals.filter((stored) => stored.approval.status === ApprovalStatus.APPROVAL_STATUS_PENDING);
    if (waiting.length === 0) return;
    const stored = waiting[pick % waiting.length]!;
    stored.approval.toolArgsJson = JSON.stringify({ name: 'changed after it was asked' });
    stored.tampered = true;
  }

  /** The process dies: every activation and everything it had in flight is gone. */
  crash(): void {
    this.live = [];
  }

  /** Another replica takes over the turn a crash left running (TakeOverRuns, then TurnRunner.takeOver). */
  takeOver(): void {
    if (this.live.length > 0 || !this.store.running) return;
    this.seen.takeovers += 1;
    this.store.takeovers += 1;
    const stored = this.store.latestRun();
    const id = ++this.activations;
    const state = stored ? storedRun(stored, this.store.revision) : freshRun(this.env.root ? 'tree' : 'simple', this.store.revision);
    if (stored?.checkpoint && this.store.messages.at(-1)?.role !== MessageRole.MESSAGE_ROLE_USER) this.seen.fromCheckpoint += 1;
    this.start(`takeover-${id}`, state, {
      kind: 'takenOver',
      runId: `run-${id}`,
      activation: `activation-${id}`,
      conversation: { messages: storedMessagesOf(this.store.messages), pendingApprovals: this.store.pending() },
      unfinished: this.store.approvals
        .filter((one) => [ApprovalStatus.APPROVAL_STATUS_APPROVED, ApprovalStatus.APPROVAL_STATUS_EXECUTING].includes(one.approval.status))
        .map((one) => structuredClone(one.approval)),
      takeovers: this.store.takeovers,
      maxTakeovers: 3,
    });
  }

  /** Runs the `pick`-th step that may run now; false when none may. */
  step(pick: number): boolean {
    const ready: [Live, Task][] = [];
    for (const live of this.live) {
      const ordered = live.tasks.find((task) => IN_ORDER.has(task.effect.kind));
      for (const task of live.tasks) if (!IN_ORDER.has(task.effect.kind) || task === ordered) ready.push([live, task]);
    }
    if (ready.length === 0) return false;
    const [live, task] = ready[pick % ready.length]!;
    const event = this.execute(live, task);
    const at = live.tasks.indexOf(task);
    if (at >= 0 && (!task.ran || event)) live.tasks.splice(at, 1);
    if (event) this.feed(live, event);
    this.seen.mostPending = Math.max(this.seen.mostPending, this.store.pending().length);
    // The driver returns once the answer is decided and its store effects are done; what else was in flight is not waited for.
    if ((live.answer || live.refused) && !live.tasks.some((left) => IN_ORDER.has(left.effect.kind)))
      this.live.splice(this.live.indexOf(live), 1);
    return true;
  }

  /** Runs every live activation to its end. */
  drain(): void {
    for (let steps = 0; this.step(0); steps++) {
      if (steps > 5000) throw new Error('the activations did not end');
    }
    for (const live of this.live)
      this.violations.push(`${live.name} stalled: nothing in flight and no answer (inFlight ${live.state.inFlight})`);
    this.live = [];
  }

  private start(name: string, state: RunState, event: RunEvent): void {
    const live: Live = { name, state, tasks: [] };
    this.live.push(live);
    this.feed(live, event);
    // Refused at once (a rejection with edited arguments): the driver returns before asking for anything.
    if ((live.answer || live.refused) && live.tasks.length === 0) this.live.splice(this.live.indexOf(live), 1);
  }

  private feed(live: Live, event: RunEvent): void {
    if (event.kind === 'writeConflict') this.seen.conflicts += 1;
    if (event.kind === 'claimed' && !event.won) this.seen.lostClaims += 1;
    const out = next(live.state, event, this.env);
    live.state = out.state;
    for (const effect of out.effects) {
      if (effect.kind === 'done') live.answer = effect.answer;
      else if (effect.kind === 'refuse') live.refused = effect.message;
      // Every event the driver feeds answers what the run asked for: none is out of its phase.
      else if (effect.kind === 'outOfPhase')
        this.violations.push(`${live.name}: ${event.kind} out of phase ${effect.phase}: ${effect.detail}`);
      else if (effect.kind !== 'log') live.tasks.push({ effect });
    }
  }

  private execute(live: Live, task: Task): RunEvent | undefined {
    const store = this.store;
    const effect = task.effect;
    switch (effect.kind) {
      case 'loadTools':
        return { kind: 'toolsLoaded', tools: TOOLS };
      case 'loadHistory':
        if (effect.node === undefined) return { kind: 'conversationLoaded', path: effect.path, messages: storedMessagesOf(store.messages) };
        return {
          kind: 'historyLoaded',
          path: effect.path,
          history: structuredClone(nodeSteps(store.messages, effect.node, effect.nodeMessages)),
        };
      case 'callModel':
        // A node whose finish is stored is never run again in its turn (a takeover goes on from its checkpoint).
        if (effect.node !== undefined && store.finished.has(effect.node))
          this.violations.push(`${live.name}: the model of ${effect.node} was called again after its finish was stored`);
        return this.model(effect);
      case 'callTool':
        if (DESTRUCTIVE.has(effect.call.name))
          this.violations.push(`${live.name}: destructive ${effect.call.name} ran without an approval where every call gates`);
        return {
          kind: 'toolFinished',
          path: effect.path,
          callId: effect.call.id,
          outcome: { text: `${effect.call.name} ok`, isError: false },
        };
      case 'loadApprovals':
        return { kind: 'approvalsLoaded', approvals: store.pending() };
      case 'claim': {
        if (effect.editedArgs !== undefined && !effect.approved)
          this.violations.push(`${live.name}: a rejection with edited arguments was claimed (approval ${effect.uuid})`);
        const stored = store.approval(effect.uuid);
        if (!stored || stored.approval.status !== ApprovalStatus.APPROVAL_STATUS_PENDING) return { kind: 'claimed', won: false };
        store.decide(
          stored,
          effect.approved ? ApprovalStatus.APPROVAL_STATUS_APPROVED : ApprovalStatus.APPROVAL_STATUS_REJECTED,
          effect.messages,
        );
        if (effect.continuesTurn) store.running = true;
        for (const other of effect.alsoReject) {
          const also = store.approval(other.uuid);
          if (also?.approval.status === ApprovalStatus.APPROVAL_STATUS_PENDING)
            store.decide(also, ApprovalStatus.APPROVAL_STATUS_REJECTED, other.messages);
        }
        if (effect.clearRun) store.setRun(undefined);
        if (effect.clearRun) store.running = false;
        return { kind: 'claimed', won: true, approval: structuredClone(stored.approval) };
      }
      case 'runApproved': {
        const stored = store.approval(effect.uuid)!;
        if (!task.ran) {
          stored.asked += 1;
          // StartApprovalExecution: FAILED_PRECONDITION unless approved; the real driver then fails the activation.
          if (stored.approval.status !== ApprovalStatus.APPROVAL_STATUS_APPROVED) {
            this.violations.push(`${live.name}: asked to run approval ${effect.uuid} in status ${ApprovalStatus[stored.approval.status]}`);
            live.refused = 'startApprovalExecution refused';
            live.tasks = [];
            return undefined;
          }
          stored.approval.status = ApprovalStatus.APPROVAL_STATUS_EXECUTING;
          task.ran = true;
          // A call that does not match its hash is recorded as not run (the machine decided so): nothing executes.
          if (effect.notRun !== undefined) {
            this.seen.notRun += 1;
            return undefined;
          }
          if (callHash(stored.approval.toolName, JSON.parse(stored.approval.toolArgsJson)) !== stored.approval.argsHash)
            this.violations.push(`approval ${effect.uuid}: the stored call changed`);
          if (effect.edited) this.seen.editedRuns += 1;
          stored.executions += 1;
          return undefined;
        }
        if (effect.notRun !== undefined) {
          store.decide(stored, ApprovalStatus.APPROVAL_STATUS_FAILED, [
            { ...toolMessage(stored.approval, effect.notRun, true), ...(effect.node && { node: effect.node }) },
          ]);
          return { kind: 'approvedCallFinished', uuid: effect.uuid, outcome: { text: effect.notRun, isError: true } };
        }
        // FinishApprovalExecution: done, with the result for the node that made the call.
        store.decide(stored, ApprovalStatus.APPROVAL_STATUS_DONE, [
          { ...toolMessage(stored.approval, `${stored.approval.toolName} done`, false), ...(effect.node && { node: effect.node }) },
        ]);
        return { kind: 'approvedCallFinished', uuid: effect.uuid, outcome: { text: `${stored.approval.toolName} done`, isError: false } };
      }
      case 'forwardRejection':
      case 'outOfPhase':
      case 'log':
      case 'refuse':
      case 'done':
        return undefined;
      case 'append':
        store.record(effect.messages);
        return undefined;
      case 'checkpoint':
        if (effect.expectedRevision !== store.revision)
          return { kind: 'checkpointConflict', latest: store.latestRun(), revision: store.revision };
        if (effect.run.pending.length > 0) this.violations.push(`${live.name}: a checkpoint stored a run that waits for approvals`);
        store.record(effect.messages);
        store.setRun(encodeRun(effect.run));
        return { kind: 'checkpointed', revision: store.revision };
      case 'endTurnWithNote':
        store.record([{ role: MessageRole.MESSAGE_ROLE_ASSISTANT, content: effect.note }]);
        store.running = false;
        return undefined;
      case 'askAgain':
        effect.writes.forEach((write) => {
          const old = store.approval(write.interrupted);
          if (old) old.approval.status = ApprovalStatus.APPROVAL_STATUS_INTERRUPTED;
          store.approvals.push({
            approval: {
              ...structuredClone(write.approval),
              conversationId: 'conversation-1',
              createdAt: undefined,
              updatedAt: undefined,
              status: ApprovalStatus.APPROVAL_STATUS_PENDING,
              argsHash: callHash(write.approval.toolName, JSON.parse(write.approval.toolArgsJson)),
              votes: [],
            },
            turn: store.turn,
            asked: 0,
            executions: 0,
          });
          store.setRun(write.run && encodeRun(write.run));
        });
        store.running = false;
        return undefined;
      case 'write': {
        if (effect.expectedRevision !== store.revision)
          return { kind: 'writeConflict', latest: store.latestRun(), revision: store.revision };
        store.record(effect.messages);
        for (const approval of effect.approvals) {
          if (store.approval(approval.uuid)) this.violations.push(`approval ${approval.uuid} created twice`);
          const argsHash = callHash(approval.toolName, JSON.parse(approval.toolArgsJson));
          // In a simple run, a call identical to one a human rejected in it is not put to a human again.
          const again = store.approvals.find(
            (old) =>
              old.turn === store.turn &&
              // A changed row's "no" names the changed call, not the one the model asked for.
              !old.tampered &&
              old.approval.status === ApprovalStatus.APPROVAL_STATUS_REJECTED &&
              old.approval.argsHash === argsHash,
          );
          if (again && this.mode === 'simple')
            this.violations.push(`approval ${approval.uuid} asks again for the call rejected as ${again.approval.uuid}`);
          store.approvals.push({
            approval: {
              ...structuredClone(approval),
              conversationId: 'conversation-1',
              createdAt: undefined,
              updatedAt: undefined,
              status: ApprovalStatus.APPROVAL_STATUS_PENDING,
              argsHash,
              votes: [],
            },
            turn: store.turn,
            asked: 0,
            executions: 0,
          });
        }
        store.setRun(effect.run && encodeRun(effect.run));
        // The run ended (cleared) or paused (waiting): its turn is over (store UpdateRun).
        if (effect.run === undefined || store.pending().length > 0) store.running = false;
        return { kind: 'written', revision: store.revision };
      }
    }
  }

  /** The scripted model: its next move, made concrete for the history it is shown. */
  private model(effect: Extract<Effect, { kind: 'callModel' }>): RunEvent {
    const move = this.moves[this.cursor++] ?? { kind: 'text' };
    if (move.kind === 'fail') return { kind: 'modelFailed', path: effect.path, category: 'internal', error: 'scripted failure' };
    const answer = (text: string, toolCalls: ToolCallPart[]): RunEvent => ({
      kind: 'modelAnswered',
      path: effect.path,
      reply: { text, toolCalls },
    });
    const id = () => `call-${++this.calls}`;
    const resource = (n: number, name = 'resources_add'): ToolCallPart => ({
      id: id(),
      name,
      argumentsJson: JSON.stringify({ name: `r${n}` }),
    });
    switch (move.kind) {
      case 'text':
        return answer(`answer ${this.cursor}`, []);
      case 'safe':
        return answer('', [{ id: id(), name: 'resources_list', argumentsJson: '{}' }]);
      case 'destructive':
        return answer('', [resource(move.n)]);
      case 'two':
        return answer('', [resource(move.n), resource(move.n + 1, 'resources_remove')]);
      case 'repeat': {
        const rejected = effect.history.findLast(
          (message: HistoryEntry) => message.role === MessageRole.MESSAGE_ROLE_TOOL && message.toolCall?.rejected,
        );
        if (!rejected?.toolCall) return answer('', [resource(0)]);
        return answer('', [{ id: id(), name: rejected.toolCall.name, argumentsJson: rejected.toolCall.argumentsJson ?? '{}' }]);
      }
    }
  }
}

/** driver.ts nodeStepsOf: a node's latest `nodeMessages + 1` messages (or, without the count, its messages since the run's user message). */
function nodeSteps(messages: readonly NewMessage[], node: string, nodeMessages: number | null): NewMessage[] {
  if (nodeMessages === null) {
    const lastUser = messages.findLastIndex((message) => message.role === MessageRole.MESSAGE_ROLE_USER);
    return messages.slice(lastUser + 1).filter((message) => message.node === node);
  }
  const own = messages.filter((message) => message.node === node);
  return own.slice(Math.max(0, own.length - nodeMessages - 1));
}

/** Messages as the store returns them, numbered from 1. */
function storedMessagesOf(messages: readonly NewMessage[]): Message[] {
  return messages.map((message, index) => ({ ...structuredClone(message), id: `m-${index + 1}`, seq: index + 1, createdAt: undefined }));
}

function toolMessage(approval: PendingApproval, result: string, isError: boolean): NewMessage {
  return {
    role: MessageRole.MESSAGE_ROLE_TOOL,
    content: result,
    toolCall: { id: approval.toolCallId, name: approval.toolName, argumentsJson: approval.toolArgsJson, result, isError },
  };
}

// ---- the property -----------------------------------------------------------------------

type Command =
  | { kind: 'step'; pick: number }
  /** A decision on any approval of the conversation: a first one, or a duplicate of an earlier one; with arguments a human edited. */
  | { kind: 'decide'; pick: number; approved: boolean; reason?: string; edited?: boolean }
  /** An approval's stored call changes after it was asked. */
  | { kind: 'tamper'; pick: number }
  /** Every waiting approval decided at once (a parallel node's branches resumed concurrently). */
  | { kind: 'decideWaiting'; approved: boolean[] }
  /** The same approval decided twice at once (two humans, or a retried request). */
  | { kind: 'decideTwice'; pick: number; first: boolean; second: boolean }
  | { kind: 'crash' }
  /** Another replica takes over the turn the crash left running. */
  | { kind: 'takeover' }
  | { kind: 'message' };

const moveArb: fc.Arbitrary<Move> = fc.oneof(
  { weight: 2, arbitrary: fc.constant<Move>({ kind: 'text' }) },
  { weight: 1, arbitrary: fc.constant<Move>({ kind: 'fail' }) },
  { weight: 2, arbitrary: fc.constant<Move>({ kind: 'safe' }) },
  { weight: 5, arbitrary: fc.nat(3).map((n): Move => ({ kind: 'destructive', n })) },
  { weight: 1, arbitrary: fc.nat(3).map((n): Move => ({ kind: 'two', n })) },
  { weight: 3, arbitrary: fc.constant<Move>({ kind: 'repeat' }) },
);

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  { weight: 10, arbitrary: fc.nat(30).map((pick): Command => ({ kind: 'step', pick })) },
  {
    weight: 3,
    arbitrary: fc
      .record({
        pick: fc.nat(8),
        approved: fc.boolean(),
        reason: fc.option(fc.constantFrom('no', 'too risky'), { nil: undefined }),
        edited: fc.boolean(),
      })
      .map(
        ({ pick, approved, reason, edited }): Command => ({
          kind: 'decide',
          pick,
          approved,
          ...(reason !== undefined && { reason }),
          edited,
        }),
      ),
  },
  { weight: 1, arbitrary: fc.nat(8).map((pick): Command => ({ kind: 'tamper', pick })) },
  {
    weight: 5,
    arbitrary: fc.array(fc.boolean(), { minLength: 2, maxLength: 2 }).map((approved): Command => ({ kind: 'decideWaiting', approved })),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({ pick: fc.nat(8), first: fc.boolean(), second: fc.boolean() })
      .map((fields): Command => ({ kind: 'decideTwice', ...fields })),
  },
  { weight: 2, arbitrary: fc.constant<Command>({ kind: 'crash' }) },
  { weight: 2, arbitrary: fc.constant<Command>({ kind: 'takeover' }) },
  { weight: 1, arbitrary: fc.constant<Command>({ kind: 'message' }) },
);

/** Every approved call ran at most once and every rejected call never, over the store as it is now. */
function checkCalls(sim: Sim): void {
  expect(sim.violations.join('\n')).toBe('');
  for (const stored of sim.store.approvals) {
    const { uuid, status } = stored.approval;
    expect(stored.executions, `approval ${uuid} ran more than once`).toBeLessThanOrEqual(1);
    expect(stored.asked, `approval ${uuid} was asked to run more than once`).toBeLessThanOrEqual(1);
    if (stored.tampered) expect(stored.executions, `approval ${uuid} ran a stored call that no longer matches its hash`).toBe(0);
    if (status === ApprovalStatus.APPROVAL_STATUS_REJECTED || status === ApprovalStatus.APPROVAL_STATUS_PENDING) {
      expect(stored.executions, `approval ${uuid} (${ApprovalStatus[status]}) ran`).toBe(0);
    }
  }
}

/** One scripted history: a first message, the commands, then everything left is resumed and decided, and a last message. */
function play(mode: Mode, moves: readonly Move[], commands: readonly Command[], check: (sim: Sim) => void = checkCalls): Sim {
  const sim = new Sim(mode, moves);
  // The first message runs to its pause (or answer) at once; later messages run step by step like the rest.
  sim.message();
  sim.drain();
  for (const command of commands) {
    switch (command.kind) {
      case 'step':
        sim.step(command.pick);
        break;
      case 'decide':
        sim.decide(command.pick, command.approved, command.reason, command.edited);
        break;
      case 'tamper':
        sim.tamper(command.pick);
        break;
      case 'decideWaiting':
        sim.store.pending().forEach((waiting, index) => {
          sim.decide(sim.indexOf(waiting.uuid), command.approved[index % command.approved.length]!, undefined);
        });
        break;
      case 'decideTwice':
        sim.decide(command.pick, command.first, undefined);
        sim.decide(command.pick, command.second, 'no');
        break;
      case 'crash':
        sim.crash();
        break;
      case 'takeover':
        sim.takeOver();
        break;
      case 'message':
        sim.message();
        break;
    }
    check(sim);
  }
  // Resume: whatever is still live runs to its end, a turn left running is taken over; then the approvals still waiting are decided in turn.
  sim.drain();
  for (let round = 0; round < 8 && (sim.store.pending().length > 0 || sim.store.running); round++) {
    sim.takeOver();
    sim.drain();
    const waiting = sim.store.pending()[0];
    if (waiting) sim.decide(sim.indexOf(waiting.uuid), round % 2 === 0, undefined);
    sim.drain();
  }
  // A later message: approved calls a crash cut off are recorded as interrupted, never run again.
  sim.message();
  sim.drain();
  check(sim);
  return sim;
}

const scriptArb = fc.tuple(fc.array(moveArb, { maxLength: 14 }), fc.array(commandArb, { minLength: 5, maxLength: 70 }));

describe('every approved call runs at most once, every rejected call never', () => {
  it('simple mode: approve, reject, duplicate decisions, crashes and resumes in any order', () => {
    fc.assert(
      fc.property(scriptArb, ([moves, commands]) => void play('simple', moves, commands)),
      { numRuns: 200 },
    );
  });

  it('an agent tree whose parallel node pauses two branches at once: concurrent resumes and write conflicts', () => {
    fc.assert(
      fc.property(scriptArb, ([moves, commands]) => void play('tree', moves, commands)),
      { numRuns: 200 },
    );
  });

  it('the scenarios are not vacuous: calls run (edited too) and are rejected, duplicate claims lose, writes conflict, two approvals wait at once, a changed stored call is not run, a tree is taken over after a checkpoint', () => {
    const seen = { executed: 0, rejected: 0, lostClaims: 0, conflicts: 0, twoWaiting: 0, editedRuns: 0, notRun: 0, fromCheckpoint: 0 };
    for (const mode of ['simple', 'tree'] as const) {
      for (const [moves, commands] of fc.sample(scriptArb, { numRuns: 60, seed: 13 })) {
        const sim = play(mode, moves, commands, () => {});
        seen.executed += sim.store.approvals.filter((stored) => stored.executions === 1).length;
        seen.rejected += sim.store.approvals.filter((stored) => stored.approval.status === ApprovalStatus.APPROVAL_STATUS_REJECTED).length;
        seen.lostClaims += sim.seen.lostClaims;
        seen.conflicts += sim.seen.conflicts;
        seen.editedRuns += sim.seen.editedRuns;
        seen.notRun += sim.seen.notRun;
        seen.fromCheckpoint += sim.seen.fromCheckpoint;
        if (sim.seen.mostPending >= 2) seen.twoWaiting += 1;
      }
    }
    expect(seen.executed).toBeGreaterThan(0);
    expect(seen.rejected).toBeGreaterThan(0);
    expect(seen.lostClaims).toBeGreaterThan(0);
    expect(seen.conflicts).toBeGreaterThan(0);
    expect(seen.twoWaiting).toBeGreaterThan(0);
    expect(seen.editedRuns).toBeGreaterThan(0);
    expect(seen.notRun).toBeGreaterThan(0);
    // Turns taken over part-way through, after a node's finish was stored.
    expect(seen.fromCheckpoint).toBeGreaterThan(0);
  });
});
