import { GrpcStatus, RpcError, ServiceError } from '../../services/common/grpc/errors.js';
import { redactSecrets } from '../../services/common/secrets.js';
import { ConversationBusy } from '../app/busy.js';
import { failureOf } from '../app/errors.js';

/**
 * JSON-RPC 2.0 as the A2A server speaks it: the envelope of a request, the envelopes of
 * answers, and the error codes (JSON-RPC's own and A2A's, the same in every dialect).
 * Pure; every error message passes through secret redaction (secrets never appear in an answer).
 */

export const JsonRpcCode = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  TASK_NOT_FOUND: -32001,
  TASK_NOT_CANCELABLE: -32002,
  PUSH_NOTIFICATION_NOT_SUPPORTED: -32003,
  /**
   * A2A's UnsupportedOperationError, which the spec gives a request the task cannot take in
   * its current state; here also a message to a task whose turn is still running.
   */
  UNSUPPORTED_OPERATION: -32004,
  VERSION_NOT_SUPPORTED: -32009,
  /**
   * Refused for the caller's credentials or role, sent inside an HTTP 401 or 403 as
   * the A2A spec's authentication guidance asks. A2A defines no code for it; -32000 is the first
   * of JSON-RPC's implementation-defined server errors, below A2A's own (-32001 and on).
   */
  ACCESS_DENIED: -32000,
} as const;

export class JsonRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'JsonRpcError';
  }
}

export const invalidParams = (message: string) => new JsonRpcError(JsonRpcCode.INVALID_PARAMS, `invalid params: ${message}`);
export const taskNotFound = (id: string) => new JsonRpcError(JsonRpcCode.TASK_NOT_FOUND, `task not found: ${id}`);

export type JsonRpcId = string | number | null;

export interface JsonRpcRequest {
  id: JsonRpcId;
  method: string;
  /** Absent params read as `{}`; by-position (array) params are refused. */
  params: Record<string, unknown>;
}

export interface JsonRpcSuccess {
  jsonrpc: '2.0';
  id: JsonRpcId;
  result: unknown;
}

export interface JsonRpcFailure {
  jsonrpc: '2.0';
  id: JsonRpcId;
  error: { code: number; message: string };
}

export function success(id: JsonRpcId, result: unknown): JsonRpcSuccess {
  return { jsonrpc: '2.0', id, result };
}

export function failure(id: JsonRpcId, error: JsonRpcError): JsonRpcFailure {
  return { jsonrpc: '2.0', id, error: { code: error.code, message: redactSecrets(error.message) } };
}

export type ParsedEnvelope = { ok: true; request: JsonRpcRequest } | { ok: false; id: JsonRpcId; error: JsonRpcError };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isId(value: unknown): value is JsonRpcId {
  return value === null || typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
}

const invalidRequest = (id: JsonRpcId, message: string): ParsedEnvelope => ({
  ok: false,
  id,
  error: new JsonRpcError(JsonRpcCode.INVALID_REQUEST, `invalid request: ${message}`),
});

const ENVELOPE_MEMBERS = new Set(['jsonrpc', 'id', 'method', 'params']);

/** Reads one JSON-RPC request from the raw body: -32700 when it is not JSON, -32600 when it is not a request. */
export function parseEnvelope(body: string | undefined): ParsedEnvelope {
  if (body === undefined || body.trim() === '') {
    return {
      ok: false,
      id: null,
      error: new JsonRpcError(JsonRpcCode.PARSE_ERROR, 'parse error: the request body is empty; expected a JSON-RPC 2.0 request object'),
    };
  }
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return {
      ok: false,
      id: null,
      error: new JsonRpcError(JsonRpcCode.PARSE_ERROR, `parse error: the request body is not valid JSON: ${reason}`),
    };
  }
  if (Array.isArray(value)) return invalidRequest(null, 'batch requests are not supported; send one request object per call');
  if (!isObject(value)) return invalidRequest(null, 'expected a JSON-RPC 2.0 request object');
  // The id is echoed even on a bad request, when it is one an answer can carry.
  const id = isId(value.id) ? value.id : null;
  if (value.jsonrpc !== '2.0') return invalidRequest(id, '"jsonrpc" must be "2.0"');
  if (!('id' in value))
    return invalidRequest(null, '"id" is missing; every A2A method answers, so a request needs an id (notifications are not supported)');
  if (!isId(value.id)) return invalidRequest(null, '"id" must be a string, a number or null');
  const unknown = Object.keys(value).filter((key) => !ENVELOPE_MEMBERS.has(key));
  if (unknown.length > 0)
    return invalidRequest(id, `unknown member ${JSON.stringify(unknown[0])}; a request has only "jsonrpc", "id", "method" and "params"`);
  if (typeof value.method !== 'string' || value.method === '') return invalidRequest(id, '"method" must be a non-empty string');
  if (value.params !== undefined && !isObject(value.params)) {
    return { ok: false, id, error: invalidParams('"params" must be an object') };
  }
  return { ok: true, request: { id, method: value.method, params: (value.params as Record<string, unknown> | undefined) ?? {} } };
}

/**
 * Any failure as a JSON-RPC error. gRPC NOT_FOUND means the task (or the approval it waits
 * for) is unknown, INVALID_ARGUMENT a bad parameter; everything else is an internal error
 * whose message says which call failed, worded as the REST API words it.
 */
export function toJsonRpcError(error: unknown): { error: JsonRpcError; unexpected: boolean } {
  if (error instanceof JsonRpcError) return { error, unexpected: false };
  if (error instanceof ConversationBusy) {
    const text = `task ${error.conversationId} is busy: a turn is running on it (one at a time per task). Wait until it has ended (tasks/get shows it working until then) and send the message again.`;
    return { error: new JsonRpcError(JsonRpcCode.UNSUPPORTED_OPERATION, text), unexpected: false };
  }
  if (error instanceof RpcError || error instanceof ServiceError) {
    const message = redactSecrets(error.message);
    if (error.code === GrpcStatus.NOT_FOUND) return { error: new JsonRpcError(JsonRpcCode.TASK_NOT_FOUND, message), unexpected: false };
    if (error.code === GrpcStatus.INVALID_ARGUMENT) return { error: invalidParams(message), unexpected: false };
  }
  const failure = failureOf(error);
  if (failure.status === 401 || failure.status === 403)
    return { error: new JsonRpcError(JsonRpcCode.ACCESS_DENIED, failure.message), unexpected: false };
  return { error: new JsonRpcError(JsonRpcCode.INTERNAL_ERROR, failure.message), unexpected: failure.unexpected };
}
