import { modelFailureText, toolsFailureText } from '../../common/turn-failure.js';
import { assistantText } from '../domain/messages.js';
import type { StoredRun } from './state.js';
import type { Effect, Frame, MachineEnv, RunEvent, RunPhase, RunState } from './types.js';
import { type Transition, noChanges, describePath, outOfPhaseEffect, outOfPhase, end } from './transition.js';
import { enter, resumeAt, historyLoaded } from './walk.js';
import { compactionRecorded, conversationLoaded, summaryAnswered, summaryFailed } from './compaction.js';
import { llmFrame, modelAnswered, toolFinished, answerNode } from './model-steps.js';
import {
  approvalDecided,
  checkEdit,
  editUncheckable,
  takenOver,
  claimConflict,
  claim,
  claimed,
  approvedCallFinished,
} from './decisions.js';
import { withChanges, finishRun, emitWrite, written, writeConflict } from './writes.js';
import { attachJournal, modelCallStep } from './journal.js';
import { checkpointConflict, checkpointed, flushCheckpoint, requeue } from './checkpoints.js';

/**
 * The stop-and-go state machine: `next(state, event, env)` → the new state and the effects
 * to run. Pure: no I/O, no clock, no randomness (fresh ids derive from the activation value
 * that the activation's first event brings). The driver runs the effects and feeds their
 * outcomes back as events, one at a time.
 *
 * A run walks the agent tree (simple mode: a tree of one llm node that sees the whole
 * conversation). llm nodes run the model/tool loop; sequential nodes run their children in
 * order; parallel nodes run them all at once; loop nodes repeat until `exit_loop` or
 * `max_iterations`. A destructive call stops its node for approval where the node gates
 * (domain/tree.ts childGates); when nothing runs any more the run pauses: its gates, their
 * steps and the run state are one compare-and-set write. A decision resumes exactly the
 * paused node; a resumed branch of a parallel node that finishes while siblings still wait
 * stores its output and ends its activation, and of two branches finishing at once exactly
 * one joins (the loser's write is redone on the newer state).
 *
 * This file is the dispatch: each event goes to the transition of the run's phase (an event of
 * another phase is refused with an `outOfPhase` effect), then a stop or a lost lease is applied.
 * The transitions live by concern: walk.ts (entering, resuming and completing nodes of the tree),
 * model-steps.ts (model replies and the tool calls of a step), decisions.ts (approvals decided,
 * claimed, carried out; takeovers), writes.ts (the compare-and-set writes of the run), and
 * transition.ts (what every transition shares).
 */

/** The answer of a run stopped by a cancel or by its deadline. */
export const STOPPED_BY_DEADLINE =
  'The turn ran past its deadline (chat.turn_timeout) and was stopped: steps it had not recorded yet were dropped, and none of its calls waits for approval.';

export function stoppedText(reason: string): string {
  return `The run was cancelled (${reason}): steps it had not recorded yet were dropped, and none of its calls waits for approval.`;
}

/** A fresh run for a user message, in a conversation whose run is at `revision`. */
export function freshRun(mode: 'simple' | 'tree', revision: number): RunState {
  return {
    phase: 'starting',
    runId: '',
    mode,
    userMessage: '',
    base: undefined,
    revision,
    changes: noChanges(),
    modelCalls: 0,
    activation: '',
    ids: 0,
    frames: {},
    gates: [],
    afterRejection: false,
    inFlight: 0,
  };
}

/** A stored run, read for a decision on one of its approvals. */
export function storedRun(stored: StoredRun, revision: number): RunState {
  return {
    ...freshRun(stored.mode, revision),
    runId: stored.runId,
    userMessage: stored.userMessage,
    base: stored,
    ...(stored.requester && { requester: stored.requester }),
  };
}

/** `at`: when the event came (ms since the epoch), for the times of the run's journal. */
export function next(state: RunState, event: RunEvent, env: MachineEnv, at = 0): { state: RunState; effects: Effect[] } {
  if (state.phase === 'finished') {
    // A stop or a lost lease after the end has nothing left to stop; any other event is out of phase.
    if (ANY_PHASE.has(event.kind)) return { state, effects: [] };
    return { state, effects: [outOfPhaseEffect(state.phase, event.kind, WAITING_FOR.finished)] };
  }
  const transition: Transition = { state: copyForTransition(state), env, effects: [], at };
  if (fitsPhase(transition.state.phase, event.kind)) {
    // An answer settles one ask, unless its handler refuses it (an unknown node, call or
    // decision): a stray or repeated answer must not make the run believe nothing is in flight
    // while a real ask (a write that may still commit) is out.
    const answer = ANSWERS.has(event.kind) && transition.state.inFlight > 0;
    if (answer) transition.state.inFlight -= 1;
    handle(transition, event);
    if (answer && transition.effects.some((effect) => effect.kind === 'outOfPhase')) transition.state.inFlight += 1;
  } else transition.effects.push(outOfPhaseEffect(transition.state.phase, event.kind, WAITING_FOR[transition.state.phase]));
  flushCheckpoint(transition);
  if (transition.state.stop !== undefined && isRunning(transition.state)) applyStop(transition, transition.state.stop);
  if (transition.state.lost !== undefined && isRunning(transition.state)) applyLoss(transition, transition.state.lost);
  attachJournal(transition);
  const asked = transition.effects.filter((effect) => ASKS.has(effect.kind));
  transition.state.inFlight += asked.length;
  // The phase follows what was asked last: its answer is what the run waits for now.
  // A checkpoint is asked on the way of the walk: it leaves the phase as it is.
  const last = asked.filter((effect) => effect.kind in PHASE_OF_ASK).at(-1);
  if (isRunning(transition.state) && last) transition.state.phase = PHASE_OF_ASK[last.kind as keyof typeof PHASE_OF_ASK];
  return { state: transition.state, effects: transition.effects };
}

const isRunning = (state: RunState) => state.phase !== 'finished';

/** Events that may come in any phase: they stop the run, whatever it waits for. */
const ANY_PHASE = new Set<RunEvent['kind']>(['timerFired', 'cancel', 'leaseLost']);

/** What the run waits for in each phase, as an out-of-phase error says it. */
const WAITING_FOR: Record<RunPhase, string> = {
  starting: 'the run has not started',
  loading_tools: 'the run waits for its tools',
  walking_tree: 'the run waits for its nodes (history, model, tools)',
  compacting: 'the run waits for its compaction',
  deciding: 'the run waits for its decision to be claimed',
  executing_approved: 'the run waits for the approved call',
  writing: 'the run waits for its write',
  finished: 'the activation has already answered',
};

/** The events each phase waits for (besides ANY_PHASE). */
const EVENTS_OF_PHASE: Record<RunPhase, ReadonlySet<RunEvent['kind']>> = {
  starting: new Set(['userMessage', 'approvalDecided', 'takenOver']),
  loading_tools: new Set(['toolsLoaded', 'toolsFailed']),
  walking_tree: new Set([
    'historyLoaded',
    'conversationLoaded',
    'modelAnswered',
    'modelFailed',
    'toolFinished',
    'checkpointed',
    'checkpointConflict',
  ]),
  compacting: new Set(['summaryAnswered', 'summaryFailed', 'compactionRecorded']),
  deciding: new Set(['approvalsLoaded', 'claimed', 'claimConflict']),
  executing_approved: new Set(['approvedCallFinished']),
  writing: new Set(['written', 'writeConflict']),
  finished: new Set(),
};

/** The phase a run is in once it asked for this effect: the answer it waits for. */
const PHASE_OF_ASK = {
  loadTools: 'loading_tools',
  loadHistory: 'walking_tree',
  callModel: 'walking_tree',
  callTool: 'walking_tree',
  summarize: 'compacting',
  recordCompaction: 'compacting',
  loadApprovals: 'deciding',
  claim: 'deciding',
  runApproved: 'executing_approved',
  write: 'writing',
} as const satisfies Partial<Record<Effect['kind'], RunPhase>>;

function fitsPhase(phase: RunPhase, event: RunEvent['kind']): boolean {
  return ANY_PHASE.has(event) || EVENTS_OF_PHASE[phase].has(event);
}

/** Effects whose outcome comes back as an event. */
const ASKS = new Set<Effect['kind']>([...(Object.keys(PHASE_OF_ASK) as Effect['kind'][]), 'checkpoint']);

/** Events that answer one of ASKS. */
const ANSWERS = new Set<RunEvent['kind']>([
  'toolsLoaded',
  'toolsFailed',
  'historyLoaded',
  'conversationLoaded',
  'summaryAnswered',
  'summaryFailed',
  'compactionRecorded',
  'modelAnswered',
  'modelFailed',
  'toolFinished',
  'approvalsLoaded',
  'claimed',
  'claimConflict',
  'approvedCallFinished',
  'written',
  'writeConflict',
  'checkpointed',
  'checkpointConflict',
]);

/** Effects that begin new work, which a stopped run does not start (a won claim's call still runs: it was decided). */
const STARTS_WORK = new Set<Effect['kind']>([
  'loadTools',
  'loadHistory',
  'summarize',
  'recordCompaction',
  'callModel',
  'callTool',
  'loadApprovals',
  'claim',
]);

/**
 * The state `next` may change: every container a transition writes to is copied, while what
 * no transition ever changes in place — messages, tools, the stored run, planned calls — is
 * shared. A whole deep copy per event would cost time in the length of the conversation
 * (simple mode's history), on every step of every turn.
 */
function copyForTransition(state: RunState): RunState {
  const frames: Record<string, Frame> = {};
  for (const [key, frame] of Object.entries(state.frames)) frames[key] = copyFrame(frame);
  return {
    ...state,
    changes: {
      ...state.changes,
      pauses: state.changes.pauses.map((pause) => ({ ...pause, loopIterations: { ...pause.loopIterations } })),
      outputs: { ...state.changes.outputs },
      session: { ...state.changes.session },
    },
    frames,
    gates: [...state.gates],
    ...(state.write && { write: { ...state.write } }),
    ...(state.nodeStarts && { nodeStarts: { ...state.nodeStarts } }),
    ...(state.checkpoint && {
      checkpoint: {
        ...state.checkpoint,
        queued: [...state.checkpoint.queued],
        held: [...state.checkpoint.held],
        ...(state.checkpoint.sending && { sending: { ...state.checkpoint.sending } }),
      },
    }),
    ...(state.restore && { restore: { ...state.restore } }),
    ...(state.decision && { decision: { ...state.decision, nodes: { ...state.decision.nodes }, others: [...state.decision.others] } }),
  };
}

function copyFrame(frame: Frame): Frame {
  switch (frame.kind) {
    case 'llm':
      return {
        ...frame,
        history: [...frame.history],
        steps: [...frame.steps],
        ...(frame.step && { step: { ...frame.step, recorded: [...frame.step.recorded] } }),
      };
    case 'parallel':
      return frame.resumed ? { ...frame } : { ...frame, outcomes: [...frame.outcomes] };
    default:
      return { ...frame };
  }
}

function handle(transition: Transition, event: RunEvent): void {
  switch (event.kind) {
    case 'userMessage':
      transition.state.runId = event.runId;
      transition.state.startedAt = transition.at;
      transition.state.activation = event.activation;
      transition.state.userMessage = event.text;
      if (event.requester) transition.state.requester = event.requester;
      if (event.fromHistory) transition.state.openCalls = true;
      transition.effects.push({ kind: 'loadTools' });
      return;
    case 'toolsLoaded':
      if (transition.state.decision && !transition.state.decision.claimed) {
        checkEdit(transition, event.tools);
        return;
      }
      if (event.facts) transition.state.facts = event.facts;
      transition.state.tools = Object.fromEntries(event.tools.map((tool) => [tool.name, tool]));
      if (transition.state.resume) resumeAt(transition, transition.state.resume);
      else enter(transition, []);
      // A checkpoint's positions are for the walk's first descent only: a container entered later starts afresh.
      delete transition.state.restore;
      return;
    case 'toolsFailed': {
      if (transition.state.decision && !transition.state.decision.claimed) {
        editUncheckable(transition, event.error);
        return;
      }
      const text = toolsFailureText(event.error);
      finishRun(transition, text, [assistantText(text)]);
      return;
    }
    case 'historyLoaded':
      historyLoaded(transition, event.path, event.history);
      return;
    case 'conversationLoaded':
      conversationLoaded(transition, event.path, event.messages);
      return;
    case 'summaryAnswered':
      summaryAnswered(transition, event.text, event.usage);
      return;
    case 'summaryFailed':
      summaryFailed(transition, event.error);
      return;
    case 'compactionRecorded':
      compactionRecorded(transition);
      return;
    case 'modelAnswered':
      if (event.facts) transition.state.facts = event.facts;
      modelAnswered(transition, event.path, event.reply);
      return;
    case 'modelFailed': {
      const frame = llmFrame(transition, event.path, 'model');
      if (!frame) {
        outOfPhase(transition, event.kind, `no node at ${describePath(event.path)} waits for the model`);
        return;
      }
      modelCallStep(transition, event.path, frame.model, frame.askedAt, { error: event.category });
      answerNode(transition, event.path, frame, modelFailureText(event.category, event.error));
      return;
    }
    case 'toolFinished':
      toolFinished(transition, event.path, event.callId, event.outcome);
      return;
    case 'approvalDecided':
      approvalDecided(transition, event);
      return;
    case 'approvalsLoaded':
      if (!transition.state.decision) {
        outOfPhase(transition, event.kind, 'no decision is being claimed');
        return;
      }
      transition.state.decision.others = event.approvals.filter((other) => other.uuid !== transition.state.decision!.uuid);
      claim(transition);
      return;
    case 'claimed':
      claimed(transition, event.won, event.approval, event.voteRecorded === true);
      return;
    case 'claimConflict':
      claimConflict(transition, event.latest, event.revision);
      return;
    case 'approvedCallFinished':
      approvedCallFinished(transition, event.outcome);
      return;
    case 'written':
      written(transition, event.revision);
      return;
    case 'writeConflict':
      writeConflict(transition, event.latest, event.revision);
      return;
    case 'checkpointed':
      checkpointed(transition, event.revision);
      return;
    case 'checkpointConflict':
      checkpointConflict(transition, event.latest, event.revision);
      return;
    case 'timerFired':
      transition.state.stop ??= STOPPED_BY_DEADLINE;
      return;
    case 'cancel':
      transition.state.stop ??= stoppedText(event.reason);
      return;
    case 'leaseLost':
      transition.state.lost ??= event.reason;
      return;
    case 'takenOver':
      takenOver(transition, event);
      return;
  }
}

/**
 * A cancel or the deadline: no new work starts (what is in flight finishes and comes back),
 * and once nothing is in flight the run ends with `text`. What is not written yet is dropped:
 * a call that would have waited for approval is never asked. A decision that was not claimed
 * yet is dropped too (nothing was decided); the other waiting approvals of a run stay.
 */
function applyStop(transition: Transition, text: string): void {
  transition.effects = transition.effects.filter((effect) => !STARTS_WORK.has(effect.kind));
  if (transition.state.write?.purpose === 'pause' && transition.effects.some((effect) => effect.kind === 'write')) {
    // A pause reached after the stop (not one in flight before it): its calls are never asked.
    transition.effects = transition.effects.filter((effect) => effect.kind !== 'write');
    // Finished nodes' messages it carried go with the finish write instead.
    requeue(transition.state, transition.state.write.nodeMessages ?? []);
    transition.state.write = undefined;
  }
  const waitingFor = transition.state.inFlight + transition.effects.filter((effect) => ASKS.has(effect.kind)).length;
  if (transition.state.write || waitingFor > 0) return;
  if (transition.state.decision && !transition.state.decision.claimed) {
    end(transition, { kind: 'answered', response: text });
    return;
  }
  transition.state.gates = [];
  transition.state.changes.pauses = [];
  transition.state.changes.outputs = {};
  const keepWaiting = withChanges(transition.state).pending.length > 0;
  transition.state.frames = {};
  transition.state.write = { purpose: 'finish', attempts: 0, messages: [assistantText(text)], response: text, keepWaiting };
  emitWrite(transition);
}

/**
 * The lease is lost: the run is no longer this activation's, so it asks for nothing more, and
 * ends at once — unless a write or a claim it asked for before is on its way. A write passed
 * the store's fence or it will be refused; when it is stored (written) its answer stands: the
 * turn answered (or paused) before the lease went, and a renewal that reaches the store just
 * after the turn's last write ended it is not a lost run. A claim's answer says whether the
 * decision stands (what it decided is then carried out from what is stored) or nothing was
 * decided. A write or a claim it would ask for now is not asked.
 */
function applyLoss(transition: Transition, reason: string): void {
  const wroteNow = transition.effects.some((effect) => effect.kind === 'write');
  const claimedNow = transition.effects.some((effect) => effect.kind === 'claim');
  transition.effects = transition.effects.filter((effect) => effect.kind === 'log');
  if (wroteNow) transition.state.write = undefined;
  if (claimedNow && transition.state.decision) transition.state.decision.inClaim = false;
  if (transition.state.write || transition.state.decision?.inClaim) return;
  end(transition, { kind: 'lost', reason });
}
