import type { ServerResponse } from 'node:http';
import { EventSourceParserStream } from 'eventsource-parser/stream';

/**
 * Server-sent events (HTML's event stream format), both ways: every event stream the product
 * answers with is written by `openEventStream`, and every one it reads is parsed by `readEvents`
 * (eventsource-parser), so `id:`, `event:` and multi-line `data:` mean the same on both sides.
 */

/** A comment line this often keeps proxies and clients from dropping a quiet stream (a long turn, a slow tool). */
const SSE_KEEPALIVE_MS = 15_000;

/** What a peer may send as one event before its stream is given up on: a stream is no way to fill our memory. */
const MAX_EVENT_CHARS = 4 * 1024 * 1024;

export interface SseMessage {
  /** Sent as `id:`: the id an EventSource sends back as `Last-Event-ID` when it reconnects. */
  id?: string;
  /** Sent as `event:`; a reader without one sees the type `message`. */
  event?: string;
  /** A string is sent as it is (OpenAI's `[DONE]`); anything else as JSON. */
  data: unknown;
}

/** One message in the wire format: each line of the data its own `data:` line, then a blank line. */
export function sseFrame(message: SseMessage): string {
  const text = typeof message.data === 'string' ? message.data : JSON.stringify(message.data);
  let frame = '';
  if (message.id !== undefined) frame += `id: ${oneLine(message.id, 'id')}\n`;
  if (message.event !== undefined) frame += `event: ${oneLine(message.event, 'event')}\n`;
  for (const line of text.split(/\r\n|\r|\n/)) frame += `data: ${line}\n`;
  return `${frame}\n`;
}

/** A line break in an id or an event name would start a field of its own: refused. */
function oneLine(value: string, field: string): string {
  if (/[\r\n\0]/.test(value)) throw new TypeError(`an SSE ${field} cannot hold a line break or NUL: ${JSON.stringify(value)}`);
  return value;
}

export interface EventStream {
  /** Sends one message; nothing once the client went away or the stream ended. */
  send(message: SseMessage): void;
  /** Stops the heartbeat and ends the response (once). */
  end(): void;
  /** True once the client went away or `end()` was called: nothing more reaches it. */
  readonly closed: boolean;
}

/**
 * Answers `res` with an event stream: status 200 and the same headers on every stream
 * (`Cache-Control: no-cache` so that no cache keeps a live stream, `X-Accel-Buffering: no`
 * so that nginx passes each event on at once, and on HTTP/1.x `Connection: keep-alive`;
 * HTTP/2 forbids connection headers), then a comment line every `keepAliveMs`.
 */
export function openEventStream(res: ServerResponse, keepAliveMs = SSE_KEEPALIVE_MS): EventStream {
  res.statusCode = 200;
  res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
  res.setHeader('Cache-Control', 'no-cache');
  if ((res.req?.httpVersionMajor ?? 1) < 2) res.setHeader('Connection', 'keep-alive');
  res.setHeader('X-Accel-Buffering', 'no');
  res.flushHeaders();
  let ended = false;
  const open = () => !ended && !res.writableEnded && !res.destroyed;
  const heartbeat = setInterval(() => {
    if (open()) res.write(': keep-alive\n\n');
  }, keepAliveMs);
  heartbeat.unref();
  res.once('close', () => {
    ended = true;
    clearInterval(heartbeat);
  });
  return {
    send(message) {
      if (open()) res.write(sseFrame(message));
    },
    end() {
      clearInterval(heartbeat);
      if (!ended && !res.writableEnded) res.end();
      ended = true;
    },
    get closed() {
      return !open();
    },
  };
}

/** One event as read: `event` is `message` when the stream named none (HTML's default). */
export interface ReadEvent {
  id?: string;
  event: string;
  data: string;
}

/** An event larger than the reader takes: the stream is given up on, not resynchronised. */
export class EventTooLarge extends Error {
  override name = 'EventTooLarge';
}

/**
 * The events of an event-stream body, as they complete. Comments, `retry:` and unknown
 * fields are skipped, as an EventSource skips them. An event over `maxEventChars` ends the
 * events with EventTooLarge; a body that breaks ends them with its own error. Leaving early
 * cancels the body.
 */
export async function* readEvents(body: ReadableStream<Uint8Array>, maxEventChars = MAX_EVENT_CHARS): AsyncGenerator<ReadEvent, void> {
  const reader = body
    .pipeThrough(new TextDecoderStream())
    .pipeThrough(new EventSourceParserStream({ maxBufferSize: maxEventChars }))
    .getReader();
  let done = false;
  try {
    for (;;) {
      let next: Awaited<ReturnType<typeof reader.read>>;
      try {
        next = await reader.read();
      } catch (error) {
        if (error instanceof Error && 'type' in error && error.type === 'max-buffer-size-exceeded')
          throw new EventTooLarge(`an event of the stream is over ${maxEventChars} characters`);
        throw error;
      }
      if (next.done) {
        done = true;
        return;
      }
      const { id, event, data } = next.value;
      yield { ...(id !== undefined && { id }), event: event ?? 'message', data };
    }
  } finally {
    if (!done) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
