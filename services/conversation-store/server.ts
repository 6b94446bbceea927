import { z } from 'zod';
import type * as pb from '../../gen/ts/asg/store/v1/store.js';
import { ApprovalStatus, ApprovalTimeoutAction, ConversationStatus, MessageRole } from '../../gen/ts/asg/store/v1/store.js';
import { MAX_REASON_LENGTH } from '../common/decision-reason.js';
import { invalidArgument, notFound } from '../common/grpc/errors.js';
import { jsonObjectTextSchema } from '../common/json-value.js';
import { parseStepBody, RUN_STATUSES, STEP_KINDS } from '../common/run-steps.js';
import type { ServiceHandlers, StreamHandlerContext } from '../common/grpc/server.js';
import { EVENT_KINDS, type EventFeed, type EventKind, MAX_WATCH_KINDS } from './event-feed.js';
import { storedId } from './ids.js';
import { A2A_DIALECTS, approvalStatus, messageRole } from './records.js';
import { missing } from './sql/conversation-changes.js';
import {
  AUDIT_KIND_PATTERN,
  MAX_APPROVAL_EXPIRY_MS,
  MAX_AUDIT_ACTOR_LENGTH,
  MAX_AUDIT_DETAIL_BYTES,
  MAX_AUDIT_KIND_LENGTH,
  MAX_AUDIT_KINDS,
  MAX_AUDIT_SUBJECT_LENGTH,
  MAX_AUDIT_VIA_LENGTH,
  MAX_DUE_APPROVALS_LIMIT,
  MAX_LEASE_NAME_LENGTH,
  MAX_PRUNE_BATCH,
  MAX_LEASE_TTL_MS,
  MAX_MESSAGE_PAGE_SIZE,
  MAX_HISTORY_DIGEST_LENGTH,
  MAX_OWNER_LENGTH,
  MAX_PAGE_SIZE,
  MAX_TAKEOVER_LIMIT,
  MAX_WEBHOOK_ENDPOINT_LENGTH,
  type ConversationStorage,
} from './storage.js';

// The gRPC edge: each request is checked against store.proto's rules for its fields; rules that need stored data are the driver's.

const notBlank = (schema: z.ZodString, message: string) => schema.refine((value) => value.trim() !== '', message);
const required = (what: string) => notBlank(z.string(), `required (${what})`);
const maxChars = (max: number) => z.string().max(max, `at most ${max} characters`);
const intIn = (min: number, max: number, minMessage: string, maxMessage = `at most ${max}`) =>
  z.number().int().min(min, minMessage).max(max, maxMessage);
const conversationId = required('a conversation id');
const pushConfigId = required('a push-notification config id').max(200, 'at most 200 characters');
const approvalUuid = required('an approval uuid');
const historyDigest = required('a history digest').max(MAX_HISTORY_DIGEST_LENGTH, `at most ${MAX_HISTORY_DIGEST_LENGTH} characters`);
// Lower case, as stored: the run state that names them must match them character for character.
const newApprovalUuid = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, 'a UUID in lower case');

/** A proto enum value other than its UNSPECIFIED (0). */
const specified = <E extends Record<string, string | number>>(values: E, message: string) =>
  z.enum(values, { error: message }).refine((value) => value !== 0, message);
const role = specified(MessageRole, `one of ${messageRole.names.join(', ')}`);

const toolCall = z.object({
  id: z.string(),
  name: required('the tool name'),
  argumentsJson: jsonObjectTextSchema('the value').optional(),
  result: z.string().optional(),
  isError: z.boolean().optional(),
  rejected: z.boolean().optional(),
  reason: z.string().optional(),
});

const newMessage = z.object({
  role,
  content: z.string(),
  toolCall: toolCall.optional(),
  node: z.string().min(1, 'a node name, or absent').optional(),
});
const messages = z.array(newMessage);

// A run is the orchestrator's bytes: the store checks only what it keeps beside them.
const run = z.object({
  state: z.instanceof(Uint8Array, { error: 'bytes' }),
  schemaVersion: z.number().int().min(0, 'a schema version, 0 or more'),
  // Ignored on write: the store sets it (store.proto, UpdateRunRequest.run).
  revision: z.number().int(),
});
// The agents a proxy approval is held by, nearest first (store.proto, agent_chain).
const MAX_AGENT_CHAIN = 20;
const agentChain = z.array(z.string().min(1, 'an agent name, not empty')).max(MAX_AGENT_CHAIN, `at most ${MAX_AGENT_CHAIN} agents`);

const MAX_CONTEXT_ID = 256;
const a2aOrigin = z.object({
  dialect: z.enum(A2A_DIALECTS, { error: `one of ${A2A_DIALECTS.join(', ')}` }),
  contextId: z.string().min(1, 'a context id, not empty').max(MAX_CONTEXT_ID, `at most ${MAX_CONTEXT_ID} characters`),
});

// Runs with leases: who owns a turn, the replica across restarts, for how long.
const leaseName = (what: string) => notBlank(maxChars(MAX_LEASE_NAME_LENGTH), `required (${what})`);
const leaseOwner = leaseName('the lease owner, a replica boot id');
const ttlMs = intIn(1, MAX_LEASE_TTL_MS, `from 1 to ${MAX_LEASE_TTL_MS} milliseconds`, `at most ${MAX_LEASE_TTL_MS} milliseconds`);
const runLease = z.object(
  { owner: leaseOwner, node: leaseName('the node of the replica'), ttlMs },
  { error: 'a lease (owner, node, ttl_ms)' },
);

// Who decides or votes: a principal's name.
const decidedBy = notBlank(maxChars(MAX_AUDIT_ACTOR_LENGTH), 'a name, not blank (absent: anonymous)');
/** More voters than any team reviews a call with is a mistake in the policy, not a quorum. */
const MAX_QUORUM = 100;
// How long a new approval waits for a human, and what its expiry decides.
const TIMEOUT_ACTION = 'one of unspecified (reject), reject, approve';
// What every new approval says, from CreateApproval or UpdateRun.
const approvalFields = {
  toolCallId: z.string(),
  toolName: required('the tool to approve'),
  toolArgsJson: jsonObjectTextSchema('the value'),
  description: z.string(),
  remoteTaskId: z.string().optional(),
  remoteAgentName: z.string().optional(),
  agentChain,
};
const newApproval = z
  .object({
    uuid: newApprovalUuid,
    ...approvalFields,
    outcomeUnknown: z.boolean().optional(),
    replacesUuid: newApprovalUuid.optional(),
    expiresInMs: intIn(
      0,
      MAX_APPROVAL_EXPIRY_MS,
      'milliseconds, 0 or more (0: it never expires)',
      `at most ${MAX_APPROVAL_EXPIRY_MS} milliseconds (a year)`,
    ).optional(),
    onTimeout: z.enum(ApprovalTimeoutAction, { error: TIMEOUT_ACTION }).optional(),
    // A quorum is of 1 person or more, each named as decided_by is (a quorum of one still keeps its role and not_requester).
    quorum: z
      .object({
        required: intIn(1, MAX_QUORUM, 'at least 1 vote', `at most ${MAX_QUORUM} votes`),
        role: z.string().max(MAX_AUDIT_VIA_LENGTH, `at most ${MAX_AUDIT_VIA_LENGTH} characters`),
        notRequester: z.boolean(),
        requester: decidedBy.optional(),
      })
      .optional(),
    // After how long a pending approval escalates, and to whom: within an approval's lifetime bounds.
    escalation: z
      .object({
        afterMs: intIn(1, MAX_APPROVAL_EXPIRY_MS, 'milliseconds, 1 or more', `at most ${MAX_APPROVAL_EXPIRY_MS} milliseconds (a year)`),
        toRole: notBlank(maxChars(MAX_AUDIT_VIA_LENGTH), 'a role, not blank'),
      })
      .optional(),
  })
  // The approval it replaces is the earlier one of a call whose outcome is unknown (store.proto).
  .refine((approval) => approval.replacesUuid === undefined || approval.outcomeUnknown === true, {
    message: 'only an approval with outcome_unknown replaces another',
    path: ['replacesUuid'],
  });

// Who decides and through which face, as an audit entry names them.
const via = maxChars(MAX_AUDIT_VIA_LENGTH);
/** A decision's id is a caller's unique token (a UUID), never a document. */
const MAX_DECISION_ID_LENGTH = 128;
// A conversation's owner, a principal's name as the gateway authenticated it.
const owner = notBlank(maxChars(MAX_OWNER_LENGTH), 'a name, not blank (absent: no owner)').refine(
  (value) => !/\p{Cc}/u.test(value),
  'no control characters',
);
const approvalStatusValue = specified(ApprovalStatus, `one of ${approvalStatus.names.join(', ')}`);
/** What a write adds to its run's journal: a run id, a status, steps whose bodies fit the journal's format. */
const MAX_STEP_NODE_LENGTH = 1024;
const MAX_JOURNAL_STEPS = 10_000;
const epochMs = z.number().int().min(0, 'milliseconds since the epoch');
const runStep = z
  .object({
    kind: z.enum(STEP_KINDS, `one of ${STEP_KINDS.join(', ')}`),
    node: maxChars(MAX_STEP_NODE_LENGTH),
    startedAtMs: epochMs,
    durationMs: z.number().int().min(0, 'milliseconds, 0 or more'),
    bodyJson: z.string(),
    messageSeq: z.number().int().min(0, 'a message seq, 0 or more').optional(),
  })
  .superRefine((step, context) => {
    const parsed = parseStepBody(step.kind, step.bodyJson);
    if ('error' in parsed) context.addIssue({ code: 'custom', message: parsed.error, path: ['bodyJson'] });
  });
const runJournal = z.object({
  runId: newApprovalUuid,
  startedAtMs: epochMs,
  status: z.enum(RUN_STATUSES, `one of ${RUN_STATUSES.join(', ')}`),
  steps: z.array(runStep).max(MAX_JOURNAL_STEPS, `at most ${MAX_JOURNAL_STEPS} steps a write`),
});

const pageSize = intIn(0, MAX_PAGE_SIZE, `from 1 to ${MAX_PAGE_SIZE}, or 0 for the default`);
const auditKind = maxChars(MAX_AUDIT_KIND_LENGTH).regex(AUDIT_KIND_PATTERN, 'dotted lower-case words, e.g. approval.decided');

/** A JSON object (not an array, a string or null), as an audit entry's details are. */
function isJsonObject(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

const auditEntry = z.object(
  {
    kind: auditKind,
    actor: maxChars(MAX_AUDIT_ACTOR_LENGTH),
    via,
    subject: maxChars(MAX_AUDIT_SUBJECT_LENGTH),
    detailJson: z
      .string()
      .refine((text) => Buffer.byteLength(text, 'utf8') <= MAX_AUDIT_DETAIL_BYTES, `at most ${MAX_AUDIT_DETAIL_BYTES} bytes`)
      .refine(isJsonObject, 'a JSON object'),
  },
  { error: 'an audit entry (kind, actor, via, subject, detail_json)' },
);

const eventKinds = Object.keys(EVENT_KINDS) as EventKind[];
const eventKind = z.enum(eventKinds, { error: `a kind of event: one of ${eventKinds.join(', ')}` });

const webhookEndpoint = notBlank(maxChars(MAX_WEBHOOK_ENDPOINT_LENGTH), "required (the endpoint's name)");

// PublishEvent carries live-only events; the stored kinds are the store's own to write, in the
// transaction of their change (store.proto, ConversationEvent).
const LIVE_KINDS: readonly string[] = ['toolCallStarted', 'toolCallFinished', 'textDelta'];
const STORED_KINDS = Object.values(EVENT_KINDS).filter((kind) => !LIVE_KINDS.includes(kind));
const ONE_LIVE_KIND = 'exactly one of tool_call_started, tool_call_finished, text_delta (stored kinds are written by the store itself)';
// Loose: the refinement must see every field the request carries, the stored kinds among them.
const liveEvent = z
  .looseObject(
    {
      conversationId,
      toolCallStarted: toolCall.optional(),
      toolCallFinished: toolCall.optional(),
      textDelta: z
        .object({ text: z.string().min(1, 'the text, not empty'), node: z.string().min(1, 'a node name, or absent').optional() })
        .optional(),
    },
    { error: 'an event' },
  )
  .refine((event) => {
    const record = event as Record<string, unknown>;
    return LIVE_KINDS.filter((kind) => record[kind] !== undefined).length === 1 && STORED_KINDS.every((kind) => record[kind] === undefined);
  }, ONE_LIVE_KIND);

/** How old data must be before retention or pruning removes it: 1 ms or more. */
const ageMs = z.number().int().min(1, 'milliseconds, 1 or more');
const pruneLimit = intIn(1, MAX_PRUNE_BATCH, `from 1 to ${MAX_PRUNE_BATCH}`);
const dueApprovals = z.object({ limit: intIn(1, MAX_DUE_APPROVALS_LIMIT, `from 1 to ${MAX_DUE_APPROVALS_LIMIT}`) });

const schemas = {
  createConversation: z
    .object({
      sessionId: z.string().regex(/^[0-9a-f]{8}$/, '8 lowercase hex characters'),
      systemPrompt: z.string(),
      a2aOrigin: a2aOrigin.optional(),
      owner: owner.optional(),
      firstMessage: newMessage.optional(),
      lease: runLease.optional(),
    })
    .refine((request) => request.lease === undefined || request.firstMessage !== undefined, {
      message: 'a lease is for a first turn: only with first_message',
      path: ['lease'],
    }),
  getConversation: z
    .object({
      id: conversationId,
      includeMessages: z.boolean(),
      messageLimit: intIn(0, MAX_MESSAGE_PAGE_SIZE, `from 1 to ${MAX_MESSAGE_PAGE_SIZE}, or 0 for every message`).optional(),
      beforeMessageId: z.string().optional(),
      afterMessageId: z.string().optional(),
    })
    .refine((request) => !request.beforeMessageId || !request.afterMessageId, {
      message: 'at most one of before_message_id and after_message_id',
      path: ['afterMessageId'],
    })
    .refine(
      (request) => (!request.beforeMessageId && !request.afterMessageId) || (request.includeMessages && Boolean(request.messageLimit)),
      {
        message: 'a cursor needs include_messages and a message_limit',
        path: ['messageLimit'],
      },
    ),
  listConversations: z.object({ pageSize, pageToken: z.string(), owner: owner.optional() }),
  startTurn: z.object({ conversationId, message: newMessage, lease: runLease.optional() }),
  appendMessages: z.object({
    conversationId,
    messages,
    status: z
      .enum(ConversationStatus, { error: 'one of unspecified (keep), active, completed' })
      .refine((value) => value !== ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL, 'not waiting_approval: CreateApproval sets it'),
    returnConversation: z.boolean(),
    endsTurn: z.boolean().optional(),
    leaseOwner: leaseOwner.optional(),
    journal: runJournal.optional(),
  }),
  createApproval: z.object({ conversationId, ...approvalFields, messages }),
  getApproval: z.object({ uuid: approvalUuid }),
  claimApproval: z
    .object({
      uuid: approvalUuid,
      approved: z.boolean(),
      messages,
      clearRun: z.boolean(),
      alsoReject: z.array(z.object({ uuid: approvalUuid, messages })),
      reason: z.string().max(MAX_REASON_LENGTH, `at most ${MAX_REASON_LENGTH} characters`).optional(),
      continuesTurn: z.boolean().optional(),
      expectedRunRevision: z.number().int().min(0).optional(),
      lease: runLease.optional(),
      decidedBy: decidedBy.optional(),
      via: via.optional(),
      editedArgsJson: jsonObjectTextSchema('the value').optional(),
      expired: z.boolean().optional(),
      decisionId: notBlank(maxChars(MAX_DECISION_ID_LENGTH), 'an id, not blank (absent: none)').optional(),
      journal: runJournal.optional(),
    })
    .refine((request) => !request.approved || request.alsoReject.length === 0, {
      message: 'only a rejection rejects other approvals with it',
      path: ['alsoReject'],
    })
    .refine((request) => request.approved || request.editedArgsJson === undefined, {
      message: 'only an approval runs the call with edited arguments',
      path: ['editedArgsJson'],
    })
    .refine((request) => !request.approved || !request.expired, {
      message: 'an expiry that approves is an approval by "timeout", not expired',
      path: ['expired'],
    }),
  startApprovalExecution: z.object({ uuid: approvalUuid }),
  finishApprovalExecution: z.object({ uuid: approvalUuid, success: z.boolean(), messages }),
  listUnfinishedApprovals: z.object({ conversationId }),
  listPendingApprovals: z.object({ pageSize, pageToken: z.string() }),
  markApprovalInterrupted: z.object({
    uuid: approvalUuid,
    minAgeMs: z.number().int().min(0, 'milliseconds, 0 or more'),
    messages,
  }),
  updateRun: z.object({
    conversationId,
    messages,
    approvals: z.array(newApproval),
    run: run.optional(),
    expectedRevision: z.number().int().min(0, 'a revision, 0 or more'),
    returnConversation: z.boolean(),
    interruptedApproval: approvalUuid.optional(),
    leaseOwner: leaseOwner.optional(),
    journal: runJournal.optional(),
  }),
  watchEvents: z.object({
    // Empty: every conversation.
    conversationId: z.string(),
    afterId: z.number().int().min(0, 'an event id, or 0 for live events only'),
    // Empty: every kind.
    kinds: z.array(eventKind).max(MAX_WATCH_KINDS, `at most ${MAX_WATCH_KINDS} kinds`),
  }),
  publishEvent: z.object({ event: liveEvent }),
  renewRunLease: z.object({ conversationId, lease: runLease }),
  releaseRunLease: z.object({ conversationId, owner: leaseOwner }),
  takeOverRuns: z.object({
    lease: runLease,
    limit: intIn(1, MAX_TAKEOVER_LIMIT, `from 1 to ${MAX_TAKEOVER_LIMIT}`),
    givenUp: z.array(z.string().max(64, 'a conversation id')).max(MAX_TAKEOVER_LIMIT, `at most ${MAX_TAKEOVER_LIMIT} conversation ids`),
  }),
  listApprovals: z.object({
    statuses: z.array(approvalStatusValue).max(16, 'at most 16 statuses'),
    // Empty: every conversation.
    conversationId: z.string(),
    pageSize,
    pageToken: z.string(),
  }),
  listDueApprovals: dueApprovals,
  escalateDueApprovals: dueApprovals,
  appendAudit: z.object({
    entry: auditEntry,
    // A policy's decision on a call, told as its conversation's approval_resolved event too.
    policyDecision: z
      .object({
        conversationId,
        toolCallId: z.string().max(MAX_AUDIT_SUBJECT_LENGTH),
        toolName: required('the tool decided'),
        toolArgsJson: jsonObjectTextSchema('the value'),
        approved: z.boolean(),
        reason: z.string().max(MAX_AUDIT_DETAIL_BYTES).optional(),
        rule: notBlank(maxChars(MAX_AUDIT_ACTOR_LENGTH), "the rule's name"),
      })
      .optional(),
  }),
  listAudit: z.object({
    kinds: z.array(auditKind).max(MAX_AUDIT_KINDS, `at most ${MAX_AUDIT_KINDS} kinds`),
    pageSize,
    pageToken: z.string(),
  }),
  claimWebhookCursor: z.object({ endpoint: webhookEndpoint, lease: runLease }),
  advanceWebhookCursor: z.object({
    endpoint: webhookEndpoint,
    owner: leaseOwner,
    lastEventId: z.number().int().min(0, 'an event id, 0 or more'),
    ttlMs,
  }),
  setPushConfig: z.object({
    config: z.object({
      conversationId,
      id: pushConfigId,
      // The gateway checks the url's scheme and host (SSRF) and the deliverer again before each POST.
      url: z.url({ protocol: /^https?$/ }).max(2048, 'at most 2048 characters'),
      token: maxChars(1024),
      dialect: z.enum(['v0.3', 'v1.0'], 'one of v0.3, v1.0'),
    }),
  }),
  getPushConfig: z.object({ conversationId, id: pushConfigId }),
  listPushConfigs: z.object({ conversationId }),
  deletePushConfig: z.object({ conversationId, id: pushConfigId }),
  recordHistoryDigest: z.object({ conversationId, digest: historyDigest }),
  findConversationByHistory: z.object({ digest: historyDigest, owner: owner.optional() }),
  deleteConversation: z.object({ id: conversationId, actor: notBlank(maxChars(MAX_AUDIT_ACTOR_LENGTH), 'required (who deletes it)'), via }),
  listIdleConversations: z.object({ idleForMs: ageMs, limit: intIn(1, MAX_PAGE_SIZE, `from 1 to ${MAX_PAGE_SIZE}`) }),
  pruneEvents: z.object({ olderThanMs: ageMs, limit: pruneLimit }),
  claimBackgroundLease: z.object({ name: leaseName('the name of the work'), lease: runLease }),
  pruneAudit: z.object({ olderThanMs: ageMs, limit: pruneLimit }),
  listRuns: z.object({ conversationId, pageSize, pageToken: z.string() }),
  getRun: z.object({ runId: required('a run id') }),
  pruneRunJournals: z.object({ olderThanMs: ageMs, limit: pruneLimit }),
  forkConversation: z.object({
    sourceConversationId: conversationId,
    upToSeq: z.number().int().nonnegative('0 or more'),
    owner: owner.optional(),
    sessionId: z.string().regex(/^[0-9a-f]{8}$/, '8 lowercase hex characters'),
    lease: runLease.optional(),
  }),
} satisfies Record<keyof typeof pb.ConversationStoreServiceService, z.ZodType>;

/** camelCase path of the decoded message → the proto field names callers know. */
function fieldPath(path: PropertyKey[]): string {
  return path
    .map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part).replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)}`))
    .join('')
    .replace(/^\./, '');
}

/** The request itself when it satisfies its schema; INVALID_ARGUMENT naming every bad field. */
function validated<T>(method: keyof typeof schemas, request: T): T {
  const result = schemas[method].safeParse(request);
  if (result.success) return request;
  const problems = result.error.issues.map((issue) => `${fieldPath(issue.path) || '(request)'}: ${issue.message}`);
  const rpc = method.charAt(0).toUpperCase() + method.slice(1);
  throw invalidArgument(`invalid ${rpc} request: ${problems.join('; ')}`);
}

type Handler = (request: unknown, ctx: StreamHandlerContext) => unknown;

export function conversationStoreHandlers(
  storage: ConversationStorage,
  feed: EventFeed,
): ServiceHandlers<typeof pb.ConversationStoreServiceService> {
  // Watched by this replica's watchers (the feed) or another replica's (the driver's `watched`).
  const watched = (conversation: pb.Conversation): pb.Conversation => ({
    ...conversation,
    watched: conversation.watched || feed.isWatched(conversation.id),
  });
  // Read right after a change so the caller needs no second round trip for it.
  const conversationOf = async (id: string) => watched(await storage.getConversation({ id, includeMessages: true }));
  const conversationIf = async (wanted: boolean, id: string) => (wanted ? await conversationOf(id) : undefined);
  const handlers: ServiceHandlers<typeof pb.ConversationStoreServiceService> = {
    createConversation: async (request) => ({ conversation: watched(await storage.createConversation(request)) }),
    getConversation: async (request) => ({ conversation: watched(await storage.getConversation(request)) }),
    listConversations: async (request) => storage.listConversations(request),
    startTurn: async (request, { request: caller }) => {
      const start = await storage.startTurn(request);
      // The first call of a turn: its caller and its own log line learn the session id from the answer.
      if (!caller.sessionId && start.conversation?.sessionId) caller.sessionId = start.conversation.sessionId;
      return { ...start, conversation: watched(start.conversation) };
    },
    appendMessages: async (request) => ({
      messages: await storage.appendMessages(request),
      conversation: await conversationIf(request.returnConversation, request.conversationId),
    }),
    createApproval: async (request) => {
      const approval = await storage.createApproval(request);
      return { approval, conversation: await conversationOf(approval.conversationId) };
    },
    getApproval: async (request) => {
      const approval = await storage.getApproval(request.uuid);
      const { sessionId, run } = await storage.getConversation({ id: approval.conversationId, includeMessages: false });
      return { approval, sessionId, run };
    },
    claimApproval: async (request) => {
      const claim = await storage.claimApproval(request);
      return {
        ...claim,
        tooLate: claim.tooLate ?? false,
        voteRecorded: claim.voteRecorded ?? false,
        conversation: await conversationOf(claim.approval.conversationId),
      };
    },
    startApprovalExecution: async (request) => ({ approval: await storage.startApprovalExecution(request.uuid) }),
    finishApprovalExecution: async (request) => {
      const approval = await storage.finishApprovalExecution(request);
      return { approval, conversation: await conversationOf(approval.conversationId) };
    },
    listPendingApprovals: async (request) => storage.listPendingApprovals(request),
    listUnfinishedApprovals: async (request) => ({ approvals: await storage.listUnfinishedApprovals(request.conversationId) }),
    markApprovalInterrupted: async (request) => storage.markApprovalInterrupted(request),
    updateRun: async (request) => ({
      revision: await storage.updateRun(request),
      conversation: await conversationIf(request.returnConversation, request.conversationId),
    }),
    watchEvents: async function* (request, ctx) {
      const { afterId, storedOnly } = request;
      // Checked against EVENT_KINDS by its schema.
      const kinds = request.kinds as EventKind[];
      // NOT_FOUND for an unknown conversation; its stored id is the key its events carry.
      const conversationId =
        request.conversationId === '' ? '' : (await storage.getConversation({ id: request.conversationId, includeMessages: false })).id;
      for await (const event of feed.watch({ conversationId, afterId, storedOnly, kinds }, ctx.signal)) {
        yield { event };
        // Nothing follows a deletion: the watch of that one conversation ends with it (whatever kinds it asked for, the
        // feed sends it its conversation_deleted).
        if (conversationId !== '' && event.conversationDeleted) return;
      }
    },
    publishEvent: async (request) => {
      const event = request.event!;
      // Costs no database read: a malformed id names no conversation, as everywhere in the store.
      const id = storedId(event.conversationId);
      if (id === undefined) throw missing('conversation', event.conversationId);
      feed.publish({ ...event, conversationId: id, at: event.at ?? new Date() });
      return {};
    },
    renewRunLease: async (request) => ({ held: await storage.renewRunLease(request.conversationId, request.lease!) }),
    releaseRunLease: async (request) => ({ released: await storage.releaseRunLease(request.conversationId, request.owner) }),
    takeOverRuns: async (request) => ({ runs: await storage.takeOverRuns(request.lease!, request.limit, request.givenUp) }),
    listApprovals: async (request) => storage.listApprovals(request),
    listDueApprovals: async (request) => ({ approvals: await storage.listDueApprovals(request.limit) }),
    escalateDueApprovals: async (request) => ({ approvals: await storage.escalateDueApprovals(request.limit) }),
    appendAudit: async (request) => ({ entry: await storage.appendAudit(request.entry!, request.policyDecision) }),
    listAudit: async (request) => storage.listAudit(request),
    claimWebhookCursor: async (request) => storage.claimWebhookCursor(request.endpoint, request.lease!),
    advanceWebhookCursor: async (request) => ({ held: await storage.advanceWebhookCursor(request) }),
    setPushConfig: async (request) => ({
      config: await storage.setPushConfig({ ...(request.config as pb.PushConfig), createdAt: undefined }),
    }),
    getPushConfig: async (request) => {
      const { conversationId: id, id: configId } = request;
      const config = await storage.getPushConfig(id, configId);
      if (!config) throw notFound(`push-notification config ${configId} of task ${id} not found`);
      return { config };
    },
    listPushConfigs: async (request) => ({ configs: await storage.listPushConfigs(request.conversationId) }),
    deletePushConfig: async (request) => ({ deleted: await storage.deletePushConfig(request.conversationId, request.id) }),
    recordHistoryDigest: async (request) => {
      await storage.recordHistoryDigest(request.conversationId, request.digest);
      return {};
    },
    deleteConversation: async (request) => ({ rejectedApprovals: await storage.deleteConversation(request) }),
    listIdleConversations: async (request) => ({
      conversationIds: await storage.listIdleConversations(request.idleForMs, request.limit),
    }),
    pruneEvents: async (request) => storage.pruneEvents(request.olderThanMs, request.limit),
    claimBackgroundLease: async (request) => ({ held: await storage.claimBackgroundLease(request.name, request.lease!) }),
    pruneAudit: async (request) => ({ removed: await storage.pruneAudit(request.olderThanMs, request.limit) }),
    findConversationByHistory: async (request) => {
      const found = await storage.findConversationByHistory(request.digest, request.owner);
      return found === undefined ? {} : { conversationId: found };
    },
    listRuns: async (request) => storage.listRuns(request),
    getRun: async (request) => storage.getRun(request.runId),
    pruneRunJournals: async (request) => storage.pruneRunJournals(request.olderThanMs, request.limit),
    forkConversation: async (request) => ({ conversation: watched(await storage.forkConversation(request)) }),
  };
  // Every request is checked against its schema before its handler runs.
  const checked = Object.entries(handlers as Record<string, Handler>).map(([method, handler]) => [
    method,
    (request: unknown, ctx: StreamHandlerContext) => handler(validated(method as keyof typeof schemas, request), ctx),
  ]);
  return Object.fromEntries(checked) as typeof handlers;
}
