import { randomUUID } from 'node:crypto';
import type {
  CreateConversationRequest,
  InputView,
  PipelineView,
  ResolveApprovalResponse,
  RunToDescribe,
  RunView,
  TurnResult,
  Unsettled,
} from '../../gen/ts/asg/orchestrator/v1/orchestrator.js';
import {
  ApprovalStatus,
  ConversationStatus,
  MessageRole,
  type Conversation,
  type CreateConversationRequest as NewStoredConversation,
  type PendingApproval,
  type Run,
  type StartTurnResponse,
} from '../../gen/ts/asg/store/v1/store.js';
import type { Tool, ToolServer } from '../../gen/ts/asg/tools/v1/tools.js';
import type { OrchestratorConfig } from '../common/config/slices.js';
import { recordApprovalDecided, recordError, recordTurn } from '../common/metrics.js';
import { currentContext, withContextPatch, withLearnedIds } from '../common/context.js';
import { aborted, failedPrecondition, internal, invalidArgument, outcomeUnknown, unavailable } from '../common/grpc/errors.js';
import type { Logger } from '../common/log.js';
import { redactSecrets } from '../common/secrets.js';
import { newSessionId } from '../common/session-id.js';
import type { OrchestratorClients } from './clients.js';
import { jsonObjectOf } from '../common/json-value.js';
import { a2aPeers, a2aTool, a2aToolsOf } from './domain/a2a-tools.js';
import { ExpiryPolicy, expiryDecision } from './domain/expiry.js';
import { inputQuestions, requestedSchema } from './domain/elicitation.js';
import { approvalRequiredText, CANCELLED_BY_USER, gatedCall, stillWaitingText, toolResult, userMessage } from './domain/messages.js';
import type { RunLeases } from './leases.js';
import { errorText } from './run/io.js';
import type { TakenOverRun } from '../../gen/ts/asg/store/v1/store.js';
import { RunDriver, type Activation } from './run/driver.js';
import { AgentIo } from './run/io.js';
import { freshRun, storedRun } from './run/machine.js';
import type { ApprovalPolicies, Requester } from './domain/approval-policy.js';
import { decodeRun, legacySimpleRun, pipelineView, UnreadableRun, type StoredRun } from './run/state.js';
import type { DecisionFacts, MachineEnv, RunAnswer } from './run/types.js';
import { catalogueWith, ToolCatalogue } from './tool-catalogue.js';
import { endTurn } from './turn-end.js';
import { answerBy, answerDeadline, storedResult, turnEnded, unsettled } from './unsettled.js';
import { turnOfEventLoop } from '../common/event-loop.js';
import { goesOn, planFork, TREE_FORK_REFUSED } from './fork-plan.js';

/** A message longer than this lets the event loop go before it is stored (runTurn). */
const LONG_MESSAGE_CHARS = 64 * 1024;

/**
 * Where a new conversation comes from, as the gRPC edge validated it: a task's A2A origin, and
 * the principal it belongs to (absent without gateway authentication).
 */
export type NewConversationOrigin = Pick<CreateConversationRequest, 'a2aOrigin' | 'owner'>;

/** Who decides an approval and how, as the gRPC edge validated it. */
export interface DecisionInput {
  /** A token's name, a JWT's subject, "anonymous" without auth; "timeout" for an expiry. */
  decidedBy: string;
  /** rest, web, a2a, mcp, cli; "timeout" for an expiry. */
  via: string;
  /** Edit on approve: the arguments to run the call with (checked against the tool's input schema here). */
  arguments?: Record<string, unknown>;
  /** The answer to an MCP server's question (an approval that asks for input), checked against its requested schema here. */
  input?: Record<string, unknown>;
  /** An expiry that rejects: the approval becomes expired, not rejected. */
  expired?: boolean;
  /** The decider's roles (chat, approve, admin): an approval with a quorum is decided only by its role. */
  roles?: string[];
}

/**
 * Runs turns: a user message starts a run, a decision on one of its approvals goes on with
 * it. The run is a value (run/state.ts) that the store keeps opaquely; its transitions are the
 * pure machine's (run/machine.ts) and its I/O the driver's (run/driver.ts). This class holds
 * no state between calls: it guards the entries (one active run per conversation, interrupted
 * approved calls) and turns a run's answer into the gRPC reply.
 */
export class TurnRunner {
  /** An approved call that has not finished after this long was cut off by a crash. */
  private readonly interruptedAfterMs: number;
  private readonly catalogue: ToolCatalogue;
  private readonly driver: RunDriver;
  /** Every A2A tool of the configuration, for ListTools. */
  private readonly allA2aTools: Tool[];
  private readonly env: MachineEnv;
  /** The activations running here, to hand back on a drain. */
  private readonly active = new Set<ActiveEntry>();
  private readonly expiry: ExpiryPolicy;

  constructor(
    private readonly config: OrchestratorConfig,
    private readonly clients: OrchestratorClients,
    private readonly log: Logger,
    private readonly leases: RunLeases,
    /** approvals.policies, compiled (none configured: undefined). */
    policies?: ApprovalPolicies,
  ) {
    this.interruptedAfterMs = Math.max(30_000, ...config.mcp_servers.map((server) => server.timeout)) + 10_000;
    this.catalogue = new ToolCatalogue(clients);
    const agent = config.agent;
    const lone = agent?.type === 'llm' ? agent : undefined;
    const simpleA2aTools = a2aToolsOf([...config.a2a, ...(lone?.a2a ?? [])]);
    const nodeTools: Tool[] = [];
    // The tools of the configuration's a2a nodes (not in ListTools): an edited delegation is checked against their schema.
    const a2aNodeTools: Tool[] = [];
    const visit = (node: NonNullable<OrchestratorConfig['agent']>): void => {
      nodeTools.push(...a2aToolsOf(node.a2a));
      if (node.type === 'a2a')
        a2aNodeTools.push(
          a2aTool({ name: node.name, description: node.description ?? '', destructiveHint: node.destructiveHint ?? false }),
        );
      node.agents?.forEach(visit);
    };
    if (agent) visit(agent);
    this.allA2aTools = [...new Map([...simpleA2aTools, ...nodeTools].map((tool) => [tool.name, tool])).values()];
    this.env = {
      // Simple mode: no agent, or a lone llm node (with its own prompt and model).
      root: agent && !lone ? agent : undefined,
      simple: { model: lone?.model ?? config.llm.model, a2aTools: simpleA2aTools, node: lone?.name ?? config.name },
      defaultModel: config.llm.model,
      maxModelCalls: config.chat.max_llm_iterations,
      configuredTools: [...this.allA2aTools, ...a2aNodeTools],
      history: {
        systemPrompt: lone?.prompt ?? config.prompt,
        maxTokens: config.chat.max_tokens,
        compactionStrategy: config.chat.compaction_strategy,
      },
      ...(policies !== undefined && { policies }),
    };
    this.expiry = new ExpiryPolicy(config.approvals);
    this.driver = new RunDriver(clients, log, new AgentIo(clients, log, a2aPeers(config)), this.catalogue, this.env, leases, this.expiry);
  }

  /** `origin`: the A2A origin of a task, and the principal the conversation belongs to, as the gateway says. */
  async createConversation(message: string | undefined, origin: NewConversationOrigin = {}, requester?: Requester): Promise<TurnReply> {
    const { a2aOrigin, owner } = origin;
    if (message !== undefined && message.trim() === '') throw invalidArgument('message must be a non-empty string');
    const sessionId = currentContext()?.sessionId || newSessionId();
    return withLearnedIds({ sessionId }, async () => {
      // The top-level prompt is simple mode's; each node of a tree has its own.
      const lone = this.config.agent?.type === 'llm' ? this.config.agent : undefined;
      const systemPrompt = this.env.root ? '' : (lone?.prompt ?? this.config.prompt);
      const create = async (firstTurn: Partial<Pick<NewStoredConversation, 'firstMessage' | 'lease'>> = {}) => {
        const { conversation } = await this.clients.store.createConversation({ sessionId, systemPrompt, a2aOrigin, owner, ...firstTurn });
        if (!conversation) throw internal('the store returned no conversation');
        withLearnedIds({ conversationId: conversation.id }, () => this.log.info('conversation created', { conversation: conversation.id }));
        return conversation;
      };
      if (message === undefined) return { conversation: await create() };
      // The conversation and its first turn are one write: a new conversation is never waiting or busy.
      return this.startTurn(undefined, message, requester, async () => ({
        started: true,
        busy: false,
        unfinishedApprovals: [],
        conversation: await create({ firstMessage: userMessage(message), lease: this.leases.lease() }),
      }));
    });
  }

  /** `requester`: who sends the message, as the gateway authenticated them (the approval policies' `requester`). */
  async sendMessage(conversationId: string, message: string, requester?: Requester): Promise<TurnReply> {
    return this.startTurn(conversationId, message, requester);
  }

  /**
   * A decision on an approval: a human's (with who and through which face, and arguments
   * edited before approving), or its expiry's (expireDue). Either goes through the same claim,
   * so that of two at once exactly one stands.
   */
  async resolveApproval(
    uuid: string,
    approved: boolean,
    reason: string | undefined,
    decision: DecisionInput = { decidedBy: 'anonymous', via: 'rest' },
  ): Promise<ResolveApprovalResponse> {
    const by = answerDeadline();
    const found = await this.clients.store.getApproval({ uuid }).catch((error: unknown) => {
      // Only read so far: whatever went wrong, nothing was decided.
      if (outcomeUnknown(error))
        throw unavailable(`approval ${uuid} could not be read (${errorText(error)}); nothing was decided: decide again`);
      throw error;
    });
    const { approval, sessionId, run } = found;
    if (!approval) throw internal('the store returned no approval');
    const where = unsettled('', approval.conversationId, uuid);
    return answerBy(
      by,
      this.decide(uuid, approved, reason, decision, { approval, sessionId, run }, by),
      () =>
        unsettledDecision({
          ...where,
          reason: `the decision had not been carried out when its caller's deadline came; approval ${uuid} shows whether it was recorded, and conversation ${approval.conversationId} what followed`,
        }),
      (error) => this.log.warn('decision failed after its caller was answered', { approval: uuid, error: errorText(error) }),
    );
  }

  /** A decision on an approval read from the store: claimed, and carried out when the claim wins. */
  private async decide(
    uuid: string,
    approved: boolean,
    reason: string | undefined,
    decision: DecisionInput,
    { approval, sessionId, run }: { approval: PendingApproval; sessionId: string; run: Run | undefined },
    by: number | undefined,
  ): Promise<ResolveApprovalResponse> {
    return withContextPatch({ sessionId: currentContext()?.sessionId || sessionId, conversationId: approval.conversationId }, async () => {
      const stored = run ? readRun(() => decodeRun(run, uuid)) : legacySimpleRun(approval);
      const activation: Activation = {
        conversationId: approval.conversationId,
        watched: false,
        conversation: emptyConversation(approval.conversationId),
        approval,
        holdsTurn: false,
      };
      const state = storedRun(stored, run?.revision ?? (await this.runRevisionOf(approval)));
      const facts: DecisionFacts = {
        decidedBy: decision.decidedBy,
        via: decision.via,
        ...(decision.arguments !== undefined && { editedArgs: decision.arguments }),
        ...(decision.expired && { expired: true }),
        decisionId: randomUUID(),
      };
      const answer = await this.activate(activation, () =>
        this.driver.drive(
          state,
          {
            kind: 'approvalDecided',
            activation: randomUUID(),
            uuid,
            approved,
            ...(reason !== undefined && { reason }),
            ...facts,
            ...(decision.input !== undefined && { input: decision.input }),
            ...(decision.roles && { deciderRoles: decision.roles }),
            approval,
          },
          activation,
        ),
      );
      if (answer.kind === 'handedBack' || answer.kind === 'unknown')
        return this.followDecision(approval, { approved, ...facts }, answer, by);
      const decided = activation.approval ?? approval;
      if (answer.kind === 'voteRecorded') {
        const votes = decided.votes.length;
        const required = decided.quorum?.required ?? 1;
        this.log.info('approval vote recorded', { approval: uuid, decided_by: decision.decidedBy, votes, required });
        return { decided: false, voteRecorded: { votes, required }, approval: decided, conversation: activation.conversation };
      }
      if (answer.kind !== 'notDecided') recordApprovalDecided(decisionOutcome(decided.status));
      if (answer.kind === 'notDecided' && decided.status === ApprovalStatus.APPROVAL_STATUS_PENDING && decision.via !== 'timeout') {
        // The store refused the claim as too late (its expires_at passed): the deadline is the deadline, the expiry decides.
        return this.tooLate(decided);
      }
      if (answer.kind === 'notDecided') {
        this.log.info('approval already decided', { approval: uuid, status: ApprovalStatus[decided.status] });
        return { decided: false, approval: decided, conversation: activation.conversation, ...this.viewOf(activation.conversation) };
      }
      if (answer.kind === 'cancelled') {
        return {
          decided: true,
          approval: decided,
          conversation: activation.conversation,
          result: { response: CANCELLED_BY_USER, waitingApproval: false },
          ...this.viewOf(activation.conversation),
        };
      }
      const reply = await this.reply(answer, activation);
      return { decided: true, approval: decided, ...reply };
    });
  }

  /**
   * A human's decision the store refused because the approval's expires_at had passed, before
   * the expiry loop got to it: the expiry is carried out now, as the loop would (exactly once:
   * its claim is the one that stands), and the caller is told of the decision that stands.
   */
  private async tooLate(approval: PendingApproval): Promise<ResolveApprovalResponse> {
    this.log.info('decision refused: the approval had expired', { approval: approval.uuid, expires_at: approval.expiresAt?.toISOString() });
    const expiry = await this.expire(approval);
    if (expiry.unsettled) {
      return unsettledDecision({
        ...expiry.unsettled,
        reason: `this decision came after the approval's expires_at and was refused; its expiry was carried out instead, and ${expiry.unsettled.reason}`,
      });
    }
    const { approval: stands } = await this.clients.store.getApproval({ uuid: approval.uuid });
    const { conversation } = await this.clients.store.getConversation({ id: approval.conversationId, includeMessages: true });
    return { decided: false, approval: stands ?? approval, conversation, ...(conversation && this.viewOf(conversation)) };
  }

  /**
   * The reply of a decision whose carrying out went on without this activation (lease lost,
   * or the store's answer lost): what the approval and its conversation show once its turn
   * has ended, when that is before `by`; else unsettled, naming both. A decision whose claim
   * got no answer may not be recorded: only an approval decided as this request decided it
   * (same decision, same decider, same face) counts as this request's.
   */
  private async followDecision(
    approval: PendingApproval,
    asked: DecisionFacts & { approved: boolean },
    ended: Unfinished,
    by: number | undefined,
  ): Promise<ResolveApprovalResponse> {
    const { uuid, conversationId } = approval;
    const where = `approval ${uuid} (and conversation ${conversationId})`;
    const recorded = ended.stored ? 'the decision is recorded' : 'whether the decision was recorded is not known';
    if (ended.kind === 'handedBack')
      return unsettledDecision(
        unsettled(`${recorded}; ${ended.reason}; ${where} will show the outcome: do not decide again`, conversationId, uuid, true),
      );
    const conversation = by === undefined ? undefined : await turnEnded(this.clients.store, conversationId, by);
    if (conversation) {
      const stands = conversation.pendingApprovals.some((pending) => pending.uuid === uuid)
        ? undefined
        : await this.readApproval(uuid, by!);
      const ours =
        stands !== undefined && stands.status !== ApprovalStatus.APPROVAL_STATUS_PENDING && (ended.stored || decidedAsAsked(stands, asked));
      if (ours) return { decided: true, approval: stands, conversation, result: storedResult(conversation), ...this.viewOf(conversation) };
      if (stands && stands.status !== ApprovalStatus.APPROVAL_STATUS_PENDING)
        return { decided: false, approval: stands, conversation, ...this.viewOf(conversation) };
    }
    return unsettledDecision(
      unsettled(
        `${recorded}, but what followed is not known here (${ended.reason}); it goes on from what is stored: ${where} will show the outcome`,
        conversationId,
        uuid,
      ),
    );
  }

  /** The approval as stored, or undefined when it cannot be read by `by`. */
  private async readApproval(uuid: string, by: number): Promise<PendingApproval | undefined> {
    try {
      return (await withContextPatch({ deadline: Math.max(Date.now() + 1, by) }, () => this.clients.store.getApproval({ uuid }))).approval;
    } catch {
      return undefined;
    }
  }

  /**
   * Decides an approval whose expires_at has passed, as a human decision would
   * be carried out, by "timeout": its on_timeout says approve or reject (an expired rejection).
   * Of several replicas expiring it at once, or a human deciding it in the same moment,
   * exactly one claim wins; the others find it decided (decided=false) and do nothing.
   */
  async expire(due: PendingApproval): Promise<ResolveApprovalResponse> {
    const { approved, reason } = expiryDecision(due);
    return withContextPatch({ deadline: Date.now() + this.config.chat.turn_timeout }, () =>
      this.resolveApproval(due.uuid, approved, reason, { decidedBy: 'timeout', via: 'timeout', ...(!approved && { expired: true }) }),
    );
  }

  async listTools(): Promise<{ tools: Tool[]; servers: ToolServer[] }> {
    const tools = [...catalogueWith(await this.catalogue.current(), this.allA2aTools).values()];
    return { tools, servers: await this.catalogue.servers() };
  }

  /** The public view of stored runs (REST "pipeline_state"), in request order. */
  describeRuns(runs: readonly RunToDescribe[]): RunView[] {
    return runs.map((entry) => {
      if (!entry.run) return { inputs: [] };
      const stored = readRun(() => decodeRun(entry.run!, entry.pendingApprovalUuid));
      const view = pipelineView(stored);
      return { ...(view && { pipeline: view }), inputs: inputViews(stored) };
    });
  }

  /**
   * Appends the user's message (unless the conversation waits or is busy) and runs it. A turn
   * that has not answered a little before the caller's deadline is answered as unsettled: it
   * goes on, and is stopped at its deadline with a note in the conversation.
   */
  private async startTurn(
    conversationId: string | undefined,
    message: string,
    requester: Requester | undefined,
    created?: () => Promise<StartTurnResponse>,
  ): Promise<TurnReply> {
    if (message.trim() === '') throw invalidArgument('message must be a non-empty string');
    const started = performance.now();
    const by = answerDeadline();
    // The conversation a created one gets is known once the store has answered.
    let turnOf = conversationId ?? '';
    const begin =
      created ??
      (() => this.clients.store.startTurn({ conversationId: turnOf, message: userMessage(message), lease: this.leases.lease() }));
    // Every line of the turn, here and in each service it calls, names its conversation.
    return withLearnedIds({ conversationId }, async () => {
      try {
        const reply = await answerBy(
          by,
          this.runTurn(turnOf, message, by, requester, async () => {
            const start = await begin();
            turnOf = required(start.conversation).id;
            return start;
          }),
          () =>
            unsettledTurn(
              unsettled(
                `the turn had not finished when its caller's deadline came; it is stopped at its deadline (chat.turn_timeout) with a note, and what it did is recorded in conversation ${turnOf}`,
                turnOf,
              ),
            ),
          (error) => this.log.warn('turn failed after its caller was answered', { conversation: turnOf, error: errorText(error) }),
        );
        recordTurn(
          reply.unsettled ? 'unknown' : reply.result?.waitingApproval ? 'waiting_approval' : 'answered',
          (performance.now() - started) / 1000,
        );
        return reply;
      } catch (error) {
        recordTurn('failed', (performance.now() - started) / 1000);
        recordError('turn_failed');
        throw error;
      }
    });
  }

  /** `begin`: the store's start of the turn (StartTurn, or a new conversation's creation with its first turn). */
  private async runTurn(
    conversationId: string,
    message: string,
    by: number | undefined,
    requester: Requester | undefined,
    begin: () => Promise<StartTurnResponse>,
  ): Promise<TurnReply> {
    let start: StartTurnResponse;
    // The in-process mesh carries a request from the gateway's parse of its body to the store's
    // write of its message without letting the event loop go: for a long message each takes
    // tens of milliseconds, so the loop serves other requests between them.
    if (message.length > LONG_MESSAGE_CHARS) await turnOfEventLoop();
    try {
      start = await begin();
    } catch (error) {
      if (!outcomeUnknown(error)) throw error;
      // A creation the store may have made names no conversation to look at; if it was made, its first turn is taken
      // over from what is stored, as a started turn's is.
      if (conversationId === '')
        throw unavailable(
          `whether the conversation was created is not known: the conversation store did not answer (${errorText(error)}); if it was, its first turn is run from what is stored. Look for it in your conversations before you send the message again`,
        );
      // The message may have been appended and its turn marked with this replica's lease.
      void this.leases.giveUp(conversationId);
      return unsettledTurn(
        unsettled(
          `whether the message was stored is not known: the conversation store did not answer (${errorText(error)}); if it was, its turn is run from what is stored. Do not send it again before you look at conversation ${conversationId}`,
          conversationId,
        ),
      );
    }
    return withLearnedIds({ sessionId: required(start.conversation).sessionId }, async () => {
      const waiting = required(start.conversation);
      if (!start.started && waiting.status === ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL && waiting.pendingApproval) {
        const approval = waiting.pendingApproval;
        return {
          conversation: waiting,
          result: { response: stillWaitingText(approval), waitingApproval: true, approval },
          ...this.viewOf(waiting),
        };
      }
      if (start.busy) throw busy(conversationId);
      if (!start.started) {
        await this.settleInterruptedCalls(start.unfinishedApprovals);
        start = await this.clients.store.startTurn({ conversationId, message: userMessage(message), lease: this.leases.lease() });
        if (start.busy) throw busy(conversationId);
        if (!start.started)
          throw failedPrecondition(
            `conversation ${conversationId} changed while its interrupted calls were recorded; send the message again`,
          );
      }
      return this.runStarted(required(start.conversation), message, by, requester);
    });
  }

  /** A started turn (its running mark stored with its message, or with a fork's copy) runs until it answers or pauses. */
  private async runStarted(
    started: Conversation,
    message: string,
    by: number | undefined,
    requester: Requester | undefined,
    fromHistory = false,
  ): Promise<TurnReply> {
    const conversationId = started.id;
    const activation: Activation = { conversationId, watched: started.watched, conversation: started, holdsTurn: true, stored: 'yes' };
    const state = freshRun(this.env.root ? 'tree' : 'simple', started.runRevision);
    const ended = await this.activate(activation, () =>
      this.driver.drive(
        state,
        {
          kind: 'userMessage',
          runId: randomUUID(),
          activation: randomUUID(),
          text: message,
          ...(requester && { requester }),
          ...(fromHistory && { fromHistory }),
        },
        activation,
      ),
    );
    if (ended.kind === 'handedBack' || ended.kind === 'unknown') return this.followTurn(conversationId, ended, by);
    return this.reply(ended, activation);
  }

  /**
   * Forks a run at one of its steps (fork-plan.ts): a new conversation owned by `owner` with the
   * messages before the step, in one store call. With a message, the message is its next turn;
   * else, when the copy ends in the middle of a turn, that turn goes on from the copied history
   * (its running mark stored with the copy); after a complete answer the copy is all.
   */
  async forkRun(
    runId: string,
    step: number,
    message: string | undefined,
    owner: string | undefined,
    requester: Requester | undefined,
  ): Promise<TurnReply & { copiedOnly: boolean }> {
    if (message !== undefined && message.trim() === '') throw invalidArgument('message must be a non-empty string');
    const { run, steps } = await this.clients.store.getRun({ runId });
    if (!run) throw internal('the store returned no run');
    if (this.env.root) throw failedPrecondition(TREE_FORK_REFUSED(runId));
    const { conversation: source } = await this.clients.store.getConversation({ id: run.conversationId, includeMessages: true });
    if (!source) throw internal('the store returned no conversation');
    const later = (await this.clients.store.listRuns({ conversationId: source.id, pageSize: 500, pageToken: '' })).runs
      .map((other) => other.messageSeq)
      .filter((seq): seq is number => seq !== undefined && run.messageSeq !== undefined && seq > run.messageSeq);
    const plan = planFork({
      run,
      steps,
      step,
      nextRunSeq: later.length > 0 ? Math.min(...later) : undefined,
      messageCount: source.messageCount,
    });
    if (plan.kind === 'refuse') throw failedPrecondition(plan.message);
    const copied = source.messages.filter((stored) => stored.seq <= plan.upToSeq);
    const resumes = message === undefined && goesOn(copied);
    const sessionId = currentContext()?.sessionId || newSessionId();
    return withLearnedIds({ sessionId }, async () => {
      const { conversation } = await this.clients.store.forkConversation({
        sourceConversationId: source.id,
        upToSeq: plan.upToSeq,
        sessionId,
        ...(owner !== undefined && { owner }),
        ...(resumes && { lease: this.leases.lease() }),
      });
      const fork = required(conversation);
      this.log.info('run forked', { run: runId, step, conversation: fork.id, source: source.id, messages: copied.length });
      if (message !== undefined) return { ...(await this.startTurn(fork.id, message, requester)), copiedOnly: false };
      if (!resumes)
        return {
          conversation: fork,
          result: {
            response: `The fork holds conversation ${source.id} up to step ${step} of run ${runId}, which ends with a complete answer: nothing ran. Send a message to go on.`,
            waitingApproval: false,
          },
          copiedOnly: true,
        };
      const lastUser = copied.findLast((stored) => stored.role === MessageRole.MESSAGE_ROLE_USER)?.content ?? '';
      const by = answerDeadline();
      return withLearnedIds({ conversationId: fork.id }, async () => ({
        ...(await answerBy(
          by,
          this.runStarted(fork, lastUser, by, requester, true),
          () =>
            unsettledTurn(
              unsettled(
                `the fork's turn had not finished when its caller's deadline came; it is stopped at its deadline (chat.turn_timeout) with a note, and what it did is recorded in conversation ${fork.id}`,
                fork.id,
              ),
            ),
          (error) => this.log.warn('fork failed after its caller was answered', { conversation: fork.id, error: errorText(error) }),
        )),
        copiedOnly: false,
      }));
    });
  }

  /**
   * The reply of a turn whose run went on without this activation (lease lost, or the store's
   * answer lost): the turn as the conversation shows it once it has ended, when that is
   * before `by`; else unsettled, naming the conversation. A replica that hands its runs back
   * as it stops says so at once.
   */
  private async followTurn(conversationId: string, ended: Unfinished, by: number | undefined): Promise<TurnReply> {
    const where = `conversation ${conversationId}`;
    if (ended.kind === 'handedBack')
      return unsettledTurn(
        unsettled(`${ended.reason}; its answer will be in ${where}: do not send the message again`, conversationId, undefined, true),
      );
    const conversation = ended.stored && by !== undefined ? await turnEnded(this.clients.store, conversationId, by) : undefined;
    if (conversation) return { conversation, result: storedResult(conversation), ...this.viewOf(conversation) };
    return unsettledTurn(
      unsettled(
        `the message is stored, but how its turn ended is not known here (${ended.reason}); it goes on from what is stored, and its answer will be in ${where}`,
        conversationId,
      ),
    );
  }

  /** The reply to a run's answer, with the conversation as the answer leaves it. */
  private async reply(
    answer: Exclude<RunAnswer, { kind: 'lost' }>,
    activation: Activation,
  ): Promise<{ conversation: Conversation; result: TurnResult; pipeline?: PipelineView }> {
    let conversation = activation.conversation;
    let result: TurnResult;
    switch (answer.kind) {
      case 'answered':
        result = { response: redactSecrets(answer.response), waitingApproval: false };
        break;
      case 'paused': {
        const created = answer.approvals
          .map((uuid) => conversation.pendingApprovals.find((approval) => approval.uuid === uuid))
          .filter((approval) => approval !== undefined);
        for (const approval of created)
          this.log.info('approval requested', { conversation: conversation.id, approval: approval.uuid, tool: approval.toolName });
        result = {
          response: created.map(approvalRequiredText).join('\n'),
          waitingApproval: true,
          approval: created[0] ?? conversation.pendingApproval,
        };
        break;
      }
      case 'waiting': {
        const waiting = conversation.pendingApproval;
        result = {
          response: waiting ? stillWaitingText(waiting) : 'The pipeline waits for other approvals.',
          waitingApproval: waiting !== undefined,
          approval: waiting,
        };
        break;
      }
      case 'superseded': {
        // Cancelled under it (a sibling's approval was rejected): no write of this run ended the turn.
        if (answer.endTurn && activation.holdsTurn)
          await endTurn(this.clients, this.log, activation.conversationId, new Error(answer.reason), this.leases.owner);
        conversation = required(
          (await this.clients.store.getConversation({ id: activation.conversationId, includeMessages: true })).conversation,
        );
        const waiting = conversation.pendingApproval;
        result = {
          response: `This run of the pipeline stopped: ${answer.reason}. What it did so far is recorded in the conversation.`,
          waitingApproval: waiting !== undefined,
          approval: waiting,
        };
        break;
      }
      case 'notDecided':
      case 'voteRecorded':
      case 'cancelled':
      case 'interrupted':
        throw internal(`a turn cannot answer "${answer.kind}"`);
    }
    return { conversation, result, ...this.viewOf(conversation) };
  }

  /** The conversation's run as REST shows it, when it has one of an agent tree. */
  private viewOf(conversation: Conversation): { pipeline?: PipelineView } {
    if (!conversation.run) return {};
    const view = pipelineView(readRun(() => decodeRun(conversation.run!, conversation.pendingApproval?.uuid)));
    return view ? { pipeline: view } : {};
  }

  /** The revision a decision's writes name when no run is stored (a simple-mode pause stored before runs were versioned values). */
  private async runRevisionOf(approval: PendingApproval): Promise<number> {
    const { conversation } = await this.clients.store.getConversation({ id: approval.conversationId, includeMessages: false });
    return required(conversation).runRevision;
  }

  /**
   * Runs an activation that may hold the conversation's running mark, and while it does, the
   * mark's lease: renewed as it runs; when it is lost, the machine stops the
   * activation (leaseLost) unless the write that ends its turn is already on its way.
   *
   * How it ended, as its request must tell it: its answer; handed back (this replica stops);
   * or unknown — its lease was lost, or a store call failed without an answer after its
   * message or decision was (or may have been) stored. An unknown end gives the run up
   * (RunLeases.giveUp): whichever replica looks first goes on from what is stored, so nothing
   * stays busy and an approved call whose outcome was not recorded is asked again, never left
   * executing. Any other failure is a refusal: the mark is cleared here before it is reported
   * (a mark left behind keeps the conversation busy).
   */
  private async activate(
    activation: Activation,
    run: () => Promise<RunAnswer>,
  ): Promise<Exclude<RunAnswer, { kind: 'lost' }> | Unfinished> {
    const entry: ActiveEntry = { conversationId: activation.conversationId, controller: new AbortController(), handedBack: false };
    activation.signal = entry.controller.signal;
    this.active.add(entry);
    const lease = this.leases.keep(
      activation.conversationId,
      () => activation.holdsTurn,
      (reason) => entry.controller.abort(`this replica lost the lease on the run: ${reason}`),
    );
    const mayHoldLease = () => activation.holdsTurn || activation.stored === 'maybe';
    // Stopped by a drain before anything of its request was stored: nothing was done, and its caller may send it again.
    const handedBack = (reason: string): Unfinished => {
      if (activation.stored === undefined && !activation.holdsTurn) throw unavailable(`${reason}; nothing was done: send it again`);
      return { kind: 'handedBack', reason, stored: activation.stored === 'yes' };
    };
    try {
      const answer = await run();
      if (answer.kind !== 'lost') return answer;
      if (entry.handedBack) return handedBack(answer.reason);
      if (mayHoldLease()) void this.leases.giveUp(activation.conversationId);
      return { kind: 'unknown', reason: answer.reason, stored: activation.stored === 'yes' };
    } catch (error) {
      if (entry.handedBack) return handedBack(String(entry.controller.signal.reason));
      const lost = entry.controller.signal.aborted;
      const callDecided =
        activation.approval?.status === ApprovalStatus.APPROVAL_STATUS_APPROVED ||
        activation.approval?.status === ApprovalStatus.APPROVAL_STATUS_EXECUTING;
      const unknown = lost || activation.stored === 'maybe' || (activation.stored === 'yes' && (outcomeUnknown(error) || callDecided));
      if (unknown && mayHoldLease()) void this.leases.giveUp(activation.conversationId);
      else if (activation.holdsTurn) await endTurn(this.clients, this.log, activation.conversationId, error, this.leases.owner);
      if (unknown) {
        this.log.warn('activation ended with its outcome unknown; its run goes on from what is stored', {
          conversation: activation.conversationId,
          error: errorText(error),
        });
        return { kind: 'unknown', reason: errorText(error), stored: activation.stored === 'yes' };
      }
      throw error;
    } finally {
      lease.stop();
      this.active.delete(entry);
    }
  }

  /**
   * A run whose lease this replica took over (TakeOverRuns): it goes on here from what is
   * stored (takeover-plan.ts) until it answers or pauses. Nobody waits for the answer: it is
   * in the conversation, and its events reach every watcher.
   */
  async takeOver(taken: TakenOverRun): Promise<void> {
    const conversationId = taken.conversationId;
    const { conversation } = await this.clients.store.getConversation({ id: conversationId, includeMessages: true });
    const current = required(conversation);
    await withContextPatch(
      { sessionId: current.sessionId, conversationId, deadline: Date.now() + this.config.chat.turn_timeout },
      async () => {
        if (taken.previousOwner === this.leases.owner)
          this.log.warn('run taken back after this replica gave it up', { conversation: conversationId, takeovers: taken.takeovers });
        else
          this.log.warn('run taken over from a replica that stopped', {
            conversation: conversationId,
            previous_owner: taken.previousOwner,
            takeovers: taken.takeovers,
          });
        const { approvals: unfinished } = await this.clients.store.listUnfinishedApprovals({ conversationId });
        let stored: StoredRun | undefined;
        let unreadableRun: string | undefined;
        try {
          stored = current.run && decodeRun(current.run, current.pendingApproval?.uuid);
        } catch (error) {
          unreadableRun = errorText(error);
        }
        const activation: Activation = { conversationId, watched: current.watched, conversation: current, holdsTurn: true };
        // What goes on (or is asked again, or ends with a note) is the run machine's decision (takeover-plan.ts).
        const state = stored ? storedRun(stored, current.runRevision) : freshRun(this.env.root ? 'tree' : 'simple', current.runRevision);
        const answer = await this.activate(activation, () =>
          this.driver.drive(
            state,
            {
              kind: 'takenOver',
              runId: randomUUID(),
              activation: randomUUID(),
              conversation: current,
              unfinished,
              takeovers: taken.takeovers,
              maxTakeovers: this.config.runs.max_takeovers,
              ...(unreadableRun !== undefined && { unreadableRun }),
            },
            activation,
          ),
        );
        if (answer.kind === 'superseded' && answer.endTurn)
          await endTurn(this.clients, this.log, conversationId, new Error(answer.reason), this.leases.owner);
        this.log.info('taken-over run went on', {
          conversation: conversationId,
          answer: answer.kind,
          ...((answer.kind === 'unknown' || answer.kind === 'handedBack') && { reason: answer.reason }),
        });
      },
    );
  }

  /** How many activations run here now. */
  get running(): number {
    return this.active.size;
  }

  /**
   * A drain: activations may finish until `handBackAt`; those still running then
   * stop at once (as a lost lease stops them) and their leases are released, so another
   * replica takes their runs over right away instead of after lease_ttl. Their callers are
   * answered that the run was handed back, with where its outcome will be (Unsettled).
   */
  async drain(handBackAt: number): Promise<void> {
    while (this.active.size > 0 && Date.now() < handBackAt) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(50, Math.max(1, handBackAt - Date.now()))));
    }
    const left = [...this.active];
    for (const entry of left) {
      entry.handedBack = true;
      entry.controller.abort('this replica is stopping and handed the run to another replica, which finishes it');
    }
    await Promise.all(
      left.map(async (entry) => {
        const released = await this.leases.release(entry.conversationId);
        this.log.warn('run handed back on stop', { conversation: entry.conversationId, released });
      }),
    );
  }

  /**
   * Approved calls whose outcome was never recorded were cut off by a crash. Each is
   * recorded as interrupted (an approved call runs at most once: never re-run) so the history is whole again. A
   * call that is younger than its deadline may still be running elsewhere: the turn waits.
   */
  private async settleInterruptedCalls(approvals: readonly PendingApproval[]): Promise<void> {
    for (const approval of approvals) {
      const text = `${approval.toolName} was approved but the service stopped before its result was recorded; it was not run again. Check its effect before retrying.`;
      const { marked } = await this.clients.store.markApprovalInterrupted({
        uuid: approval.uuid,
        minAgeMs: this.interruptedAfterMs,
        messages: [toolResult(gatedCall(approval), jsonObjectOf(approval.toolArgsJson), text, true)],
      });
      if (!marked)
        throw failedPrecondition(
          `the approved call ${approval.toolName} (approval ${approval.uuid}) is still running; send the message again when it has finished`,
        );
      this.log.warn('approved call marked interrupted', { approval: approval.uuid, tool: approval.toolName });
    }
  }
}

/** A stored run that this release cannot read stops the request before anything runs. */
function readRun(read: () => StoredRun): StoredRun {
  try {
    return read();
  } catch (error) {
    if (error instanceof UnreadableRun) throw failedPrecondition(`${error.message}. Nothing was run.`);
    throw failedPrecondition(`the stored run cannot be read: ${(error as Error).message}. Nothing was run.`);
  }
}

/** A placeholder until the first store answer of a decision brings the conversation. */
function emptyConversation(id: string): Conversation {
  return {
    id,
    sessionId: '',
    status: ConversationStatus.CONVERSATION_STATUS_UNSPECIFIED,
    messages: [],
    pendingApprovals: [],
    messageCount: 0,
    watched: false,
    runRevision: 0,
    createdAt: undefined,
    updatedAt: undefined,
    usage: undefined,
  };
}

/** How an activation ended when not with its run's answer (TurnRunner.activate). */
type Unfinished =
  /** This replica is stopping: it handed the run to another replica (its lease released). */
  | { kind: 'handedBack'; reason: string; stored: boolean }
  /** Its lease was lost, or a store call got no answer: the run goes on from what is stored; `stored` when the request's message or decision surely is. */
  | { kind: 'unknown'; reason: string; stored: boolean };

/** An activation running here, to hand back on a drain. */
interface ActiveEntry {
  conversationId: string;
  controller: AbortController;
  handedBack: boolean;
}

/** The reply of a turn (CreateConversation, SendMessage): with `unsettled`, the rest is not to be read. */
export interface TurnReply {
  conversation: Conversation | undefined;
  result?: TurnResult;
  pipeline?: PipelineView;
  unsettled?: Unsettled;
}

function unsettledTurn(outcome: Unsettled): TurnReply {
  return { conversation: undefined, unsettled: outcome };
}

function unsettledDecision(outcome: Unsettled): ResolveApprovalResponse {
  return { decided: false, approval: undefined, conversation: undefined, unsettled: outcome };
}

/** Whether an approval stands decided by this request: its decision, claimed by it. */
function decidedAsAsked(approval: PendingApproval, asked: DecisionFacts & { approved: boolean }): boolean {
  // The decision's id says whose claim won (whatever the machine made of the decision, e.g. an
  // expiry that declines a question); a claim that named none (an earlier release's) is told
  // by its outcome, who decided and through which face.
  if (approval.decisionId !== undefined) return approval.decisionId === asked.decisionId;
  const status = asked.approved
    ? [
        ApprovalStatus.APPROVAL_STATUS_APPROVED,
        ApprovalStatus.APPROVAL_STATUS_EXECUTING,
        ApprovalStatus.APPROVAL_STATUS_DONE,
        ApprovalStatus.APPROVAL_STATUS_FAILED,
        ApprovalStatus.APPROVAL_STATUS_INTERRUPTED,
      ]
    : [asked.expired ? ApprovalStatus.APPROVAL_STATUS_EXPIRED : ApprovalStatus.APPROVAL_STATUS_REJECTED];
  return status.includes(approval.status) && approval.decidedBy === asked.decidedBy && (approval.via ?? undefined) === asked.via;
}

/** What a won claim decided, as the decisions counter names it. */
function decisionOutcome(status: ApprovalStatus): 'approved' | 'rejected' | 'expired' {
  if (status === ApprovalStatus.APPROVAL_STATUS_EXPIRED) return 'expired';
  return status === ApprovalStatus.APPROVAL_STATUS_REJECTED ? 'rejected' : 'approved';
}

/** ABORTED: one active run per conversation; the gateway answers it as busy (REST 409). */
function busy(conversationId: string) {
  return aborted(`conversation ${conversationId} is busy: a turn is running on it; send the message again when it has ended`);
}

function required(conversation: Conversation | undefined): Conversation {
  if (!conversation) throw internal('the store returned no conversation');
  return conversation;
}

/** The pauses of a run that wait for an answer to a server's question, as the approval resource shows them. */
function inputViews(run: StoredRun): InputView[] {
  return run.pending.flatMap((pause) =>
    pause.input
      ? [
          {
            approvalUuid: pause.approvalUuid,
            server: pause.input.server,
            questions: inputQuestions(pause.input),
            requestedSchema: requestedSchema(pause.input),
          },
        ]
      : [],
  );
}
