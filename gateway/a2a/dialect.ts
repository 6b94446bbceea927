import type { A2aOrigin } from '../../gen/ts/asg/store/v1/store.js';

/**
 * The three ways callers speak A2A to this agent, and how a request shows which one it
 * speaks: its method name, its `A2A-Version` header and its parts (`{"type": "text"}` in the
 * type-parts dialect, `{"kind": "text"}` in v0.3). Pure functions.
 */

/**
 * The early type-parts dialect (from before A2A v0.3: parts `{"type": "text"}`, one artifact,
 * the status message a plain string), A2A v0.3 and A2A v1.0.
 */
export type Dialect = 'type-parts' | 'v0.3' | 'v1.0';

const DIALECTS: readonly Dialect[] = ['type-parts', 'v0.3', 'v1.0'];

/**
 * Each dialect as a conversation's `a2a_origin.dialect` stores it. The type-parts dialect is
 * stored as "seed", the code every release has written for it, so that stored tasks, and the
 * store and orchestrator of other releases during a rolling upgrade, read it as before.
 */
const STORED_CODES: Readonly<Record<Dialect, string>> = { 'type-parts': 'seed', 'v0.3': 'v0.3', 'v1.0': 'v1.0' };

/** The A2A origin a conversation created in `dialect` is stored with. */
export function storedOrigin(dialect: Dialect, contextId: string): A2aOrigin {
  return { dialect: STORED_CODES[dialect], contextId };
}

/** What a method does, whatever the dialect. */
type Operation = 'send' | 'stream' | 'get' | 'cancel' | 'subscribe' | 'list' | 'pushSet' | 'pushGet' | 'pushList' | 'pushDelete';

/**
 * `legacy`: the slash-named methods the type-parts dialect and v0.3 share (`message/send`);
 * `v1.0`: the PascalCase methods of A2A v1.0 (`SendMessage`).
 */
type MethodFamily = 'legacy' | 'v1.0';

export interface MethodInfo {
  operation: Operation;
  family: MethodFamily;
}

const METHODS: ReadonlyMap<string, MethodInfo> = new Map([
  ['message/send', { operation: 'send', family: 'legacy' }],
  ['message/stream', { operation: 'stream', family: 'legacy' }],
  ['tasks/get', { operation: 'get', family: 'legacy' }],
  ['tasks/cancel', { operation: 'cancel', family: 'legacy' }],
  ['tasks/resubscribe', { operation: 'subscribe', family: 'legacy' }],
  // Not in v0.3 itself; the slash-named twin of v1.0's ListTasks that @a2a-js/sdk's legacy transport sends.
  ['tasks/list', { operation: 'list', family: 'legacy' }],
  ['tasks/pushNotificationConfig/set', { operation: 'pushSet', family: 'legacy' }],
  ['tasks/pushNotificationConfig/get', { operation: 'pushGet', family: 'legacy' }],
  ['tasks/pushNotificationConfig/list', { operation: 'pushList', family: 'legacy' }],
  ['tasks/pushNotificationConfig/delete', { operation: 'pushDelete', family: 'legacy' }],
  ['SendMessage', { operation: 'send', family: 'v1.0' }],
  ['SendStreamingMessage', { operation: 'stream', family: 'v1.0' }],
  ['GetTask', { operation: 'get', family: 'v1.0' }],
  ['CancelTask', { operation: 'cancel', family: 'v1.0' }],
  ['SubscribeToTask', { operation: 'subscribe', family: 'v1.0' }],
  ['ListTasks', { operation: 'list', family: 'v1.0' }],
  ['CreateTaskPushNotificationConfig', { operation: 'pushSet', family: 'v1.0' }],
  ['GetTaskPushNotificationConfig', { operation: 'pushGet', family: 'v1.0' }],
  ['ListTaskPushNotificationConfigs', { operation: 'pushList', family: 'v1.0' }],
  ['DeleteTaskPushNotificationConfig', { operation: 'pushDelete', family: 'v1.0' }],
]);

/** The methods this server answers, for error messages. */
export const METHOD_NAMES: readonly string[] = [...METHODS.keys()];

export function methodInfo(method: string): MethodInfo | undefined {
  return METHODS.get(method);
}

/** What an `A2A-Version` header says: absent, one of ours, or a version this agent does not speak. */
export type HeaderVersion = 'v0.3' | 'v1.0' | 'unsupported' | undefined;

export function headerVersion(value: string | undefined): HeaderVersion {
  const text = value?.trim();
  if (!text) return undefined;
  const match = /^(\d+)(?:\.(\d+))?(?:\.\d+)?$/.exec(text);
  if (!match) return 'unsupported';
  const major = Number(match[1]);
  const minor = Number(match[2] ?? 0);
  if (major === 1 && minor === 0) return 'v1.0';
  // Clients before 0.3 spoke the same slash-named methods; they are answered as v0.3.
  if (major === 0) return 'v0.3';
  return 'unsupported';
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The dialect a message's parts are written in: `kind` → v0.3, `type` → type-parts; undefined when they do not say. */
export function partsDialect(params: unknown): 'type-parts' | 'v0.3' | undefined {
  if (!isObject(params) || !isObject(params.message)) return undefined;
  const parts = Array.isArray(params.message.parts) ? params.message.parts : [];
  if (parts.some((part) => isObject(part) && typeof part.kind === 'string')) return 'v0.3';
  if (parts.some((part) => isObject(part) && typeof part.type === 'string')) return 'type-parts';
  // v0.3 messages carry kind "message"; type-parts messages never did.
  if (params.message.kind === 'message') return 'v0.3';
  return undefined;
}

/**
 * The dialect a request shows, or undefined when it shows none: a `tasks/get` or
 * `tasks/cancel` without an `A2A-Version` header carries no parts, so it is answered in the
 * dialect its task was created in (see `legacyTaskDialect`).
 */
export function requestDialect(method: MethodInfo, header: HeaderVersion, params: unknown): Dialect | undefined {
  if (method.family === 'v1.0') return 'v1.0';
  // The type-parts dialect had no streaming, no listing and no push notifications.
  if (
    method.operation === 'stream' ||
    method.operation === 'subscribe' ||
    method.operation === 'list' ||
    method.operation.startsWith('push')
  )
    return 'v0.3';
  if (method.operation === 'send') return partsDialect(params) ?? (header === 'v0.3' ? 'v0.3' : 'type-parts');
  return header === 'v0.3' ? 'v0.3' : undefined;
}

/** The dialect a conversation's task was created in; a conversation created over REST (no origin) is type-parts. */
export function originDialect(origin: A2aOrigin | undefined): Dialect {
  const stored = origin?.dialect;
  return DIALECTS.find((dialect) => STORED_CODES[dialect] === stored) ?? 'type-parts';
}

/**
 * The dialect a slash-named `tasks/get` / `tasks/cancel` that showed none is answered in:
 * the task's own. A task created over v1.0 is answered as v0.3 there — a v1.0 answer would be
 * unreadable to any client that speaks the slash-named methods, and v0.3 is the same data model.
 */
export function legacyTaskDialect(origin: Dialect): Dialect {
  return origin === 'v1.0' ? 'v0.3' : origin;
}
