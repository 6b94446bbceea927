import { z } from 'zod';
import type { OrchestratorServiceService, Requester } from '../../gen/ts/asg/orchestrator/v1/orchestrator.js';
import { ROLES } from '../common/config/schema.js';
import type { A2aOrigin } from '../../gen/ts/asg/store/v1/store.js';
import { notFound, invalidArgument } from '../common/grpc/errors.js';
import type { UnaryHandlers } from '../common/grpc/server.js';
import { givenReason, reasonProblem } from '../common/decision-reason.js';
import { MAX_PRINCIPAL_LENGTH } from '../common/principal-id.js';
import { readJsonObjectText } from '../common/json-value.js';
import type { DecisionInput, TurnRunner } from './turns.js';

const uuid = z.uuid();
const message = z.string().max(1_000_000, 'message longer than 1,000,000 characters');

function parseId(kind: 'conversation' | 'approval', value: string): string {
  // A malformed id cannot name anything that exists: not found, like any unknown id.
  if (!uuid.safeParse(value).success) throw notFound(`${kind} ${JSON.stringify(value.slice(0, 64))} not found`);
  return value;
}

// The stored dialect codes (store.proto, A2aOrigin): "seed" is the early type-parts dialect.
const a2aOrigin = z.object({
  dialect: z.enum(['seed', 'v0.3', 'v1.0'], { error: 'one of seed, v0.3, v1.0' }),
  contextId: z.string().min(1, 'a context id').max(256, 'at most 256 characters'),
});

function parseA2aOrigin(value: A2aOrigin | undefined): A2aOrigin | undefined {
  if (value === undefined) return undefined;
  const parsed = a2aOrigin.safeParse(value);
  if (!parsed.success)
    throw invalidArgument(`a2a_origin: ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`);
  return value;
}

// The principal a conversation belongs to, as the gateway authenticated it
// (services/common/principal-id.ts; the store's bound on an owner; blank or with control
// characters is no name).
const owner = z
  .string()
  .max(MAX_PRINCIPAL_LENGTH, `owner: at most ${MAX_PRINCIPAL_LENGTH} characters`)
  .refine((value) => value.trim() !== '', 'owner: a name, not blank (absent: no owner)')
  .refine((value) => !/\p{Cc}/u.test(value), 'owner: no control characters');

function parseOwner(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const parsed = owner.safeParse(value);
  if (!parsed.success) throw invalidArgument(parsed.error.issues[0]?.message ?? 'invalid owner');
  return value;
}

// Who sends a message, as the gateway authenticated them (services/common/principal-id.ts; roles as configured).
const requester = z.object({
  principal: owner,
  roles: z.array(z.enum(ROLES, { error: `roles: each one of ${ROLES.join(', ')}` })).max(ROLES.length),
});

export function parseRequester(value: Requester | undefined): { name: string; roles: string[] } | undefined {
  if (value === undefined) return undefined;
  const parsed = requester.safeParse(value);
  if (!parsed.success) throw invalidArgument(`requester: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  return { name: parsed.data.principal, roles: parsed.data.roles };
}

function parseMessage(value: string): string {
  const parsed = message.safeParse(value);
  if (!parsed.success) throw invalidArgument(parsed.error.issues[0]?.message ?? 'invalid message');
  if (value.trim() === '') throw invalidArgument('message must be a non-empty string');
  return value;
}

/** The faces a human decides through; "timeout" is the expiry's own, never a caller's. */
export const DECISION_FACES = ['rest', 'web', 'a2a', 'mcp', 'cli'] as const;

const decision = z.object({
  // The principal, as the gateway authenticated it (services/common/principal-id.ts): printable, bounded.
  decidedBy: z
    .string()
    .trim()
    .min(1, 'decided_by: a non-empty identity')
    .max(MAX_PRINCIPAL_LENGTH, `decided_by: at most ${MAX_PRINCIPAL_LENGTH} characters`)
    .regex(/^[^\p{Cc}]*$/u, 'decided_by: no control characters')
    .optional(),
  via: z.enum(DECISION_FACES, { error: `via: one of ${DECISION_FACES.join(', ')}` }).optional(),
  roles: z.array(z.enum(ROLES, { error: `decider_roles: each one of ${ROLES.join(', ')}` })).max(ROLES.length),
});

/** A `*_json` field of a decision: absent, or a JSON object within the limits of a stored JSON value. */
function decisionObject(text: string | undefined, what: string): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  const read = readJsonObjectText(text, what);
  if (!read.ok) throw invalidArgument(read.problem);
  return read.value;
}

/** Who decides and how: "anonymous" through "rest" when the caller does not say. */
export function parseDecision(request: {
  approved: boolean;
  decidedBy?: string | undefined;
  via?: string | undefined;
  argumentsJson?: string | undefined;
  inputJson?: string | undefined;
  deciderRoles?: string[];
}): DecisionInput {
  // An empty string is proto3's "not given", as an absent field.
  const parsed = decision.safeParse({
    decidedBy: request.decidedBy || undefined,
    via: request.via || undefined,
    roles: request.deciderRoles ?? [],
  });
  if (!parsed.success) throw invalidArgument(parsed.error.issues[0]?.message ?? 'invalid decision');
  const { decidedBy, via, roles } = parsed.data;
  const args = decisionObject(request.argumentsJson, 'arguments');
  const input = decisionObject(request.inputJson, 'input');
  if (input !== undefined && !request.approved)
    throw invalidArgument('input can only be given with an approval ("approved": true); a rejection declines the question');
  if (args !== undefined && input !== undefined)
    throw invalidArgument("give either arguments (an approval of a call) or input (the answer to a server's question), not both");
  return {
    decidedBy: decidedBy ?? 'anonymous',
    via: via ?? 'rest',
    ...(roles.length > 0 && { roles }),
    ...(args !== undefined && { arguments: args }),
    ...(input !== undefined && { input }),
  };
}

function parseReason(value: string | undefined): string | undefined {
  const problem = reasonProblem(value);
  if (problem) throw invalidArgument(problem);
  return givenReason(value);
}

/** gRPC edge of the orchestrator: validate, delegate to the turn runner, return. */
export function orchestratorHandlers(turns: TurnRunner): UnaryHandlers<typeof OrchestratorServiceService> {
  return {
    createConversation: async (request) =>
      turns.createConversation(
        request.message === undefined ? undefined : parseMessage(request.message),
        { a2aOrigin: parseA2aOrigin(request.a2aOrigin), owner: parseOwner(request.owner) },
        parseRequester(request.requester),
      ),
    sendMessage: async (request) => {
      const reply = await turns.sendMessage(
        parseId('conversation', request.conversationId),
        parseMessage(request.message),
        parseRequester(request.requester),
      );
      return { ...reply, result: reply.result };
    },
    resolveApproval: async (request) =>
      turns.resolveApproval(parseId('approval', request.uuid), request.approved, parseReason(request.reason), parseDecision(request)),
    listTools: async () => turns.listTools(),
    describeRuns: async (request) => ({ views: turns.describeRuns(request.runs) }),
    forkRun: async (request) => {
      if (!uuid.safeParse(request.runId).success) throw notFound(`run ${JSON.stringify(request.runId.slice(0, 64))} not found`);
      if (!Number.isInteger(request.step) || request.step < 0) throw invalidArgument('step: a step index, 0 or more');
      const reply = await turns.forkRun(
        request.runId,
        request.step,
        request.message === undefined ? undefined : parseMessage(request.message),
        parseOwner(request.owner),
        parseRequester(request.requester),
      );
      return { ...reply, result: reply.result };
    },
  };
}
