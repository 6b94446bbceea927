import { z } from 'zod';
import type { Dialect } from './dialect.js';
import type { TaskState } from './task.js';
import { invalidParams } from './jsonrpc.js';

/**
 * The params of each method in each dialect, checked at the edge and read
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
  /** `configuration.blocking: false` (v0.3) or `returnImmediately: true` (v1.0): answer with the task at once, the turn runs on. */
  returnImmediately?: boolean;
  /** A push-notification config sent with the message (v0.3 `configuration.pushNotificationConfig`, v1.0 `taskPushNotificationConfig`). */
  pushConfig?: PushConfigInput;
}

/** A push-notification config as a client sends it, in no dialect. */
export interface PushConfigInput {
  id?: string;
  url: string;
  token?: string;
  /** The scheme and credentials of an `Authorization` header the notification carries. */
  authentication?: { scheme: string; credentials?: string };
}

/** The filters and page of a ListTasks / `tasks/list`. */
export interface TaskListQuery {
  contextId?: string;
  /** The state, in the snapshot's own words (`completed`). */
  state?: TaskState;
  /** 1..100; 50 by default. */
  pageSize: number;
  pageToken?: string;
  historyLength?: number;
  /** Only tasks whose status changed at or after this time. */
  statusTimestampAfter?: Date;
  includeArtifacts: boolean;
}

/** `tasks/get`, `tasks/cancel`, `GetTask`, `CancelTask`. */
export interface TaskQuery {
  id: string;
  historyLength?: number;
}

const id = z.string().min(1, 'must be a non-empty string');
const historyLength = z.number().int().min(0).optional();
const jsonObject = z.record(z.string(), z.unknown());

// Type-parts: {"type": "text", "text"} and {"type": "data", "data"}; taskId beside the message.
const typePart = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text'), text: z.string() }),
  z.looseObject({ type: z.literal('data'), data: z.unknown() }),
  z.looseObject({ type: z.literal('file') }),
]);

const typePartsSend = z.looseObject({
  message: z.looseObject({ parts: z.array(typePart).min(1), taskId: id.optional(), contextId: id.optional() }),
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
    messageId: id,
    // A client sends user messages; an agent's own would be a confusion worth refusing.
    role: z.literal('user'),
    parts: z.array(v03Part).min(1),
    taskId: id.optional(),
    contextId: id.optional(),
  }),
  configuration: z
    .looseObject({
      historyLength,
      blocking: z.boolean().optional(),
      pushNotificationConfig: z.lazy(() => v03PushConfig).optional(),
    })
    .optional(),
  // Not in v0.3, but the type-parts habit; accepted so that mixed clients still continue their task.
  taskId: id.optional(),
});

// v1.0 (ProtoJSON of lf.a2a.v1): a part has exactly one of text, data, url or raw.
const v1Part = z
  .looseObject({ text: z.string().optional(), data: z.unknown().optional(), url: z.string().optional(), raw: z.string().optional() })
  .refine((part) => ['text', 'data', 'url', 'raw'].filter((key) => part[key as keyof typeof part] !== undefined).length === 1, {
    message: 'a part must have exactly one of "text", "data", "url" or "raw"',
  });

const v1Authentication = z.looseObject({ scheme: z.string().min(1), credentials: z.string().optional() });

const v1PushConfig = z.looseObject({
  id: id.optional(),
  taskId: z.string().optional(),
  url: z.string(),
  token: z.string().max(1024).optional(),
  authentication: v1Authentication.optional(),
});

const v1Send = z.looseObject({
  message: z.looseObject({
    messageId: id,
    role: z.literal('ROLE_USER'),
    parts: z.array(v1Part).min(1),
    taskId: id.optional(),
    contextId: id.optional(),
  }),
  configuration: z
    .looseObject({
      historyLength,
      returnImmediately: z.boolean().optional(),
      taskPushNotificationConfig: v1PushConfig.optional(),
    })
    .optional(),
});

const taskQuery = z.looseObject({ id, historyLength });

function fieldPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (text, key) => (typeof key === 'number' ? `${text}[${key}]` : text ? `${text}.${String(key)}` : String(key)),
    '',
  );
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
  if (fields.returnImmediately) message.returnImmediately = true;
  if (fields.pushConfig) message.pushConfig = fields.pushConfig;
  return message;
}

type V03PushConfig = z.infer<typeof v03PushConfig>;

function v03PushInput(config: V03PushConfig): PushConfigInput {
  const [scheme] = config.authentication?.schemes ?? [];
  return {
    url: config.url,
    ...(config.id && { id: config.id }),
    ...(config.token !== undefined && { token: config.token }),
    ...(scheme && {
      authentication: {
        scheme,
        ...(config.authentication?.credentials !== undefined && { credentials: config.authentication.credentials }),
      },
    }),
  };
}

function v1PushInput(config: z.infer<typeof v1PushConfig>): PushConfigInput {
  return {
    url: config.url,
    ...(config.id && { id: config.id }),
    ...(config.token !== undefined && config.token !== '' && { token: config.token }),
    ...(config.authentication && {
      authentication: {
        scheme: config.authentication.scheme,
        ...(config.authentication.credentials !== undefined && { credentials: config.authentication.credentials }),
      },
    }),
  };
}

/** The message of a `message/send`, `message/stream`, `SendMessage` or `SendStreamingMessage`. */
export function parseSendParams(dialect: Dialect, params: unknown): InboundMessage {
  switch (dialect) {
    case 'type-parts': {
      const { message, taskId, contextId } = parse(typePartsSend, params);
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
        {
          taskId: message.taskId ?? taskId,
          contextId: message.contextId,
          historyLength: configuration?.historyLength,
          returnImmediately: configuration?.blocking === false,
          ...(configuration?.pushNotificationConfig && { pushConfig: v03PushInput(configuration.pushNotificationConfig) }),
        },
      );
    }
    case 'v1.0': {
      const { message, configuration } = parse(v1Send, params);
      return inbound(
        message.parts.flatMap((part) => (part.text !== undefined ? [part.text] : [])),
        message.parts.flatMap((part) => (part.data !== undefined ? [part.data] : [])),
        {
          taskId: message.taskId,
          contextId: message.contextId,
          historyLength: configuration?.historyLength,
          returnImmediately: configuration?.returnImmediately === true,
          ...(configuration?.taskPushNotificationConfig && { pushConfig: v1PushInput(configuration.taskPushNotificationConfig) }),
        },
      );
    }
  }
}

/** The task named by a get or cancel: `{"id"}` in every dialect. */
export function parseTaskQuery(params: unknown): TaskQuery {
  const { id: taskId, historyLength: length } = parse(taskQuery, params);
  return length ? { id: taskId, historyLength: length } : { id: taskId };
}

/** `tasks/resubscribe` and `SubscribeToTask`: `{"id"}`. */
export function parseSubscribeParams(params: unknown): string {
  return parse(z.looseObject({ id }), params).id;
}

const V1_STATES: Record<string, TaskState> = {
  TASK_STATE_SUBMITTED: 'submitted',
  TASK_STATE_WORKING: 'working',
  TASK_STATE_INPUT_REQUIRED: 'input-required',
  TASK_STATE_COMPLETED: 'completed',
  TASK_STATE_CANCELED: 'canceled',
  TASK_STATE_FAILED: 'failed',
  TASK_STATE_REJECTED: 'rejected',
  TASK_STATE_AUTH_REQUIRED: 'auth-required',
};

/** The page sizes ListTasks allows (A2A v1.0: 1..100, 50 when unset). */
const LIST_PAGE_SIZE = { default: 50, max: 100 } as const;

const listQuery = (state: z.ZodType<TaskState | undefined>) =>
  z.looseObject({
    contextId: z.string().optional(),
    status: state,
    pageSize: z.number().int().min(1).max(LIST_PAGE_SIZE.max).optional(),
    pageToken: z.string().max(2048).optional(),
    historyLength,
    statusTimestampAfter: z.iso.datetime({ offset: true }).optional(),
    includeArtifacts: z.boolean().optional(),
  });

const v1State = z
  .enum(Object.keys(V1_STATES) as [string, ...string[]])
  .or(z.literal('TASK_STATE_UNSPECIFIED'))
  .optional()
  .transform((value) => (value === undefined || value === 'TASK_STATE_UNSPECIFIED' ? undefined : V1_STATES[value]));
const v03State = z.enum(Object.values(V1_STATES) as [TaskState, ...TaskState[]]).optional();

/** ListTasks (v1.0 names and enums) or `tasks/list` (the same fields, v0.3's lowercase states). */
export function parseListParams(dialect: Dialect, params: unknown): TaskListQuery {
  const query = parse(listQuery(dialect === 'v1.0' ? (v1State as z.ZodType<TaskState | undefined>) : v03State), params);
  return {
    pageSize: query.pageSize ?? LIST_PAGE_SIZE.default,
    includeArtifacts: query.includeArtifacts === true,
    ...(query.contextId && { contextId: query.contextId }),
    ...(query.status && { state: query.status }),
    ...(query.pageToken && { pageToken: query.pageToken }),
    ...(query.historyLength && { historyLength: query.historyLength }),
    ...(query.statusTimestampAfter && { statusTimestampAfter: new Date(query.statusTimestampAfter) }),
  };
}

/** The task and (get, delete) the config named by a push-notification config method. */
export interface PushConfigQuery {
  taskId: string;
  configId?: string;
}

const v03PushConfig = z.looseObject({
  id: id.optional(),
  url: z.string(),
  token: z.string().max(1024).optional(),
  authentication: z.looseObject({ schemes: z.array(z.string()).min(1), credentials: z.string().optional() }).optional(),
});

/**
 * `tasks/pushNotificationConfig/set` (v0.3: `{"taskId", "pushNotificationConfig": {…}}`) or
 * CreateTaskPushNotificationConfig (v1.0: the TaskPushNotificationConfig itself, `{"taskId", "url", …}`).
 */
export function parsePushSetParams(dialect: Dialect, params: unknown): { taskId: string; config: PushConfigInput } {
  if (dialect === 'v1.0') {
    const config = parse(v1PushConfig.extend({ taskId: id }), params);
    return { taskId: config.taskId, config: v1PushInput(config) };
  }
  const { taskId, pushNotificationConfig } = parse(z.looseObject({ taskId: id, pushNotificationConfig: v03PushConfig }), params);
  return { taskId, config: v03PushInput(pushNotificationConfig) };
}

/** get / delete / list: v0.3 `{"id", "pushNotificationConfigId"?}`, v1.0 `{"taskId", "id"?}`; `needsConfig` for v1.0 get and both deletes. */
export function parsePushQuery(dialect: Dialect, params: unknown, needsConfig: boolean): PushConfigQuery {
  if (dialect === 'v1.0') {
    const { taskId, id: configId } = parse(z.looseObject({ taskId: id, id: needsConfig ? id : id.optional() }), params);
    return { taskId, ...(configId && { configId }) };
  }
  const { id: taskId, pushNotificationConfigId } = parse(
    z.looseObject({ id, pushNotificationConfigId: needsConfig ? id : id.optional() }),
    params,
  );
  return { taskId, ...(pushNotificationConfigId && { configId: pushNotificationConfigId }) };
}
