import { z } from 'zod';
import { resolveModel } from './config/models.js';
import { redactSecrets, SECRET_FIELD_NAMES } from './secrets.js';

/**
 * The run journal's format: the kinds of step a run records and the fields of each (a step's
 * `body`, stored as JSON text beside its kind, node, start and duration). The orchestrator
 * writes steps in this format, the store refuses a step that does not fit it, and the gateway
 * shows the fields as they are stored. A change of the fields is a new JOURNAL_FORMAT: each run
 * keeps the format its steps were written in, so a reader knows what it reads.
 *
 * Formats: 1, the kinds and bodies below; 2, the same with each step's place in its
 * conversation (RunStep.message_seq: the seq of the last message before it) and each run's user
 * message, which a fork needs to copy the conversation up to a step.
 */
export const JOURNAL_FORMAT = 2;

/** The statuses a journaled run goes through; the last three end it. */
export const RUN_STATUSES = ['running', 'waiting_approval', 'completed', 'cancelled', 'interrupted'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const ENDED_STATUSES: ReadonlySet<string> = new Set<RunStatus>(['completed', 'cancelled', 'interrupted']);

const jsonObject = z.record(z.string(), z.unknown());
const tokens = z.number().int().nonnegative();

/** How a tool call (or a delegation) came back: its result, an error, or a wait for a human (a peer's approval, a server's question). */
const outcome = z.enum(['ok', 'error', 'waiting']);

const STEP_BODIES = {
  /** A node of the tree began (its type: llm, a2a, sequential, parallel, loop). */
  node_started: z.strictObject({ type: z.string() }),
  /** A node ended: done (with the output_key its output was stored under, if any) or paused for an approval. */
  node_finished: z.strictObject({
    outcome: z.enum(['done', 'paused']),
    output_key: z.string().optional(),
    exit_loop: z.boolean().optional(),
  }),
  model_call: z.strictObject({
    model: z.string(),
    provider: z.string(),
    input_tokens: tokens,
    output_tokens: tokens,
    finish_reason: z.string(),
    /** The model asked for these tools, in its order. */
    tool_calls: z.array(z.string()).optional(),
    /** The call failed: why (its category). */
    error: z.string().optional(),
  }),
  tool_call: z.strictObject({
    tool: z.string(),
    server: z.string(),
    /** Secrets redacted (redactArguments). */
    arguments: jsonObject,
    /** callHash of the call as the model (or the approval) made it, before redaction. */
    args_hash: z.string(),
    outcome,
    /** The result's first characters, redacted. */
    summary: z.string(),
    /** The approval the call ran under, if it needed one. */
    approval_uuid: z.string().optional(),
  }),
  /** A call stopped for a human: the approval asked. */
  approval: z.strictObject({
    approval_uuid: z.string(),
    tool: z.string(),
    arguments: jsonObject,
    args_hash: z.string(),
    /** The approval asks a human for an MCP server's question, or a peer agent holds the call for its own approval. */
    asks: z.enum(['approval', 'input', 'remote_approval']),
  }),
  decision: z.strictObject({
    approval_uuid: z.string(),
    approved: z.boolean(),
    decided_by: z.string(),
    via: z.string(),
    reason: z.string().optional(),
    /** The arguments a human edited before approving, secrets redacted. */
    edited_arguments: jsonObject.optional(),
    expired: z.boolean().optional(),
  }),
  /** A delegation to an A2A agent (an a2a node's, or the model's call of an `a2a_<name>` tool). */
  a2a_call: z.strictObject({
    agent: z.string(),
    message: z.string(),
    outcome,
    summary: z.string(),
  }),
  compaction: z.strictObject({
    strategy: z.string(),
    tokens_before: tokens,
    tokens_after: tokens,
    summarized: z.boolean(),
  }),
} as const;

export type StepKind = keyof typeof STEP_BODIES;
export const STEP_KINDS = Object.keys(STEP_BODIES) as StepKind[];
type StepBody<K extends StepKind> = z.infer<(typeof STEP_BODIES)[K]>;

/**
 * A step as the orchestrator records it, before the store numbers it. `messageSeq` (format 2):
 * how many of the conversation's messages came before the step, where the orchestrator knows
 * it; the store places a step without one before the messages of the write that carries it.
 */
export type JournalStep = {
  [K in StepKind]: { kind: K; node: string; startedAtMs: number; durationMs: number; body: StepBody<K>; messageSeq?: number };
}[StepKind];

/** The body of a stored step, checked against its kind; undefined with why when it does not fit the format. */
export function parseStepBody(kind: string, bodyJson: string): { body: Record<string, unknown> } | { error: string } {
  const schema = (STEP_BODIES as Record<string, z.ZodType<Record<string, unknown>>>)[kind];
  if (!schema) return { error: `step kind ${JSON.stringify(kind)} is none of ${STEP_KINDS.join(', ')}` };
  let value: unknown;
  try {
    value = JSON.parse(bodyJson);
  } catch {
    return { error: `the body of a ${kind} step is not JSON` };
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    return { error: `the body of a ${kind} step does not fit journal format ${JOURNAL_FORMAT}: ${z.prettifyError(parsed.error)}` };
  return { body: parsed.data };
}

/** How many characters of a result a step keeps. */
const SUMMARY_CHARS = 200;

/** The first SUMMARY_CHARS characters of a result, secrets redacted (before the cut, so no cut leaves a secret's head). */
export function summaryOf(text: string): string {
  const redacted = redactSecrets(text);
  return redacted.length > SUMMARY_CHARS ? `${redacted.slice(0, SUMMARY_CHARS)}…` : redacted;
}

const SECRET_FIELDS = new Set(SECRET_FIELD_NAMES.map((name) => name.toLowerCase()));

/**
 * A call's arguments as the journal keeps them: a field named like a credential (the log's
 * rule) is `[redacted]` whatever its value, and every string goes through redactSecrets.
 */
export function redactArguments(value: Record<string, unknown>): Record<string, unknown> {
  return redactValue(value) as Record<string, unknown>;
}

function redactValue(value: unknown): unknown {
  if (typeof value === 'string') return redactSecrets(value);
  if (Array.isArray(value)) return value.map(redactValue);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value).map(([key, field]) => [key, SECRET_FIELDS.has(key.toLowerCase()) ? '[redacted]' : redactValue(field)]),
    );
  return value;
}

/** The provider a model name routes to (services/common/config/models.ts); "unknown" for a name that routes nowhere. */
export function providerOf(model: string): string {
  try {
    return resolveModel(model).provider;
  } catch {
    return 'unknown';
  }
}
