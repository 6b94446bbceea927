import { headerVersion, legacyTaskDialect, METHOD_NAMES, methodInfo, requestDialect, type Dialect } from './dialect.js';
import {
  failure,
  JsonRpcCode,
  JsonRpcError,
  success,
  toJsonRpcError,
  type JsonRpcFailure,
  type JsonRpcId,
  type JsonRpcRequest,
  type JsonRpcSuccess,
} from './jsonrpc.js';
import { parseListParams, parsePushQuery, parsePushSetParams, parseSendParams, parseSubscribeParams, parseTaskQuery } from './params.js';
import { pushConfigJson } from './push.js';
import type { TaskEvent } from './task.js';
import { pushNotSupported, type TaskAnswer, type TaskService } from './tasks.js';
import { WIRES } from './wire/index.js';

/**
 * One JSON-RPC request in, one answer out: the method decides the operation, the request's
 * dialect (or, for a get or cancel that shows none, its task's) decides how params are read
 * and how the task is written. Knows nothing of HTTP.
 */

export type RpcReply =
  | {
      kind: 'json';
      body: JsonRpcSuccess | JsonRpcFailure;
      /** The request's effective session id, once known. */
      sessionId?: string;
      /** Set for failures nobody anticipated: worth an error line in the log. */
      unexpected?: string;
    }
  | {
      kind: 'stream';
      sessionId: string;
      /** JSON-RPC answers, one per server-sent event, all with the request's id. */
      events: AsyncGenerator<JsonRpcSuccess>;
    };

export interface RpcInput {
  request: JsonRpcRequest;
  /** The request's `A2A-Version` header. */
  versionHeader: string | undefined;
  /** Aborts when the caller went away: a subscription ends then (a send's turn runs on). */
  signal?: AbortSignal;
}

function unknownMethod(method: string): JsonRpcError {
  return new JsonRpcError(JsonRpcCode.METHOD_NOT_FOUND, `method not found: ${method}; this agent answers ${METHOD_NAMES.join(', ')}`);
}

function json(id: JsonRpcId, dialect: Dialect, answer: TaskAnswer, write: 'task' | 'sendResult'): RpcReply {
  return { kind: 'json', body: success(id, WIRES[dialect][write](answer.task)), sessionId: answer.sessionId };
}

async function* envelopes(id: JsonRpcId, dialect: Dialect, events: AsyncGenerator<TaskEvent>): AsyncGenerator<JsonRpcSuccess> {
  const write = WIRES[dialect].event;
  if (!write) throw new JsonRpcError(JsonRpcCode.INTERNAL_ERROR, `the ${dialect} dialect has no streaming`);
  for await (const event of events) yield success(id, write(event));
}

async function dispatch(input: RpcInput, tasks: TaskService): Promise<RpcReply> {
  const { request, versionHeader } = input;
  const method = methodInfo(request.method);
  if (!method) throw unknownMethod(request.method);
  const header = headerVersion(versionHeader);
  if (header === 'unsupported') {
    throw new JsonRpcError(
      JsonRpcCode.VERSION_NOT_SUPPORTED,
      `A2A-Version ${JSON.stringify(versionHeader)} is not supported; this agent speaks A2A 1.0 and 0.3`,
    );
  }
  const shown = requestDialect(method, header, request.params);
  // Without push notifications (the card says so) their methods are refused before their params are read.
  if (method.operation.startsWith('push') && !tasks.pushNotifications) throw pushNotSupported(request.method);
  switch (method.operation) {
    case 'send': {
      const dialect = shown ?? 'type-parts';
      return json(request.id, dialect, await tasks.send(parseSendParams(dialect, request.params), dialect), 'sendResult');
    }
    case 'stream': {
      const dialect = shown ?? 'v0.3';
      const stream = await tasks.openStream(parseSendParams(dialect, request.params), dialect);
      return { kind: 'stream', sessionId: stream.sessionId, events: envelopes(request.id, dialect, stream.events) };
    }
    case 'get': {
      const answer = await tasks.get(parseTaskQuery(request.params));
      return json(request.id, shown ?? legacyTaskDialect(answer.origin), answer, 'task');
    }
    case 'cancel': {
      const answer = await tasks.cancel(parseTaskQuery(request.params));
      return json(request.id, shown ?? legacyTaskDialect(answer.origin), answer, 'task');
    }
    case 'subscribe': {
      const dialect = shown ?? 'v0.3';
      const stream = await tasks.subscribe(parseSubscribeParams(request.params), input.signal);
      return { kind: 'stream', sessionId: stream.sessionId, events: envelopes(request.id, dialect, stream.events) };
    }
    case 'list': {
      const dialect = shown ?? 'v0.3';
      const page = await tasks.list(parseListParams(dialect, request.params));
      const write = WIRES[dialect].task;
      const result = {
        tasks: page.tasks.map((task) => write(task)),
        nextPageToken: page.nextPageToken,
        pageSize: page.pageSize,
        totalSize: page.totalSize,
      };
      return { kind: 'json', body: success(request.id, result) };
    }
    case 'pushSet': {
      const dialect = shown ?? 'v0.3';
      const { taskId, config } = parsePushSetParams(dialect, request.params);
      return { kind: 'json', body: success(request.id, pushConfigJson(await tasks.setPushConfig(taskId, config, dialect), dialect)) };
    }
    case 'pushGet': {
      const dialect = shown ?? 'v0.3';
      const config = await tasks.getPushConfig(parsePushQuery(dialect, request.params, dialect === 'v1.0'));
      return { kind: 'json', body: success(request.id, pushConfigJson(config, dialect)) };
    }
    case 'pushList': {
      const dialect = shown ?? 'v0.3';
      const configs = (await tasks.listPushConfigs(parsePushQuery(dialect, request.params, false).taskId)).map((config) =>
        pushConfigJson(config, dialect),
      );
      // v0.3 answers the array itself; v1.0 a ListTaskPushNotificationConfigsResponse (one page: a task has few).
      return { kind: 'json', body: success(request.id, dialect === 'v1.0' ? { configs, nextPageToken: '' } : configs) };
    }
    case 'pushDelete': {
      const dialect = shown ?? 'v0.3';
      await tasks.deletePushConfig(parsePushQuery(dialect, request.params, true));
      // v0.3: null; v1.0: google.protobuf.Empty.
      return { kind: 'json', body: success(request.id, dialect === 'v1.0' ? {} : null) };
    }
  }
}

/** Answers one request; failures become JSON-RPC errors (HTTP stays 200). */
export async function answerRpc(input: RpcInput, tasks: TaskService): Promise<RpcReply> {
  try {
    return await dispatch(input, tasks);
  } catch (error) {
    const mapped = toJsonRpcError(error);
    return { kind: 'json', body: failure(input.request.id, mapped.error), ...(mapped.unexpected && { unexpected: mapped.error.message }) };
  }
}
