import type { Response } from 'express';

/**
 * Server-sent events as A2A's streaming methods send them: each event one `data:` line
 * with a JSON-RPC answer, then a blank line. A comment line goes out while nothing else
 * does, so that proxies and clients do not take a long turn for a dead connection.
 */

export const SSE_KEEPALIVE_MS = 15_000;

export interface SseWriter {
  send(data: unknown): void;
  end(): void;
  /** True once the client went away: nothing more reaches it. */
  readonly closed: boolean;
}

export function openSse(res: Response, keepAliveMs = SSE_KEEPALIVE_MS): SseWriter {
  res.status(200);
  res.setHeader('Content-Type', 'text/event-stream');
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('Connection', 'keep-alive');
  // nginx buffers responses unless told otherwise.
  res.setHeader('X-Accel-Buffering', 'no');
  res.flushHeaders();
  let closed = false;
  const timer = setInterval(() => {
    if (!closed) res.write(': keep-alive\n\n');
  }, keepAliveMs);
  timer.unref();
  res.once('close', () => {
    closed = true;
    clearInterval(timer);
  });
  return {
    send(data) {
      if (!closed) res.write(`data: ${JSON.stringify(data)}\n\n`);
    },
    end() {
      clearInterval(timer);
      if (!res.writableEnded) res.end();
    },
    get closed() {
      return closed;
    },
  };
}
