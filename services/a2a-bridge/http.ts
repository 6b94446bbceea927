import { ServiceError } from '../common/grpc/errors.js';
import { EventTooLarge, readEvents } from '../common/sse.js';
import type { OutboundCall } from './outbound.js';

/**
 * The bridge's only way out: fetch with the call's deadline, the caller's headers, and the
 * failures sorted the way the contract wants them. A peer that cannot be reached or answers
 * 5xx fails UNAVAILABLE, one that is too slow DEADLINE_EXCEEDED; everything else comes back
 * to the caller as data, because what it means depends on what was asked (a 404 while looking
 * for a card is normal, a -32601 while probing means "not this dialect").
 */

interface HttpAnswer {
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

export async function getJson(
  call: OutboundCall,
  url: string,
  extraHeaders: Record<string, string> = {},
): Promise<{ status: number; json?: unknown }> {
  const answer = await exchange(call, url, { method: 'GET', headers: { Accept: 'application/json', ...call.headers, ...extraHeaders } });
  if (answer.status < 200 || answer.status >= 300) return { status: answer.status };
  try {
    return { status: answer.status, json: JSON.parse(answer.text) };
  } catch {
    return { status: answer.status };
  }
}

let nextId = 1;

export async function postJsonRpc(
  call: OutboundCall,
  endpoint: string,
  request: JsonRpcRequest,
  extraHeaders: Record<string, string> = {},
): Promise<JsonRpcOutcome> {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: nextId++,
    method: request.method,
    ...(request.params !== undefined ? { params: request.params } : {}),
  });
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
  return envelopeOutcome(json, answer.status, answer.statusText);
}

/** A stream that broke before it ended (a reset connection, a body cut short): resubscribe, the task goes on at the peer. */
export class StreamCut extends Error {
  override name = 'StreamCut';
}

/**
 * What a streaming JSON-RPC request opened: the peer's events (each a JSON-RPC result or
 * error), or a plain answer when it answered without a stream (an error, or a peer that does
 * not stream after all).
 */
export type JsonRpcStream =
  | {
      kind: 'stream';
      events: AsyncGenerator<JsonRpcOutcome, void>;
      /** The `id:` of the latest event that had one (HTML's last event ID): where a resubscribe picks up. */
      lastEventId(): string | undefined;
    }
  | JsonRpcOutcome;

function envelopeOutcome(json: unknown, status: number, statusText: string): JsonRpcOutcome {
  if (json && typeof json === 'object' && !Array.isArray(json)) {
    const envelope = json as { error?: { code?: unknown; message?: unknown }; result?: unknown };
    if (envelope.error && typeof envelope.error === 'object' && typeof envelope.error.code === 'number') {
      return {
        kind: 'error',
        code: envelope.error.code,
        message: typeof envelope.error.message === 'string' ? envelope.error.message : '',
      };
    }
    if (status >= 200 && status < 300 && 'result' in envelope) return { kind: 'result', result: envelope.result };
  }
  return { kind: 'http', status, detail: `HTTP ${status} ${statusText}, not a JSON-RPC response`.trim() };
}

/**
 * Posts a streaming JSON-RPC request (`Accept: text/event-stream`) under the call's deadline.
 * Fails like postJsonRpc before the stream opens; once open, a broken connection ends the
 * events with StreamCut, the deadline with DEADLINE_EXCEEDED.
 */
export async function postJsonRpcStream(
  call: OutboundCall,
  endpoint: string,
  request: JsonRpcRequest,
  extraHeaders: Record<string, string> = {},
): Promise<JsonRpcStream> {
  const remaining = call.deadline - Date.now();
  if (remaining <= 0) throw call.deadlineExceeded();
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), remaining);
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: nextId++,
    method: request.method,
    ...(request.params !== undefined ? { params: request.params } : {}),
  });
  let response: Response;
  try {
    response = await fetch(endpoint, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream, application/json', ...call.headers, ...extraHeaders },
      body,
      signal: controller.signal,
    });
  } catch (error) {
    clearTimeout(timer);
    if (controller.signal.aborted) throw call.deadlineExceeded();
    throw call.unavailable(networkReason(error));
  }
  const streamed = (response.headers.get('content-type') ?? '').toLowerCase().startsWith('text/event-stream');
  if (!streamed || !response.body) {
    try {
      const text = await response.text();
      if (response.status >= 500) throw call.unavailable(`HTTP ${response.status} ${response.statusText}`.trim());
      try {
        return envelopeOutcome(JSON.parse(text), response.status, response.statusText);
      } catch {
        return { kind: 'http', status: response.status, detail: `HTTP ${response.status} ${response.statusText}, not JSON`.trim() };
      }
    } catch (error) {
      if (controller.signal.aborted) throw call.deadlineExceeded();
      if (error instanceof ServiceError) throw error;
      throw call.unavailable(networkReason(error));
    } finally {
      clearTimeout(timer);
    }
  }
  const stream = response.body;
  let lastEventId: string | undefined;
  async function* events(): AsyncGenerator<JsonRpcOutcome, void> {
    try {
      for await (const event of readEvents(stream)) {
        if (event.id !== undefined) lastEventId = event.id;
        // `message` carries the answers; `error` a JSON-RPC error (as A2A's SDK sends one); other types are not A2A's.
        if (event.event !== 'message' && event.event !== 'error') continue;
        let json: unknown;
        try {
          json = JSON.parse(event.data);
        } catch {
          yield { kind: 'http', status: response.status, detail: `an ${event.event} event of the stream is not JSON` };
          continue;
        }
        const outcome = envelopeOutcome(json, response.status, response.statusText);
        yield event.event === 'error' && outcome.kind === 'result'
          ? { kind: 'http', status: response.status, detail: 'an error event of the stream is no JSON-RPC error' }
          : outcome;
      }
    } catch (error) {
      if (controller.signal.aborted) throw call.deadlineExceeded();
      // A peer that sends one event larger than we read is not cut: the same event would come again.
      if (error instanceof EventTooLarge) {
        yield { kind: 'http', status: response.status, detail: error.message };
        return;
      }
      throw new StreamCut(call.scrub(networkReason(error)));
    } finally {
      clearTimeout(timer);
      // A stream left early (the task settled) is closed, not left to the deadline.
      controller.abort();
    }
  }
  return { kind: 'stream', events: events(), lastEventId: () => lastEventId };
}
