import {
  ApprovalStatus,
  type ApprovalRejection,
  type NewApproval,
  type NewMessage,
  type PendingApproval,
} from '../../../gen/ts/asg/store/v1/store.js';
import type { Tool } from '../../../gen/ts/asg/tools/v1/tools.js';
import { callHash } from '../../common/call-hash.js';
import { jsonObjectOf } from '../../common/json-value.js';
import { firstSchemaProblem } from '../../common/json-schema.js';
import { describeNodePath } from '../../common/config/tree.js';
import { A2A_SERVER } from '../domain/a2a-tools.js';
import { expiredText, gatedCall, NOT_RETRIED, rejectedResult } from '../domain/messages.js';
import { inputProblem, inputResponses, type InputRequest } from '../domain/elicitation.js';
import { nodeAt, treeFingerprint, wholeTreeFingerprint, type AgentNode } from '../domain/tree.js';
import type { PendingCall, StoredRun } from './state.js';
import type { DecisionFacts, GatedCall, RunEvent, ToolOutcome } from './types.js';
import { MAX_WRITE_ATTEMPTS, type Transition, outOfPhase, log, freshId, refuse, end } from './transition.js';
import { approvalOf } from './walk.js';
import { pauseRun } from './writes.js';
import { restoreFrom } from './checkpoints.js';
import { callStep, nodePath, record, timing } from './journal.js';
import { redactArguments } from '../../common/run-steps.js';
import { redactSecrets } from '../../common/secrets.js';
import { outcomeUnknownText, planTakeover, runsUnapproved, type TakeoverDrive } from '../takeover-plan.js';

/** Decisions on approvals: the rules a decision must meet, its claim, and what a won claim carries out; a run taken over from another replica. */

type DecidedEvent = Extract<RunEvent, { kind: 'approvalDecided' }>;

export function approvalDecided(transition: Transition, decided: DecidedEvent): void {
  transition.state.activation = decided.activation;
  const pause = transition.state.base?.pending.find((candidate) => candidate.approvalUuid === decided.uuid);
  // Checked before anything is claimed: an answer that does not fit leaves the approval pending.
  const answered = decided.approval.status === ApprovalStatus.APPROVAL_STATUS_PENDING ? answeredDecision(decided, pause?.input) : decided;
  const event = typeof answered === 'string' ? decided : answered;
  const approval = event.approval;
  const facts = decisionFacts(event);
  transition.state.decision = {
    uuid: event.uuid,
    approved: event.approved,
    ...(event.reason !== undefined && { reason: event.reason }),
    ...facts,
    approval,
    ...(pause && { pause }),
    nodes: {},
    others: [],
    claimed: false,
    conflicts: 0,
  };
  if (typeof answered === 'string') {
    refuse(transition, 'invalidArgument', answered);
    return;
  }
  if (event.editedArgs !== undefined && !event.approved) {
    refuse(transition, 'invalidArgument', EDIT_WITHOUT_APPROVAL);
    return;
  }
  const refusal = approval.status === ApprovalStatus.APPROVAL_STATUS_PENDING ? voterProblem(approval, event) : undefined;
  if (refusal) {
    refuse(transition, 'permissionDenied', refusal);
    return;
  }
  if (approval.status !== ApprovalStatus.APPROVAL_STATUS_PENDING) {
    // Decided already: the claim loses and says how; nothing else is checked or prepared.
    transition.state.decision.inClaim = true;
    transition.effects.push({
      kind: 'claim',
      uuid: event.uuid,
      approved: event.approved,
      ...(event.reason !== undefined && { reason: event.reason }),
      ...facts,
      messages: [],
      clearRun: false,
      alsoReject: [],
      continuesTurn: false,
    });
    return;
  }
  if (event.editedArgs !== undefined && approval.remoteTaskId) {
    refuse(
      transition,
      'failedPrecondition',
      `approval ${event.uuid} is held by the sub-agent ${approval.remoteAgentName ?? approval.toolName}, which runs its own stored call: its arguments cannot be edited here. Nothing was decided; approve it as it is, or reject it.`,
    );
    return;
  }
  // Edited arguments must fit the tool's input schema, as the model's own had to: the tools are read first.
  // (With a server's question, the "edit" is the human's answer, already checked against what the server asked.)
  if (event.editedArgs !== undefined && !pause?.input) {
    transition.effects.push({ kind: 'loadTools' });
    return;
  }
  prepareClaim(transition);
}

/**
 * Why the decider may not decide an approval with a quorum, or undefined: a quorum counts the
 * votes of principals holding its role by name (admin does not stand in for another role, so
 * that an escalation to admin means something), and, once the approval has escalated, of its
 * escalation's role too. The expiry decides as its policy says, without a role.
 */
function voterProblem(approval: PendingApproval, event: Pick<DecidedEvent, 'deciderRoles' | 'decidedBy' | 'via'>): string | undefined {
  const quorum = approval.quorum;
  if (!quorum || event.via === EXPIRY_VIA) return undefined;
  const roles = event.deciderRoles ?? [];
  const allowed = [quorum.role || 'approve', ...(approval.escalatedAt && approval.escalationRole ? [approval.escalationRole] : [])];
  if (allowed.some((role) => roles.includes(role))) return undefined;
  const who = event.decidedBy ?? 'anonymous';
  const has = roles.length > 0 ? roles.join(', ') : 'none';
  return `approval ${approval.uuid} is decided by principals with the role ${allowed.join(' or ')}; ${who} has ${has}. Nothing was recorded.`;
}

/** Only an approval runs a call, so only an approval can change its arguments. */
const EDIT_WITHOUT_APPROVAL = 'arguments can only be given with an approval ("approved": true)';

/** The face of an approval's expiry: it decides as on_timeout says, with no answer to give. */
const EXPIRY_VIA = 'timeout';

/**
 * A decision on a pending approval, by whether its pause holds an MCP server's question: such
 * an approval is answered with "input" (never "arguments") that fits what the server asked, to
 * approve, or declined by a rejection; an expiry has no answer to give, so it declines. Any
 * other approval takes no input. The answer is recorded (and survives a restart) where edited
 * arguments are. A string is the refusal: INVALID_ARGUMENT, nothing decided.
 */
function answeredDecision(event: DecidedEvent, asked: InputRequest | undefined): DecidedEvent | string {
  const { uuid, input, ...decision } = event;
  if (!asked) return input === undefined ? event : `approval ${uuid} does not ask for input: decide it without "input"`;
  const from = `approval ${uuid} asks for input from MCP server ${asked.server}`;
  if (event.editedArgs !== undefined) return `${from}: answer with "input", not "arguments"`;
  if (event.approved && event.via === EXPIRY_VIA)
    return { ...decision, uuid, approved: false, reason: 'nobody answered the question in time; the approval expired', expired: true };
  if (!event.approved)
    return input === undefined ? event : 'input can only be given with an approval ("approved": true); a rejection declines';
  if (input === undefined) return `${from}: approve with "input" (the answer), or reject to decline. Nothing was decided.`;
  const problem = inputProblem(asked, input);
  if (problem) return `the input does not fit what MCP server ${asked.server} asked for: ${problem}. Nothing was decided.`;
  return { ...decision, uuid, editedArgs: input };
}

/**
 * Edited arguments against the input schema of the approval's tool: the catalogue's, or one the
 * configuration brings (an A2A agent as a tool, an a2a node's delegation). INVALID_ARGUMENT
 * naming the first problem, before anything is claimed.
 */
export function checkEdit(transition: Transition, catalogue: readonly Tool[]): void {
  const decision = transition.state.decision!;
  const toolName = decision.approval.toolName;
  const tool = [...catalogue, ...(transition.env.configuredTools ?? [])].findLast((candidate) => candidate.name === toolName);
  if (!tool) {
    refuse(
      transition,
      'failedPrecondition',
      `the tool ${toolName} is not available now, so edited arguments cannot be checked against its input schema. Nothing was decided.`,
    );
    return;
  }
  const problem = firstSchemaProblem(tool.inputSchema, decision.editedArgs, 'arguments');
  if (problem) {
    refuse(
      transition,
      'invalidArgument',
      `the edited arguments do not fit the input schema of ${toolName}: ${problem}. Nothing was decided.`,
    );
    return;
  }
  prepareClaim(transition);
}

/** The tools could not be read, so an edit cannot be checked: nothing is decided. */
export function editUncheckable(transition: Transition, error: string): void {
  const toolName = transition.state.decision!.approval.toolName;
  refuse(
    transition,
    'unavailable',
    `the tools could not be read (${error}), so the edited arguments cannot be checked against the input schema of ${toolName}. Nothing was decided; decide again.`,
  );
}

/** Who decided and how, as the claim records it: an edit only with an approval, an expiry only with a rejection. */
function decisionFacts(event: DecisionFacts & { approved: boolean }): DecisionFacts {
  return {
    ...(event.decidedBy !== undefined && { decidedBy: event.decidedBy }),
    ...(event.via !== undefined && { via: event.via }),
    ...(event.approved && event.editedArgs !== undefined && { editedArgs: event.editedArgs }),
    ...(!event.approved && event.expired === true && { expired: true }),
    ...(event.decisionId !== undefined && { decisionId: event.decisionId }),
  };
}

/**
 * A run taken over from another replica. Its stored value is the base; what the
 * cut-off activation had not written is done again: a claimed call that never started runs
 * (its claim stands, and starting it is still at most once), a decided approval's
 * continuation goes on after it, and a message's turn runs from the stored history. The
 * caller has checked that nothing the activation recorded would be done twice
 * (orchestrator/takeover-plan.ts).
 */
export function takenOver(transition: Transition, event: Extract<RunEvent, { kind: 'takenOver' }>): void {
  transition.state.activation = event.activation;
  const { state, env } = transition;
  if (event.unreadableRun !== undefined) {
    endTakenOver(
      transition,
      `This turn was interrupted: the replica running it stopped, and its stored run cannot be read (${event.unreadableRun}). Send your message again to retry.`,
    );
    return;
  }
  const plan = planTakeover({
    conversation: event.conversation,
    unfinished: event.unfinished,
    run: state.base,
    mode: env.root ? 'tree' : 'simple',
    treeRunsUnapproved: env.root !== undefined && runsUnapproved(env.root, true),
    policyApproves: env.policies?.approvesCalls ?? false,
    takeovers: event.takeovers,
    maxTakeovers: event.maxTakeovers,
    ...(env.root && { treeFingerprint: wholeTreeFingerprint(env.root) }),
  });
  if (plan.kind === 'end') {
    endTakenOver(transition, plan.note);
    return;
  }
  if (plan.kind === 'outcomeUnknown') {
    askAgain(transition, plan.executing);
    return;
  }
  goOnAfterTakeover(transition, event.runId, plan.event);
}

/** The taken-over turn ends with a note instead of going on. */
function endTakenOver(transition: Transition, note: string): void {
  log(transition, 'warn', 'taken-over turn ended with a note', { note });
  transition.effects.push({ kind: 'endTurnWithNote', note });
  end(transition, { kind: 'interrupted', note });
}

/**
 * Approved calls that started on a replica that died, with no outcome recorded: whether they
 * had an effect is unknown, so none runs again by itself. Each becomes a new approval marked
 * outcome_unknown (the old one interrupted, the run's pause moved to the new one), and the
 * conversation waits for a human.
 */
function askAgain(transition: Transition, executing: readonly PendingApproval[]): void {
  let run = transition.state.base;
  const writes = executing.map((approval) => {
    const uuid = freshId(transition);
    run = run && {
      ...run,
      pending: run.pending.map((pause) => (pause.approvalUuid === approval.uuid ? { ...pause, approvalUuid: uuid } : pause)),
    };
    log(transition, 'warn', 'approved call with unknown outcome asked again', {
      approval: approval.uuid,
      again: uuid,
      tool: approval.toolName,
    });
    const again: NewApproval = {
      uuid,
      toolCallId: approval.toolCallId,
      toolName: approval.toolName,
      toolArgsJson: approval.toolArgsJson,
      description: outcomeUnknownText(approval),
      ...(approval.remoteTaskId !== undefined && { remoteTaskId: approval.remoteTaskId }),
      ...(approval.remoteAgentName !== undefined && { remoteAgentName: approval.remoteAgentName }),
      agentChain: approval.agentChain,
      outcomeUnknown: true,
      replacesUuid: approval.uuid,
      // Asked again, the call needs the same people as before; their votes start over.
      ...(approval.quorum && { quorum: approval.quorum }),
    };
    return { interrupted: approval.uuid, approval: again, run };
  });
  transition.effects.push({ kind: 'askAgain', writes, expectedRevision: transition.state.revision });
  end(transition, { kind: 'paused', approvals: writes.map((write) => write.approval.uuid) });
}

/** The run goes on here from what is stored. */
function goOnAfterTakeover(transition: Transition, runId: string, event: TakeoverDrive): void {
  transition.state.runId = transition.state.base?.runId || runId;
  transition.state.userMessage = transition.state.base?.userMessage || event.userMessage;
  if (event.approved) {
    const approval = event.approved;
    const pause = transition.state.base?.pending.find((candidate) => candidate.approvalUuid === approval.uuid);
    // A claim with edited arguments runs them, whichever replica carries it out.
    const facts = decisionFacts({
      approved: true,
      ...(approval.decidedBy && { decidedBy: approval.decidedBy }),
      ...(approval.via && { via: approval.via }),
      ...(approval.editedArgsJson && { editedArgs: jsonObjectOf(approval.editedArgsJson) }),
    });
    transition.state.decision = {
      uuid: approval.uuid,
      approved: true,
      ...facts,
      approval,
      ...(pause && { pause }),
      nodes: pauseNodes(transition),
      others: [],
      claimed: false,
      conflicts: 0,
    };
    claimed(transition, true);
    return;
  }
  if (event.resumed) {
    const pause = transition.state.base?.pending.find((candidate) => candidate.approvalUuid === event.resumed!.uuid);
    transition.state.changes.resumed = event.resumed.uuid;
    if (pause) transition.state.resume = pause;
    transition.state.afterRejection = event.resumed.rejected && transition.state.mode === 'simple';
  }
  const checkpoint = transition.state.base?.checkpoint;
  if (event.fromCheckpoint && checkpoint) {
    log(transition, 'info', 'taken-over run goes on from its checkpoint', { containers: Object.keys(checkpoint.walk).length });
    restoreFrom(transition.state, checkpoint);
  }
  transition.effects.push({ kind: 'loadTools' });
}

/** The node names of the stored run's pauses, by approval (agent trees), for tagging messages. */
function pauseNodes(transition: Transition): Record<string, string> {
  const nodes: Record<string, string> = {};
  const root = transition.env.root;
  if (transition.state.mode !== 'tree' || !root) return nodes;
  for (const waiting of transition.state.base?.pending ?? []) {
    const name = nodeAt(root, waiting.path)?.name;
    if (name !== undefined) nodes[waiting.approvalUuid] = name;
  }
  return nodes;
}

/** Checks the decision against the stored run and prepares its claim (tree rejections load the other waiting approvals first). */
function prepareClaim(transition: Transition): void {
  const decision = transition.state.decision!;
  if (transition.state.mode === 'tree') {
    const root = transition.env.root;
    if (decision.approved) {
      const refusal = resumeProblem(root, decision.pause, decision.uuid);
      if (refusal) {
        refuse(transition, 'failedPrecondition', refusal);
        return;
      }
    }
    decision.nodes = pauseNodes(transition);
    // A rejection cancels the tree's run, and with it its other waiting calls: they are needed to record that.
    if (!decision.approved && (transition.state.base?.pending.length ?? 0) > 1) {
      transition.effects.push({ kind: 'loadApprovals' });
      return;
    }
  }
  claim(transition);
}

/** The run changed between reading it and claiming a rejection that cancels it: decide again on what is stored now. */
export function claimConflict(transition: Transition, latest: StoredRun | undefined, revision: number): void {
  const decision = transition.state.decision;
  if (!decision || decision.claimed) {
    outOfPhase(transition, 'claimConflict', 'no claim of a decision is on its way');
    return;
  }
  decision.inClaim = false;
  decision.conflicts += 1;
  if (decision.conflicts >= MAX_WRITE_ATTEMPTS) {
    refuse(
      transition,
      'aborted',
      `the run of this conversation kept changing under this decision (${MAX_WRITE_ATTEMPTS} claims refused); try again`,
    );
    return;
  }
  transition.state.base = latest;
  transition.state.revision = revision;
  decision.others = [];
  const pause = latest?.pending.find((candidate) => candidate.approvalUuid === decision.uuid);
  if (pause) decision.pause = pause;
  else delete decision.pause;
  prepareClaim(transition);
}

/** Why an approved call of an agent tree cannot resume where it paused; undefined when it can. */
function resumeProblem(root: AgentNode | undefined, pause: PendingCall | undefined, uuid: string): string | undefined {
  if (!root)
    return `approval ${uuid} cannot resume its pipeline: the configuration has no agent tree any more. Nothing was run; restore the configuration, or reject the approval to cancel the pipeline.`;
  if (!pause) return `approval ${uuid} is not one its conversation's pipeline waits for`;
  const where = describeNodePath(['agent', ...pause.path.flatMap((index) => ['agents', index])]);
  if (!nodeAt(root, pause.path) || pause.fingerprint === '' || treeFingerprint(root, pause.path) !== pause.fingerprint) {
    return `approval ${uuid} cannot resume its pipeline: the agent tree changed since it paused at ${where}, so that path no longer leads to the same node. Nothing was run; restore the configuration, or reject the approval to cancel the pipeline.`;
  }
  return undefined;
}

export function claim(transition: Transition): void {
  const decision = transition.state.decision!;
  const reason = decision.reason;
  const facts = decisionFacts(decision);
  decision.inClaim = true;
  decisionStep(transition, decision);
  if (decision.approved) {
    transition.effects.push({
      kind: 'claim',
      uuid: decision.uuid,
      approved: true,
      ...(reason !== undefined && { reason }),
      ...facts,
      messages: [],
      clearRun: false,
      alsoReject: [],
      continuesTurn: true,
    });
    return;
  }
  const approval = decision.approval;
  const node = decision.nodes[decision.uuid];
  // The model reads "Rejected by a human: <reason>" and that the call did not run;
  // after an expiry, that nobody decided in time.
  const asked = decision.pause?.input;
  const text = facts.expired ? expiredText(reason) : asked ? declinedText(approval.toolName, asked.server, reason) : undefined;
  const rejected: NewMessage = {
    ...rejectedResult(gatedCall(approval), jsonObjectOf(approval.toolArgsJson), reason, text),
    ...(node && { node }),
  };
  // Simple mode goes on after a rejection, so that the model answers the "no" in the same run;
  // a rejection in an agent tree cancels its run (README, "rejecting any of them").
  const continues = transition.state.mode === 'simple';
  const alsoReject = continues
    ? []
    : decision.others.map((other) => cancelledWith(approval, other, decision.nodes[other.uuid], reason, facts.expired === true));
  // Cancelling a tree's run names the run it read: an approval created since then must not be left pending without it.
  transition.effects.push({
    kind: 'claim',
    uuid: decision.uuid,
    approved: false,
    ...(reason !== undefined && { reason }),
    ...facts,
    messages: [rejected],
    clearRun: !continues,
    alsoReject,
    continuesTurn: continues,
    ...(!continues && { expectedRunRevision: transition.state.revision }),
  });
}

/**
 * The edited arguments an approved call runs with, and who edited them: this decision's, or
 * those in force when a quorum's completing vote came without any — the first vote for them
 * made the edit (an edit restarts the count).
 */
function editsInForce(decision: NonNullable<Transition['state']['decision']>): { args: Record<string, unknown>; by: string } | undefined {
  if (decision.editedArgs) return { args: decision.editedArgs, by: decision.decidedBy || 'anonymous' };
  const stored = decision.approval.editedArgsJson;
  if (!stored || !decision.approval.quorum) return undefined;
  return { args: jsonObjectOf(stored), by: decision.approval.votes[0]?.by ?? 'anonymous' };
}

/** What the model reads when a human declined to answer a server's question. */
function declinedText(toolName: string, server: string, reason: string | undefined): string {
  const said = reason?.trim() ? `: ${reason.trim()}` : '';
  return `${toolName} did not finish: a human declined to answer the question of MCP server ${server}${said}. The server is told so, and the call ends there; do not retry it unless the user asks you to.`;
}

/** A waiting call cancelled with a rejected one, recorded as rejected with a result that names the rejection and its reason. */
function cancelledWith(
  rejected: PendingApproval,
  other: PendingApproval,
  node: string | undefined,
  reason: string | undefined,
  expired: boolean,
): ApprovalRejection {
  const said = reason?.trim() ? `: ${reason.trim()}` : '';
  const how = expired ? 'expired without a decision' : 'was rejected by a human';
  const text = `Cancelled: the pipeline was cancelled when approval ${rejected.uuid} (${rejected.toolName}) ${how}${said}; ${other.toolName} was not run. ${NOT_RETRIED}`;
  return {
    uuid: other.uuid,
    messages: [{ ...rejectedResult(gatedCall(other), jsonObjectOf(other.toolArgsJson), reason, text), ...(node && { node }) }],
  };
}

export function claimed(transition: Transition, won: boolean, stored?: PendingApproval, voteRecorded = false): void {
  const decision = transition.state.decision;
  if (!decision) {
    outOfPhase(transition, 'claimed', 'no decision is being claimed');
    return;
  }
  decision.inClaim = false;
  // What runs is checked as the claim stored it, not as it was read before.
  if (stored) decision.approval = stored;
  if (!won) {
    end(transition, { kind: voteRecorded ? 'voteRecorded' : 'notDecided' });
    return;
  }

  decision.claimed = true;
  const pause = decision.pause ?? {
    approvalUuid: decision.uuid,
    path: [],
    outputKey: '',
    fingerprint: '',
    loopIterations: {},
    nodeMessages: null,
    toolName: decision.approval.toolName,
    argsHash: decision.approval.argsHash,
  };
  if (decision.approved) {
    transition.state.resume = pause;
    const node = decision.nodes[decision.uuid];
    const approval = decision.approval;
    // An input request's "edit" is the human's answer to the server, not arguments.
    const input = pause.input && { request: pause.input, responses: inputResponses(pause.input, decision.editedArgs ?? {}) };
    // A proxied call is the peer's own stored call: only a local call runs edited arguments.
    const inForce = editsInForce(decision);
    const edited = !input && !approval.remoteTaskId && inForce;
    // The approved call is the stored call: one whose arguments no longer match the hash taken when
    // it was asked is not run — the approval's own hash, and the one the run's pause kept of the
    // call it stopped (absent only in pauses of runs stored before pauses kept it).
    const hash = callHash(approval.toolName, jsonObjectOf(approval.toolArgsJson));
    const matches = hash === approval.argsHash && (pause.argsHash === '' || pause.argsHash === hash);
    if (!matches) log(transition, 'error', 'approved call does not match its hash', { approval: decision.uuid });
    decision.askedAt = transition.at;
    transition.effects.push({
      kind: 'runApproved',
      uuid: decision.uuid,
      approval,
      ...(node !== undefined && { node }),
      ...(edited && { edited }),
      ...(input && { input }),
      ...(!matches && { notRun: `${approval.toolName} was not executed: the stored call no longer matches the one that was approved.` }),
    });
    return;
  }
  // A declined question reaches the server that asked it, once, now that the decline stands.
  if (pause.input) transition.effects.push({ kind: 'declineInput', approval: decision.approval, request: pause.input });
  // A rejection reaches the agent that holds the call: each proxied one is answered "rejected".
  for (const refused of [decision.approval, ...decision.others]) {
    if (refused.remoteTaskId)
      transition.effects.push({
        kind: 'forwardRejection',
        approval: refused,
        ...(decision.reason !== undefined && { reason: decision.reason }),
      });
  }
  if (transition.state.mode === 'tree') {
    end(transition, { kind: 'cancelled' });
    return;
  }
  transition.state.afterRejection = true;
  transition.state.resume = pause;
  transition.state.changes.resumed = decision.uuid;
  transition.effects.push({ kind: 'loadTools' });
}

export function approvedCallFinished(transition: Transition, outcome: ToolOutcome): void {
  const decision = transition.state.decision;
  const pause = transition.state.resume;
  if (!decision || !pause) {
    outOfPhase(transition, 'approvedCallFinished', 'no approved call runs');
    return;
  }
  transition.state.changes.resumed = decision.uuid;
  const approval = decision.approval;
  callStep(
    transition,
    pause.path,
    { name: approval.toolName },
    { server: approval.remoteTaskId ? A2A_SERVER : (outcome.server ?? transition.state.tools?.[approval.toolName]?.server ?? '') },
    editsInForce(decision)?.args ?? jsonObjectOf(approval.toolArgsJson),
    outcome,
    decision.askedAt,
    decision.uuid,
  );
  if (!outcome.remote && !outcome.input) {
    transition.effects.push({ kind: 'loadTools' });
    return;
  }
  // The peer asks for another approval, or the server for more input, before it finishes: the same call waits again.
  const args = jsonObjectOf(approval.toolArgsJson);
  const tool = outcome.input
    ? { ...proxiedTool(approval.toolName), destructive: false, server: outcome.input.server }
    : proxiedTool(approval.toolName);
  const gate: GatedCall = {
    kind: 'gate',
    call: { ...gatedCall(approval), argumentsJson: JSON.stringify(args) },
    args,
    tool,
    ...(outcome.remote && { proxy: outcome.remote }),
    ...(outcome.input && { input: outcome.input }),
  };
  const uuid = freshId(transition);
  const { input: _answered, ...rest } = pause;
  transition.state.changes.pauses.push({ ...rest, approvalUuid: uuid, ...(outcome.input && { input: outcome.input }) });
  transition.state.gates.push({ approval: approvalOf(gate, uuid), messages: [] });
  pauseRun(transition);
}

/** The decision in the journal, recorded with its claim: a claim that loses takes it with it. */
function decisionStep(transition: Transition, decision: NonNullable<Transition['state']['decision']>): void {
  const path = decision.pause?.path ?? [];
  record(transition, {
    kind: 'decision',
    node: nodePath(transition, path),
    ...timing(transition),
    body: {
      approval_uuid: decision.uuid,
      approved: decision.approved,
      decided_by: decision.decidedBy || 'anonymous',
      via: decision.via ?? '',
      ...(decision.reason !== undefined && { reason: redactSecrets(decision.reason) }),
      ...(decision.editedArgs !== undefined && { edited_arguments: redactArguments(decision.editedArgs) }),
      ...(decision.expired && { expired: true }),
    },
  });
}

/** The catalogue entry an approval's tool stands for when only its name is known (a proxied delegation). */
function proxiedTool(name: string): Tool {
  return { name, description: '', inputSchema: {}, destructive: true, server: A2A_SERVER };
}
