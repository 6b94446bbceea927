import type { GenerateRequest, GenerateResponse, GenerateStreamResponse } from '../../gen/ts/asg/llm/v1/llm.js';
import {
  ApprovalStatus,
  ConversationStatus,
  MessageRole,
  type AppendAuditRequest,
  type AppendMessagesRequest,
  type AuditEntry,
  type ClaimApprovalRequest,
  type Conversation,
  type ConversationEvent,
  type FinishApprovalExecutionRequest,
  type Message,
  type NewMessage,
  type PendingApproval,
  type PublishEventRequest,
  type UpdateRunRequest,
} from '../../gen/ts/asg/store/v1/store.js';
import type { CallToolRequest, CallToolResponse, Tool } from '../../gen/ts/asg/tools/v1/tools.js';
import { callHash } from '../../services/common/call-hash.js';
import { jsonObjectOf } from '../../services/common/json-value.js';
import { currentContext } from '../../services/common/context.js';
import type { CallOpts } from '../../services/common/grpc/client.js';
import { GrpcStatus, RpcError } from '../../services/common/grpc/errors.js';
import { configSchema } from '../../services/common/config/schema.js';
import { configSlice, type OrchestratorConfig } from '../../services/common/config/slices.js';
import { createLogger } from '../../services/common/log.js';
import type { OrchestratorClients } from '../../services/orchestrator/clients.js';
import type { ExpiryPolicy } from '../../services/orchestrator/domain/expiry.js';
import type { AgentNode } from '../../services/orchestrator/domain/tree.js';
import { RunLeases } from '../../services/orchestrator/leases.js';
import { RunDriver, type Activation } from '../../services/orchestrator/run/driver.js';
import { AgentIo } from '../../services/orchestrator/run/io.js';
import { freshRun } from '../../services/orchestrator/run/machine.js';
import type { MachineEnv, RunAnswer } from '../../services/orchestrator/run/types.js';
import { ToolCatalogue } from '../../services/orchestrator/tool-catalogue.js';

/**
 * A fake of the services the orchestrator's run talks to (OrchestratorClients), for testing
 * the run driver and its I/O without a network. The store keeps one conversation in memory
 * with the contract the driver relies on: UpdateRun is a compare-and-set on the run's revision
 * (ABORTED when another write came first), messages get their seq, approvals are created
 * pending and decided once. The model answers each call with the next scripted turn, through
 * Generate or GenerateStream alike. Every call honours the deadline of the request being
 * served, as the real clients do (grpc/client.ts effectiveDeadline): one made after it passed
 * fails with DEADLINE_EXCEEDED.
 */

export const CONVERSATION = '6f1c2b3a-0000-4000-8000-000000000001';
/** The run a test's user message starts (turns.ts picks a random one). */
export const RUN_ID = '0c7d5e8f-0000-4000-8000-000000000002';

const testConfig: OrchestratorConfig = configSlice(configSchema.parse({ data_dir: '/tmp/asg-unused' }), 'orchestrator');
export const testLog = createLogger('orchestrator-run-test');

/** One model call as the fake model received it. */
export interface ModelCall {
  request: GenerateRequest;
  opts: CallOpts | undefined;
  streamed: boolean;
}

/** One model answer: the stream's events, or a function that produces them (and may wait or fail). */
export type ModelTurn = readonly GenerateStreamResponse[] | ((call: ModelCall) => AsyncIterable<GenerateStreamResponse>);

export const delta = (textDelta: string): GenerateStreamResponse => ({ textDelta });
export const finish = (finishReason = 'stop', inputTokens = 3, outputTokens = 4): GenerateStreamResponse => ({
  finish: { finishReason, usage: { inputTokens, outputTokens } },
});
export const toolCall = (
  id: string,
  name: string,
  args: Record<string, unknown> = {},
  providerMetadataJson?: string,
): GenerateStreamResponse => ({
  toolCall: { id, name, argumentsJson: JSON.stringify(args), ...(providerMetadataJson !== undefined && { providerMetadataJson }) },
});

const listTool: Tool = {
  name: 'resources_list',
  description: 'Lists resources',
  inputSchema: { type: 'object', properties: {} },
  destructive: false,
  server: 'resources',
};
const deleteTool: Tool = {
  name: 'resources_delete',
  description: 'Deletes a resource',
  inputSchema: { type: 'object', properties: { id: { type: 'string' } } },
  destructive: true,
  server: 'resources',
};

export interface FakeMeshOptions {
  /** The model's answers, one per call, in order. */
  model?: ModelTurn[];
  tools?: Tool[];
  /** The tool broker's answer; by default every call answers ["alpha"]. */
  callTool?: (request: CallToolRequest) => Promise<Pick<CallToolResponse, 'text' | 'isError'>>;
  /** How PublishEvent answers (it may hang, fail or throw at once). */
  publishEvent?: (request: PublishEventRequest, opts?: CallOpts) => Promise<object>;
  /** Whether someone watches the conversation (its model calls then stream). */
  watched?: boolean;
  /** The user's message, the conversation's last when the run starts. */
  userMessage?: string;
}

export class FakeMesh {
  /** Every call, in the order it was made: "store.updateRun", "llm.generateStream", "tools.callTool resources_list"… */
  readonly calls: string[] = [];
  readonly modelCalls: ModelCall[] = [];
  readonly toolCalls: CallToolRequest[] = [];
  /** Every ClaimApproval request, in order. */
  readonly claims: ClaimApprovalRequest[] = [];
  readonly published: { event: ConversationEvent; opts?: CallOpts }[] = [];
  readonly writes: UpdateRunRequest[] = [];
  readonly appends: AppendMessagesRequest[] = [];
  readonly finished: FinishApprovalExecutionRequest[] = [];
  readonly conversation: Conversation;
  readonly approvals = new Map<string, PendingApproval>();
  /** Runs before the store handles the call: a test delays it, or changes the store under it. */
  readonly before: {
    updateRun?: (request: UpdateRunRequest) => Promise<void> | void;
    appendMessages?: (request: AppendMessagesRequest) => Promise<void> | void;
    appendAudit?: (request: AppendAuditRequest) => Promise<void> | void;
  } = {};
  /** Every audit entry appended (AppendAudit), in order. */
  readonly audit: AuditEntry[] = [];
  readonly clients: OrchestratorClients;
  private readonly turns: ModelTurn[];

  constructor(options: FakeMeshOptions = {}) {
    this.turns = [...(options.model ?? [])];
    this.conversation = {
      id: CONVERSATION,
      sessionId: '0a1b2c3d',
      status: ConversationStatus.CONVERSATION_STATUS_ACTIVE,
      messages: [],
      pendingApprovals: [],
      messageCount: 0,
      watched: options.watched ?? false,
      runRevision: 0,
      createdAt: new Date(0),
      updatedAt: new Date(0),
      usage: undefined,
    };
    this.append([{ role: MessageRole.MESSAGE_ROLE_USER, content: options.userMessage ?? 'list resources' }]);
    this.clients = {
      llm: {
        generate: (request: GenerateRequest, opts?: CallOpts) =>
          this.unary('llm.generate', async () => unaryReply(this.answer({ request, opts, streamed: false }), request.model)),
        generateStream: (request: GenerateRequest, opts?: CallOpts) => {
          this.calls.push('llm.generateStream');
          return this.answer({ request, opts, streamed: true });
        },
      },
      tools: {
        listTools: () => this.unary('tools.listTools', async () => ({ tools: options.tools ?? [listTool, deleteTool] })),
        callTool: (request: CallToolRequest) =>
          this.unary(`tools.callTool ${request.name}`, async () => {
            this.toolCalls.push(request);
            return { server: 'resources', ...(await (options.callTool ?? (async () => ({ text: '["alpha"]', isError: false })))(request)) };
          }),
      },
      store: {
        getConversation: () => this.unary('store.getConversation', async () => ({ conversation: this.snapshot() })),
        appendMessages: (request: AppendMessagesRequest) =>
          this.unary('store.appendMessages', async () => {
            await this.before.appendMessages?.(request);
            this.appends.push(request);
            return { messages: this.append(request.messages), conversation: request.returnConversation ? this.snapshot() : undefined };
          }),
        updateRun: (request: UpdateRunRequest) =>
          this.unary('store.updateRun', async () => {
            await this.before.updateRun?.(request);
            if (request.expectedRevision !== this.conversation.runRevision) {
              throw new RpcError(
                GrpcStatus.ABORTED,
                `the run of conversation ${CONVERSATION} is at revision ${this.conversation.runRevision}, not ${request.expectedRevision}`,
                '/asg.store.v1.ConversationStoreService/UpdateRun',
              );
            }
            this.writes.push(request);
            this.append(request.messages);
            for (const approval of request.approvals) this.addApproval(approval);
            this.storeRun(request.run);
            return { revision: this.conversation.runRevision, conversation: request.returnConversation ? this.snapshot() : undefined };
          }),
        appendAudit: (request: AppendAuditRequest) =>
          this.unary('store.appendAudit', async () => {
            await this.before.appendAudit?.(request);
            this.audit.push(request.entry!);
            return { entry: request.entry };
          }),
        publishEvent: (request: PublishEventRequest, opts?: CallOpts) => {
          this.published.push({ event: request.event!, opts });
          return (options.publishEvent ?? (async () => ({})))(request, opts);
        },
        claimApproval: (request: ClaimApprovalRequest) =>
          this.unary('store.claimApproval', async () => {
            this.claims.push(request);
            const approval = this.approval(request.uuid);
            if (approval.status !== ApprovalStatus.APPROVAL_STATUS_PENDING)
              return { claimed: false, approval, conversation: this.snapshot() };
            approval.status = request.approved ? ApprovalStatus.APPROVAL_STATUS_APPROVED : ApprovalStatus.APPROVAL_STATUS_REJECTED;
            this.append(request.messages);
            if (request.clearRun) this.storeRun(undefined);
            this.refreshPending();
            return { claimed: true, approval: { ...approval }, conversation: this.snapshot() };
          }),
        startApprovalExecution: ({ uuid }: { uuid: string }) =>
          this.unary('store.startApprovalExecution', async () => {
            const approval = this.approval(uuid);
            approval.status = ApprovalStatus.APPROVAL_STATUS_EXECUTING;
            return { approval: { ...approval } };
          }),
        finishApprovalExecution: (request: FinishApprovalExecutionRequest) =>
          this.unary('store.finishApprovalExecution', async () => {
            this.finished.push(request);
            const approval = this.approval(request.uuid);
            approval.status = request.success ? ApprovalStatus.APPROVAL_STATUS_DONE : ApprovalStatus.APPROVAL_STATUS_FAILED;
            this.append(request.messages);
            return { approval: { ...approval }, conversation: this.snapshot() };
          }),
      },
    } as unknown as OrchestratorClients;
  }

  /** Stores a run as another request would: the revision goes up. */
  storeRun(run: UpdateRunRequest['run']): void {
    this.conversation.runRevision += 1;
    this.conversation.run = run && { ...run, revision: this.conversation.runRevision };
  }

  /** A pending approval of a gated call, as a pause of the run stored it. */
  addApproval(
    approval: Pick<PendingApproval, 'uuid' | 'toolCallId' | 'toolName' | 'toolArgsJson'> & Partial<PendingApproval>,
  ): PendingApproval {
    const stored: PendingApproval = {
      conversationId: CONVERSATION,
      description: `${approval.toolName} on resources`,
      createdAt: new Date(0),
      updatedAt: new Date(0),
      status: ApprovalStatus.APPROVAL_STATUS_PENDING,
      argsHash: callHash(approval.toolName, jsonObjectOf(approval.toolArgsJson)),
      votes: [],
      agentChain: [],
      ...approval,
    };
    this.approvals.set(stored.uuid, stored);
    this.refreshPending();
    return { ...stored };
  }

  /** The conversation as the store returns it: a copy. */
  snapshot(): Conversation {
    return structuredClone(this.conversation);
  }

  /** The next scripted answer; a call beyond the script fails the run loudly. */
  private answer(call: ModelCall): AsyncIterable<GenerateStreamResponse> {
    this.modelCalls.push(call);
    const turn = this.turns.shift();
    if (!turn) throw new Error(`the model was called more often than scripted (call ${this.modelCalls.length})`);
    if (typeof turn === 'function') return turn(call);
    return (async function* () {
      yield* turn;
    })();
  }

  /** A unary call as the real client makes it: refused once the served request's deadline passed. */
  private async unary<T>(name: string, handle: () => Promise<T>): Promise<T> {
    this.calls.push(name);
    const deadline = currentContext()?.deadline;
    if (deadline !== undefined && Date.now() >= deadline)
      throw new RpcError(GrpcStatus.DEADLINE_EXCEEDED, `${name}: deadline exceeded`, name);
    return handle();
  }

  /** Stores messages as the store appends them: each gets its seq. */
  append(messages: readonly NewMessage[]): Message[] {
    const added = messages.map(
      (message): Message => ({
        ...message,
        id: `m${this.conversation.messageCount + 1}`,
        seq: ++this.conversation.messageCount,
        createdAt: new Date(0),
      }),
    );
    this.conversation.messages.push(...added);
    return added;
  }

  private approval(uuid: string): PendingApproval {
    const approval = this.approvals.get(uuid);
    if (!approval)
      throw new RpcError(GrpcStatus.NOT_FOUND, `approval ${uuid} not found`, '/asg.store.v1.ConversationStoreService/GetApproval');
    return approval;
  }

  private refreshPending(): void {
    const pending = [...this.approvals.values()]
      .filter((approval) => approval.status === ApprovalStatus.APPROVAL_STATUS_PENDING)
      .map((approval) => ({ ...approval }));
    this.conversation.pendingApprovals = pending;
    this.conversation.pendingApproval = pending[0];
    this.conversation.status =
      pending.length > 0 ? ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL : ConversationStatus.CONVERSATION_STATUS_ACTIVE;
  }
}

/** What Generate answers for the same events: the text joined, the calls in order, the finish's reason and usage. */
async function unaryReply(events: AsyncIterable<GenerateStreamResponse>, model: string): Promise<GenerateResponse> {
  let text = '';
  const toolCalls: GenerateResponse['toolCalls'] = [];
  for await (const event of events) {
    if (event.textDelta !== undefined) text += event.textDelta;
    if (event.toolCall) toolCalls.push(event.toolCall);
    if (event.finish) return { text, toolCalls, finishReason: event.finish.finishReason, usage: event.finish.usage };
  }
  throw new RpcError(
    GrpcStatus.INTERNAL,
    `the answer of model ${model} ended without its finish event`,
    '/asg.llm.v1.LlmGatewayService/Generate',
  );
}

/** Simple mode: no agent tree, the configured model with no A2A agents. */
export function simpleEnv(): MachineEnv {
  return {
    root: undefined,
    simple: { model: testConfig.llm.model, a2aTools: [] },
    defaultModel: testConfig.llm.model,
    maxModelCalls: testConfig.chat.max_llm_iterations,
    history: {
      systemPrompt: testConfig.prompt,
      maxTokens: testConfig.chat.max_tokens,
      compactionStrategy: testConfig.chat.compaction_strategy,
    },
  };
}

/** An agent tree rooted at `root`. */
export function treeEnv(root: AgentNode): MachineEnv {
  return { ...simpleEnv(), root };
}

/** The driver as turns.ts builds it, over the fake mesh. */
export function driverOf(mesh: FakeMesh, env: MachineEnv, expiry?: ExpiryPolicy): RunDriver {
  return new RunDriver(
    mesh.clients,
    testLog,
    new AgentIo(mesh.clients, testLog),
    new ToolCatalogue(mesh.clients),
    env,
    new RunLeases('test-node', testConfig.runs.lease_ttl, mesh.clients, testLog),
    expiry,
  );
}

/** A user message's run, as turns.ts startTurn begins it (the store has appended the message). */
export async function startTurn(
  mesh: FakeMesh,
  env: MachineEnv,
  driver = driverOf(mesh, env),
): Promise<{ answer: RunAnswer; activation: Activation }> {
  const conversation = mesh.snapshot();
  const activation: Activation = { conversationId: CONVERSATION, watched: conversation.watched, conversation, holdsTurn: true };
  const text = conversation.messages.at(-1)!.content;
  const answer = await driver.drive(
    freshRun(env.root ? 'tree' : 'simple', conversation.runRevision),
    { kind: 'userMessage', runId: RUN_ID, activation: 'activation-1', text },
    activation,
  );
  return { answer, activation };
}
