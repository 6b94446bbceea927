import { ServiceError } from '../common/grpc/errors.js';
import type { OutboundCall } from './outbound.js';

/**
 * The bridge's only way out: fetch with the call's deadline, the caller's headers, and the
 * failures sorted the way the contract wants them. A peer that cannot be reached or answers
 * 5xx fails UNAVAILABLE, one that is too slow DEADLINE_EXCEEDED; everything else comes back
 * to the caller as data, because what it means depends on what was asked (a 404 while looking
 * for a card is normal, a -32601 while probing means "not this dialect").
 */

export interface HttpAnswer {
  status: number;
  statusText: string;
  text: string;
}

/** What a peer said to a JSON-RPC request. */
export type JsonRpcOutcome =
  | { kind: 'result'; result: unknown }
  | { kind: 'error'; code: number; message: string }
  /** An answer that is no JSON-RPC response at all (a 404 page, a 400 with some other body). */
  | { kind: 'http'; status: number; detail: string };

export interface JsonRpcRequest {
  method: string;
  params?: unknown;
}

async function exchange(call: OutboundCall, url: string, init: RequestInit): Promise<HttpAnswer> {
  const remaining = call.deadline - Date.now();
  if (remaining <= 0) throw call.deadlineExceeded();
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), remaining);
  try {
    const response = await fetch(url, { ...init, signal: controller.signal });
    // The body is read under the same deadline: a peer that sends headers and then stalls is still too slow.
    const text = await response.text();
    if (response.status >= 500) throw call.unavailable(`HTTP ${response.status} ${response.statusText}`.trim());
    return { status: response.status, statusText: response.statusText, text };
  } catch (error) {
    if (controller.signal.aborted) throw call.deadlineExceeded();
    if (error instanceof ServiceError) throw error;
    throw call.unavailable(networkReason(error));
  } finally {
    clearTimeout(timer);
  }
}

/** What undici says went wrong, e.g. "connect ECONNREFUSED 127.0.0.1:7999". */
function networkReason(error: unknown): string {
  const cause = (error as { cause?: unknown } | undefined)?.cause;
  if (cause instanceof AggregateError && cause.errors[0] instanceof Error) return cause.errors[0].message;
  if (cause instanceof Error) return cause.message || (cause as { code?: string }).code || String(cause);
  return error instanceof Error ? error.message : String(error);
}

export async function getJson(call: OutboundCall, url: string, extraHeaders: Record<string, string> = {}): Promise<{ status: number; json?: unknown }> {
  const answer = await exchange(call, url, { method: 'GET', headers: { Accept: 'application/json', ...call.headers, ...extraHeaders } });
  if (answer.status < 200 || answer.status >= 300) return { status: answer.status };
  try {
    return { status: answer.status, json: JSON.parse(answer.text) };
  } catch {
    return { status: answer.status };
  }
}

let nextId = 1;

export async function postJsonRpc(call: OutboundCall, endpoint: string, request: JsonRpcRequest, extraHeaders: Record<string, string> = {}): Promise<JsonRpcOutcome> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: request.method, ...(request.params !== undefined ? { params: request.params } : {}) });
  const answer = await exchange(call, endpoint, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json', ...call.headers, ...extraHeaders },
    body,
  });
  let json: unknown;
  try {
    json = JSON.parse(answer.text);
  } catch {
    return { kind: 'http', status: answer.status, detail: `HTTP ${answer.status} ${answer.statusText}, not JSON`.trim() };
  }
  if (json && typeof json === 'object' && !Array.isArray(json)) {
    const envelope = json as { error?: { code?: unknown; message?: unknown }; result?: unknown };
    if (envelope.error && typeof envelope.error === 'object' && typeof envelope.error.code === 'number') {
      return { kind: 'error', code: envelope.error.code, message: typeof envelope.error.message === 'string' ? envelope.error.message : '' };
    }
    if (answer.status >= 200 && answer.status < 300 && 'result' in envelope) return { kind: 'result', result: envelope.result };
  }
  return { kind: 'http', status: answer.status, detail: `HTTP ${answer.status} ${answer.statusText}, not a JSON-RPC response`.trim() };
}
