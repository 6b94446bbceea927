import type { RemoteApproval } from '../../../gen/ts/asg/a2a/v1/a2a.js';
import type { ToolCallPart, ToolDefinition } from '../../../gen/ts/asg/llm/v1/llm.js';
import type {
  ApprovalRejection,
  Conversation,
  RunJournalEntry,
  Message,
  NewApproval,
  NewMessage,
  PendingApproval,
  TokenUsage,
} from '../../../gen/ts/asg/store/v1/store.js';
import type { Tool } from '../../../gen/ts/asg/tools/v1/tools.js';
import type { CompactionPlan, CompactionStrategy } from '../domain/compaction.js';
import type { HistoryEntry } from '../domain/history.js';
import type { InputRequest } from '../domain/elicitation.js';
import type { ApprovalPolicies, Requester } from '../domain/approval-policy.js';
import type { PlannedCall } from '../domain/plan.js';
import type { AgentNode } from '../domain/tree.js';
import type { JournalStep } from '../../common/run-steps.js';
import type { BranchOutput, PendingCall, StoredRun, WalkEntry } from './state.js';

/**
 * The run machine's vocabulary (machine.ts): its state, the events fed to it and the
 * effects it asks for. Everything here is plain data, so a state can be serialized, compared
 * and replayed; the driver (driver.ts) is the only place where effects meet the world.
 */

/** Child indexes from the root of the agent tree; [] is the root (simple mode's one node). */
export type Path = readonly number[];

/** A delegation that waits at the A2A peer for the peer's own approval. */
interface RemoteWait {
  /** The peer's name as configured. */
  agent: string;
  taskId: string;
  approval: RemoteApproval | undefined;
  /** The peer's status text ("Approval required (id: …): …"). */
  text: string;
}

/** What a tool call (or a delegation, or an approved call) came back with. */
export interface ToolOutcome {
  text: string;
  isError: boolean;
  /** An A2A peer answered input-required: the call waits for the peer's approval (a proxy approval here). */
  remote?: RemoteWait;
  /** An MCP server asked for input before it could finish: the call waits for a human's answer. */
  input?: InputRequest;
  /** The MCP server that ran the call, as the broker says (the journal names it). */
  server?: string;
}

/** A call that stops for approval: a destructive one, or a delegation the peer holds for its own approval (`proxy`). */
export type GatedCall = Extract<PlannedCall, { kind: 'gate' }> & { proxy?: RemoteWait; input?: InputRequest };

/** The model's answer, with secrets already redacted by the driver. */
export interface ModelReply {
  text: string;
  toolCalls: ToolCallPart[];
  usage?: TokenUsage;
  /** The provider's finish reason, normalised by the llm-gateway (stop, tool-calls, length, …). */
  finishReason?: string;
}

/** The static configuration the machine walks: pure data, the same for every event of a run. */
export interface MachineEnv {
  /** The configured agent tree; undefined when the agent is a single llm node (simple mode). */
  root: AgentNode | undefined;
  /** Simple mode's model and its A2A agents as tools. */
  simple: { model: string; a2aTools: Tool[] /** The agent's name: simple mode's node in the run's journal. */; node?: string };
  /** llm.model, for tree nodes without their own. */
  defaultModel: string;
  /** chat.max_llm_iterations: model calls per activation of one llm node. */
  maxModelCalls: number;
  /** How simple mode fits the conversation to the model: its prompt when the conversation stored none, the token budget and the compaction strategy. */
  history: {
    /** The top-level prompt, or a lone llm node's own. */
    systemPrompt: string;
    /** chat.max_tokens; 0: the model's context window. */
    maxTokens: number;
    /** chat.compaction_strategy. */
    compactionStrategy: CompactionStrategy;
  };
  /**
   * Tools the configuration brings beside the catalogue (every A2A agent as a tool, each a2a
   * node's delegation), which the catalogue does not list: arguments a human edited are checked
   * against their schema too. Later entries win over the catalogue's of the same name.
   */
  configuredTools?: Tool[];
  /** approvals.policies, compiled: the first matching rule decides a planned call before the annotations do. */
  policies?: ApprovalPolicies;
}

/**
 * What the world tells the machine for its policies (domain/approval-policy.ts), with the
 * events after which calls are planned: the time (the machine has no clock) and the
 * conversation with its owner.
 */
export interface CallFacts {
  /** Milliseconds since the epoch. */
  now: number;
  conversation: { id: string; owner: string };
}

/** How a node ended. */
export type NodeOutcome = { kind: 'done'; output: string; exitLoop: boolean } | { kind: 'paused' };

/** One model step whose tool calls are being worked through, in the model's order. */
interface StepState {
  plan: PlannedCall[];
  /** The next planned call to handle. */
  index: number;
  /** The step's messages so far: the model's text, its calls, their results. */
  recorded: NewMessage[];
  /** A delegation of this step that the peer holds for its own approval. */
  waiting?: GatedCall;
  exitLoop: boolean;
  text: string;
  /** A destructive call ran without approval in this step: the steps are written at once. */
  unapproved: boolean;
  /** When the call being run was asked for (the journal's timing). */
  askedAt?: number;
}

export interface LlmFrame {
  kind: 'llm';
  /** The agent-tree node's name, which tags its messages (absent in simple mode). */
  node?: string;
  model: string;
  timeoutMs?: number;
  systemPrompt: string;
  gates: boolean;
  canExit: boolean;
  tools: Record<string, Tool>;
  /** What the model sees: its input and the steps so far. */
  history: HistoryEntry[];
  /** Steps of this activation not yet written. */
  steps: NewMessage[];
  /** The node's steps in this run written apart from `steps`: before this activation (a resumed node's earlier steps), or appended early in it (unapproved steps). */
  earlier: number;
  /** Model calls in this activation of the node. */
  calls: number;
  /** When the model call on its way was asked for (the journal's timing). */
  askedAt?: number;
  awaiting: 'history' | 'compaction' | 'model' | 'tools';
  step?: StepState;
  /** Simple mode's conversation being compacted before the model sees it. */
  compaction?: PendingCompaction;
  /** Simple mode: the seq of the conversation's last message as loaded (the journal's places of steps count on from it). */
  baseSeq?: number;
}

/** A compaction of simple mode's conversation under way: its plan, then its summary (or none), then its notice being recorded. */
export interface PendingCompaction {
  plan: CompactionPlan;
  /** The token budget the conversation outgrew. */
  budget: number;
  /** The system prompt before any summary is added to it. */
  basePrompt: string;
  /** The summary of the compaction before this one, which a new summary replaces. */
  previousSummary: string | undefined;
  /** The conversation as stored. */
  messages: Message[];
  /** When the compaction began (the journal's timing). */
  startedAt?: number;
  /** The notice being recorded, and the summary the model's prompt carries from now on. */
  notice?: NewMessage;
  keptSummary?: string;
}

export type Frame =
  | { kind: 'sequential'; index: number; output: string }
  | { kind: 'loop'; iteration: number; index: number; output: string }
  /** Every branch runs in this activation: their outcomes, null while one still runs. */
  | { kind: 'parallel'; resumed: false; outcomes: (NodeOutcome | null)[] }
  /** Only the branch of a resumed pause runs; the others finished or wait for their own approvals. */
  | { kind: 'parallel'; resumed: true; branch: number; children: number }
  /** An a2a node waiting for its delegation's answer. */
  | { kind: 'a2a'; call: ToolCallPart; args: Record<string, unknown>; callMessage: NewMessage; tool: Tool; askedAt?: number }
  /** A resumed a2a node waiting for its history (the approved delegation's result is its output). */
  | { kind: 'a2aResumed' }
  | LlmFrame;

/** What one activation changed since the stored run it started from (or last wrote). */
interface RunChanges {
  /** The approval whose pause this activation resumed; its pause goes. */
  resumed?: string;
  /** Pauses reached, one per new approval. */
  pauses: PendingCall[];
  /** Outputs of branches finished while a sibling waits. */
  outputs: Record<string, BranchOutput>;
  /** Session state keys set (output_key values). */
  session: Record<string, string>;
}

/** An approval this activation pauses for, with the steps that led to it; written with the pause. */
interface Gate {
  approval: NewApproval;
  messages: NewMessage[];
}

/**
 * A node's finish as a checkpoint (walk.ts): its messages and output, with where the walk
 * stands, in one compare-and-set write of the run; the next node starts once it is stored.
 */
export interface CheckpointState {
  /** Messages of nodes that finished since the last checkpoint, not yet on their way. */
  queued: NewMessage[];
  /** A finish is queued (a node may finish with no message). */
  due: boolean;
  /** The checkpoint on its way: what it writes, so that it is redone the same after a lost race, and the model calls it counts. */
  sending?: { messages: NewMessage[]; run: StoredRun; modelCalls: number; attempts: number; steps?: JournalStep[] };
  /** Work asked for while a checkpoint is on its way: it starts once the checkpoint is stored. */
  held: Effect[];
}

/** A write of the run in flight; redone on the newer state when another request wrote first, with the journal's steps it carries. */
type PendingWrite = {
  steps?: JournalStep[];
  /** Messages of finished nodes that no checkpoint carried: this write stores them first. */
  nodeMessages?: NewMessage[];
} & (
  | { purpose: 'pause'; attempts: number }
  /** The run ends; with keepWaiting (a stop while other approvals of it wait) its waiting pauses stay stored. */
  | { purpose: 'finish'; attempts: number; messages: NewMessage[]; response: string; keepWaiting?: boolean }
  /** A resumed branch of the parallel node at `path` finished. */
  | { purpose: 'settle'; attempts: number; path: number[]; children: number; joined?: BranchOutput[] }
);

/**
 * Who decided an approval and how: the identity (a token's name, a JWT's subject,
 * "anonymous", "timeout"), the face (rest, web, a2a, mcp, cli, timeout), the arguments a human
 * edited before approving (already checked against the tool's schema), and whether the
 * decision is an expiry that rejects.
 */
export interface DecisionFacts {
  decidedBy?: string;
  via?: string;
  editedArgs?: Record<string, unknown>;
  expired?: boolean;
  /**
   * This decision's own id, stored with its claim when the claim wins: two decisions by the same
   * person through the same face are told apart by it when a claim's outcome was not heard.
   */
  decisionId?: string;
}

/** A decision on an approval being carried out. */
interface Decision extends DecisionFacts {
  uuid: string;
  approved: boolean;
  reason?: string;
  approval: PendingApproval;
  pause?: PendingCall;
  /** The node names of the pauses, by approval, for tagging messages (agent trees). */
  nodes: Record<string, string>;
  /** The run's other waiting approvals, which a rejection in an agent tree cancels with it. */
  others: PendingApproval[];
  /** The claim of this decision won: from here on the decision stands, whatever happens. */
  claimed: boolean;
  /** Claims refused because the run changed under them (claimConflict). */
  conflicts: number;
  /** Its claim was asked and has not come back: until it does, the decision may or may not be stored. */
  inClaim?: boolean;
  /** When the approved call was asked to run (the journal's timing). */
  askedAt?: number;
}

/**
 * Where an activation stands, named after what it waits for. Each phase has the events that
 * answer it (machine.ts, EVENTS_OF_PHASE); any other event is out of phase and is refused with
 * an `outOfPhase` effect, never dropped silently.
 */
export type RunPhase =
  /** Nothing asked yet: a user message, a decision or a takeover begins the activation. */
  | 'starting'
  /** The tool catalogue is being read. */
  | 'loading_tools'
  /** Nodes of the tree load their history, call the model and call tools (several at once in parallel branches). */
  | 'walking_tree'
  /** Simple mode's conversation outgrew the token budget: its summary is asked for, or its compaction recorded. */
  | 'compacting'
  /** A decision is checked against the stored run and claimed. */
  | 'deciding'
  /** The claimed approval's stored call runs. */
  | 'executing_approved'
  /** A compare-and-set write of the run is on its way. */
  | 'writing'
  /** The activation has answered (or refused); nothing more is asked. */
  | 'finished';

export interface RunState {
  phase: RunPhase;
  runId: string;
  mode: 'simple' | 'tree';
  userMessage: string;
  /** The stored run as last read or written; undefined before a fresh run's first write. */
  base: StoredRun | undefined;
  /** The revision the next write names (store.proto, UpdateRun). */
  revision: number;
  changes: RunChanges;
  modelCalls: number;
  /** A value unique to this activation (from its first event) that fresh ids derive from. */
  activation: string;
  /** How many ids this activation derived. */
  ids: number;
  /** The tools of this activation, by name. */
  tools?: Record<string, Tool>;
  /** The nodes running or waiting in this activation, by path ("" is the root, "0.1" its second child's…). */
  frames: Record<string, Frame>;
  gates: Gate[];
  /** Simple mode: the root's messages, written with the run's last write. */
  final?: NewMessage[];
  write?: PendingWrite;
  decision?: Decision;
  /** Simple mode after a rejection: the answer starts with "Operation cancelled by user." */
  afterRejection: boolean;
  /** A fork's run (userMessage fromHistory): the calls without a result at the end of the loaded conversation are worked through before the model is called. */
  openCalls?: boolean;
  /** Who sent the run's user message (as the gateway authenticated them), for the policies; kept with the stored run. */
  requester?: Requester;
  /** The latest facts of the world for the policies (toolsLoaded, modelAnswered). */
  facts?: CallFacts;
  /** The pause this activation resumes (approval flows). */
  resume?: PendingCall;
  /** Effects asked for whose events have not come back yet. */
  inFlight: number;
  /** A cancel or the deadline came: no new work starts, and once nothing is in flight the run ends with this note. */
  stop?: string;
  /** The activation lost its lease (leaseLost) while the write it waits for was on its way: why. */
  lost?: string;
  /** The journal's steps recorded and not yet handed to a write (journal.ts). */
  journal?: JournalStep[];
  /** When this activation's run began (its user message), ms since the epoch; unknown to a decision's activation. */
  startedAt?: number;
  /** When each running node of the tree began, by path key (the journal's node_finished durations). */
  nodeStarts?: Record<string, number>;
  /** Node finishes being written as checkpoints (tree runs). */
  checkpoint?: CheckpointState;
  /** A taken-over tree run goes on from its checkpoint: the positions of its containers, each used once when the walk enters it. */
  restore?: Record<string, WalkEntry>;
}

export type RunEvent =
  /** A user message begins a run; StartTurn has appended it. */
  | {
      kind: 'userMessage';
      runId: string;
      activation: string;
      text: string;
      requester?: Requester;
      /**
       * A fork: no message was appended; the run goes on from the copied history, as a run
       * resumed from its stored history — calls the model asked for whose results are not in
       * it are worked through first (read-only ones run, destructive ones stop for a new
       * approval), then the model is called.
       */
      fromHistory?: boolean;
    }
  | { kind: 'toolsLoaded'; tools: Tool[]; facts?: CallFacts }
  | { kind: 'toolsFailed'; error: string }
  /** A tree node's history as stored. */
  | { kind: 'historyLoaded'; path: Path; history: HistoryEntry[] }
  /** Simple mode's conversation as stored, with every message (compaction notices included). */
  | { kind: 'conversationLoaded'; path: Path; messages: Message[] }
  /** The model summarized what a compaction hides. */
  | { kind: 'summaryAnswered'; text: string; usage?: TokenUsage }
  | { kind: 'summaryFailed'; error: string }
  /** The compaction's notice is stored: the model may see the compacted conversation now. */
  | { kind: 'compactionRecorded' }
  | { kind: 'modelAnswered'; path: Path; reply: ModelReply; facts?: CallFacts }
  | { kind: 'modelFailed'; path: Path; category: string; error: string }
  | { kind: 'toolFinished'; path: Path; callId: string; outcome: ToolOutcome }
  /** A human (or the approval's expiry) decided an approval of this run (not yet claimed). */
  | ({
      kind: 'approvalDecided';
      activation: string;
      uuid: string;
      approved: boolean;
      reason?: string;
      approval: PendingApproval;
      /** The answer to an MCP server's question, when the approval's pause holds one. */
      input?: Record<string, unknown>;
      /** The decider's roles, as the gateway authenticated them: an approval with a quorum is decided only by its role. */
      deciderRoles?: string[];
    } & DecisionFacts)
  /** The run's waiting approvals as stored, asked for by loadApprovals. */
  | { kind: 'approvalsLoaded'; approvals: PendingApproval[] }
  /** The claim of the decision: won, or another decision was first. */
  /** `approval`: the approval as the claim stored it, when the store returned it (what a won claim carries out). */
  /** `voteRecorded`: nothing was claimed, but the decision was recorded as a vote of the approval's quorum, which is not complete yet. */
  | { kind: 'claimed'; won: boolean; approval?: PendingApproval; voteRecorded?: boolean }
  /** A claim that named the run's revision was refused: the run changed (here is what is stored now); nothing was written. */
  | { kind: 'claimConflict'; latest: StoredRun | undefined; revision: number }
  /** The approved call ran (exactly once, recorded by the driver with its result). */
  | { kind: 'approvedCallFinished'; uuid: string; outcome: ToolOutcome }
  /** The run's write was stored at this revision. */
  | { kind: 'written'; revision: number }
  /** Another request wrote the run first: here is what is stored now (undefined: no run). */
  | { kind: 'writeConflict'; latest: StoredRun | undefined; revision: number }
  /** A node's checkpoint was stored at this revision. */
  | { kind: 'checkpointed'; revision: number }
  /** A checkpoint lost a race to another write of the run: here is what is stored now (undefined: no run); nothing was written. */
  | { kind: 'checkpointConflict'; latest: StoredRun | undefined; revision: number }
  /** The turn's deadline passed. */
  | { kind: 'timerFired' }
  | { kind: 'cancel'; reason: string }
  /**
   * The activation's lease on its turn is gone (another replica took the run over, it could not
   * be renewed for a whole lease_ttl, or this replica hands the run back as it stops): it is no
   * longer this activation's run, which stops at once and asks for nothing more.
   */
  | { kind: 'leaseLost'; reason: string }
  /**
   * This replica took over the run of a replica that died (or handed it back): what the store
   * holds of it. What happens next is the machine's to decide (takeover-plan.ts): a call whose
   * outcome is unknown is asked again, an approved call that never started runs, a decided
   * approval's cut-off continuation goes on, a message's turn runs again — or the turn ends
   * with a note when going on would do something twice.
   */
  | {
      kind: 'takenOver';
      runId: string;
      activation: string;
      /** The conversation's messages and its pending approvals. */
      conversation: Pick<Conversation, 'messages' | 'pendingApprovals'>;
      /** Its approvals that were approved but never finished. */
      unfinished: PendingApproval[];
      /** The how-manieth takeover of this turn this is, and the most allowed (runs.max_takeovers). */
      takeovers: number;
      maxTakeovers: number;
      /** The stored run could not be read: why (the state then holds no run). */
      unreadableRun?: string;
    };

/** How an activation answers. */
export type RunAnswer =
  | { kind: 'answered'; response: string }
  /** Paused for these approvals (created by the write just stored). */
  | { kind: 'paused'; approvals: string[] }
  /** This activation's branch is stored; other branches still wait for their approvals. */
  | { kind: 'waiting' }
  /** The approval was decided by someone else first; nothing ran. */
  | { kind: 'notDecided' }
  /** The decision was a vote of the approval's quorum, recorded; the quorum is not complete, so nothing ran. */
  | { kind: 'voteRecorded' }
  /** A rejection cancelled the agent tree's run. */
  | { kind: 'cancelled' }
  /** The stored run belongs to another run now, or none: this activation is over. */
  | { kind: 'superseded'; reason: string; endTurn: boolean }
  /** The lease was lost before the turn's last write was stored: what the run does next is another activation's (leaseLost). */
  | { kind: 'lost'; reason: string }
  /** A taken-over turn that could not go on without doing something twice ended with this note. */
  | { kind: 'interrupted'; note: string };

export type Effect =
  | { kind: 'loadTools' }
  | { kind: 'loadHistory'; path: Path; node?: string; nodeMessages: number | null }
  | {
      kind: 'callModel';
      path: Path;
      node?: string;
      model: string;
      timeoutMs?: number;
      systemPrompt: string;
      history: HistoryEntry[];
      tools: ToolDefinition[];
    }
  | {
      kind: 'callTool';
      path: Path;
      node?: string;
      call: ToolCallPart;
      args: Record<string, unknown>;
      unapprovedReason: string;
      /** The policy rule that approved the call: its decision is audited before the call runs, and a call it could not audit does not run. */
      policy?: string;
    }
  /** A policy rule rejected a call: the decision goes to the audit (nothing ran, so nothing waits for it). */
  | { kind: 'auditPolicy'; rule: string; call: ToolCallPart; args: Record<string, unknown>; reason?: string }
  /** Asks the model for a summary of the transcript of what a compaction hides (SUMMARY_INSTRUCTIONS). */
  | { kind: 'summarize'; model: string; transcript: string }
  /** Appends a compaction's notice (part of no turn's record), before the model sees the compacted conversation. */
  | { kind: 'recordCompaction'; notice: NewMessage }
  | { kind: 'loadApprovals' }
  /** The atomic claim of a decision; with expectedRunRevision, only while the run is unchanged (a rejection that cancels it). */
  | ({
      kind: 'claim';
      uuid: string;
      approved: boolean;
      reason?: string;
      messages: NewMessage[];
      clearRun: boolean;
      alsoReject: ApprovalRejection[];
      continuesTurn: boolean;
      expectedRunRevision?: number;
      journal?: RunJournalEntry;
    } & DecisionFacts)
  /**
   * Runs the claimed approval's stored call, at most once; with `edited`, with the arguments a
   * human edited (the model is told who). With `notRun`, the call is recorded as executing and
   * finished with this error instead: it does not match the hash it was approved with.
   */
  | {
      kind: 'runApproved';
      uuid: string;
      /** The approval as the decision read it (a claim's answer, when there was one, is newer). */
      approval: PendingApproval;
      node?: string;
      notRun?: string;
      edited?: { args: Record<string, unknown>; by: string };
      input?: { request: InputRequest; responses: Record<string, unknown> };
    }
  /** Ends a taken-over turn with a note in the conversation, fenced by this replica's lease. */
  | { kind: 'endTurnWithNote'; note: string; journal?: RunJournalEntry }
  /**
   * Asks again, one write each in this order, for approved calls whose outcome is unknown: the
   * new approval (outcome_unknown, replacing the interrupted one) and the run with its pause
   * moved to it. The first write ends the turn (the conversation waits); the others follow it.
   */
  | { kind: 'askAgain'; writes: { interrupted: string; approval: NewApproval; run: StoredRun | undefined }[]; expectedRevision: number }
  /** Tells the MCP server whose question a human declined, after the claim: its call goes on with the decline. */
  | { kind: 'declineInput'; approval: PendingApproval; request: InputRequest }
  /** Tells the peer that holds a proxied call that it was rejected here. */
  | { kind: 'forwardRejection'; approval: PendingApproval; reason?: string }
  /**
   * A node's finish: its messages and the run with its checkpoint, one compare-and-set write
   * that does not end the turn (fenced by the lease); answered checkpointed or checkpointConflict.
   */
  | { kind: 'checkpoint'; messages: NewMessage[]; run: StoredRun; expectedRevision: number; journal?: RunJournalEntry }
  /** Messages written at once, in order, before anything the run writes later. */
  | { kind: 'append'; messages: NewMessage[]; journal?: RunJournalEntry }
  /** A compare-and-set write of the run (absent: cleared) with its messages and new approvals. */
  | {
      kind: 'write';
      messages: NewMessage[];
      approvals: NewApproval[];
      run: StoredRun | undefined;
      expectedRevision: number;
      journal?: RunJournalEntry;
    }
  | { kind: 'log'; level: 'info' | 'warn' | 'error'; message: string; fields: Record<string, string | number | boolean | undefined> }
  /** An event that does not fit the run's phase (or names a node, call or decision that does not wait for it): logged and counted, nothing else. */
  | { kind: 'outOfPhase'; phase: RunPhase; event: RunEvent['kind']; detail: string }
  /**
   * The activation stops with an error: INVALID_ARGUMENT (the decision's edited arguments do not fit), FAILED_PRECONDITION
   * (nothing was done: the decision cannot be carried out), UNAVAILABLE (what the decision needs could not be read; nothing
   * was decided) or ABORTED (its writes kept losing races).
   */
  | { kind: 'refuse'; code: 'invalidArgument' | 'failedPrecondition' | 'unavailable' | 'aborted' | 'permissionDenied'; message: string }
  | { kind: 'done'; answer: RunAnswer };
