import { z } from 'zod';
import type { Dialect } from './dialect.js';
import { invalidParams } from './jsonrpc.js';

/**
 * The params of each method in each dialect, checked at the edge (DESIGN rule 8) and read
 * into one dialect-free shape. A bad field is refused with -32602 and a message that names
 * it (`message.parts[0].kind: …`). Unknown fields are allowed: A2A adds optional ones
 * (metadata, extensions, configuration) that this agent has no use for.
 */

/** A message sent to a task, in no dialect in particular. */
export interface InboundMessage {
  /** The text parts, joined by newlines. */
  text: string;
  /** The data parts whose value is a JSON object (an answer to an approval may come as one). */
  data: Record<string, unknown>[];
  /** Continues this task (a conversation id). */
  taskId?: string;
  contextId?: string;
  /** How many history messages the answer should carry; none when absent or 0. */
  historyLength?: number;
}

/** `tasks/get`, `tasks/cancel`, `GetTask`, `CancelTask`. */
export interface TaskQuery {
  id: string;
  historyLength?: number;
}

const id = z.string().min(1, 'must be a non-empty string');
const historyLength = z.number().int().min(0).optional();
const jsonObject = z.record(z.string(), z.unknown());

// Seed: {"type": "text", "text"} and {"type": "data", "data"}; taskId beside the message.
const seedPart = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text'), text: z.string() }),
  z.looseObject({ type: z.literal('data'), data: z.unknown() }),
  z.looseObject({ type: z.literal('file') }),
]);

const seedSend = z.looseObject({
  message: z.looseObject({ parts: z.array(seedPart).min(1), taskId: id.optional(), contextId: id.optional() }),
  taskId: id.optional(),
  contextId: id.optional(),
});

// v0.3: {"kind": "text", "text"}, {"kind": "data", "data"}, {"kind": "file", "file"}; taskId in the message.
const v03Part = z.discriminatedUnion('kind', [
  z.looseObject({ kind: z.literal('text'), text: z.string() }),
  z.looseObject({ kind: z.literal('data'), data: z.unknown() }),
  z.looseObject({ kind: z.literal('file'), file: jsonObject }),
]);

const v03Send = z.looseObject({
  message: z.looseObject({
    kind: z.literal('message').optional(),
    messageId: z.string().optional(),
    role: z.enum(['user', 'agent']).optional(),
    parts: z.array(v03Part).min(1),
    taskId: id.optional(),
    contextId: id.optional(),
  }),
  configuration: z.looseObject({ historyLength }).optional(),
  // Not in v0.3, but the seed's habit; accepted so that mixed clients still continue their task.
  taskId: id.optional(),
});

// v1.0 (ProtoJSON of lf.a2a.v1): a part has exactly one of text, data, url or raw.
const v1Part = z
  .looseObject({ text: z.string().optional(), data: z.unknown().optional(), url: z.string().optional(), raw: z.string().optional() })
  .refine((part) => ['text', 'data', 'url', 'raw'].filter((key) => part[key as keyof typeof part] !== undefined).length === 1, {
    message: 'a part must have exactly one of "text", "data", "url" or "raw"',
  });

const v1Send = z.looseObject({
  message: z.looseObject({
    messageId: z.string().optional(),
    role: z.enum(['ROLE_USER', 'ROLE_AGENT', 'ROLE_UNSPECIFIED']).optional(),
    parts: z.array(v1Part).min(1),
    taskId: id.optional(),
    contextId: id.optional(),
  }),
  configuration: z.looseObject({ historyLength }).optional(),
});

const taskQuery = z.looseObject({ id, historyLength });

function fieldPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((text, key) => (typeof key === 'number' ? `${text}[${key}]` : text ? `${text}.${String(key)}` : String(key)), '');
}

function parse<T>(schema: z.ZodType<T>, params: unknown): T {
  const parsed = schema.safeParse(params);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? `${fieldPath(issue.path)}: ` : '';
  throw invalidParams(`${where}${issue?.message ?? 'unreadable params'}`);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function inbound(texts: string[], data: unknown[], fields: Omit<InboundMessage, 'text' | 'data'>): InboundMessage {
  const message: InboundMessage = { text: texts.join('\n'), data: data.filter(isPlainObject) };
  if (fields.taskId) message.taskId = fields.taskId;
  if (fields.contextId) message.contextId = fields.contextId;
  if (fields.historyLength) message.historyLength = fields.historyLength;
  return message;
}

/** The message of a `message/send`, `message/stream`, `SendMessage` or `SendStreamingMessage`. */
export function parseSendParams(dialect: Dialect, params: unknown): InboundMessage {
  switch (dialect) {
    case 'seed': {
      const { message, taskId, contextId } = parse(seedSend, params);
      return inbound(
        message.parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])),
        message.parts.flatMap((part) => (part.type === 'data' ? [part.data] : [])),
        { taskId: taskId ?? message.taskId, contextId: contextId ?? message.contextId },
      );
    }
    case 'v0.3': {
      const { message, configuration, taskId } = parse(v03Send, params);
      return inbound(
        message.parts.flatMap((part) => (part.kind === 'text' ? [part.text] : [])),
        message.parts.flatMap((part) => (part.kind === 'data' ? [part.data] : [])),
        { taskId: message.taskId ?? taskId, contextId: message.contextId, historyLength: configuration?.historyLength },
      );
    }
    case 'v1.0': {
      const { message, configuration } = parse(v1Send, params);
      return inbound(
        message.parts.flatMap((part) => (part.text !== undefined ? [part.text] : [])),
        message.parts.flatMap((part) => (part.data !== undefined ? [part.data] : [])),
        { taskId: message.taskId, contextId: message.contextId, historyLength: configuration?.historyLength },
      );
    }
  }
}

/** The task named by a get or cancel: `{"id"}` in every dialect. */
export function parseTaskQuery(params: unknown): TaskQuery {
  const { id: taskId, historyLength: length } = parse(taskQuery, params);
  return length ? { id: taskId, historyLength: length } : { id: taskId };
}
