import { expect, vi } from 'vitest';
/** One server-sent event as a client sees it (HTML's event stream interpretation, without retry). */
export interface SseEvent {
  /** The `id:` of this message, when it had one. */
  id?: string;
  event: string;
  data: string;
}

/** Splits a complete event-stream text into events; comments and blank-data messages are dropped. */
function parseSse(text: string): SseEvent[] {
  const events: SseEvent[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    let id: string | undefined;
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line === '' || line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'id') id = value;
      else if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
    if (data.length > 0) events.push({ ...(id !== undefined && { id }), event, data: data.join('\n') });
  }
  return events;
}

export interface SseSession {
  status: number;
  headers: Headers;
  /** Every complete event so far. */
  events: SseEvent[];
  /** The body text when the answer was not an event stream (an error). */
  text?: string;
  /** The server ended the stream. */
  ended: boolean;
  close(): void;
}

/** Opens an event stream and keeps reading it in the background until `close()`. */
export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseSession> {
  const abort = new AbortController();
  const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
  const session: SseSession = { status: response.status, headers: response.headers, events: [], ended: false, close: () => abort.abort() };
  if (!response.headers.get('content-type')?.startsWith('text/event-stream')) {
    session.text = await response.text();
    return session;
  }
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  void (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) {
          session.ended = true;
          return;
        }
        buffer += value;
        const end = buffer.lastIndexOf('\n\n');
        if (end < 0) continue;
        session.events.push(...parseSse(buffer.slice(0, end)));
        buffer = buffer.slice(end + 2);
      }
    } catch {
      /* closed */
    }
  })();
  return session;
}

/** The stored events of a stream (those with an id) as "id:event", in the order received. */
export function storedSseEvents(events: readonly SseEvent[]): string[] {
  return events.filter((event) => event.id !== undefined).map((event) => `${event.id}:${event.event}`);
}

/**
 * Reconnects to `url` with `Last-Event-ID: lastSeen` and waits until the new reader has
 * exactly the stored events that `steady` (a reader connected all along) got after
 * `lastSeen`, in the same order; checks the steady reader's ids are increasing with no repeat.
 * Returns how many events the reconnected reader caught up on.
 */
export async function expectResumeMissesNone(url: string, lastSeen: string, steady: SseSession, timeoutMs = 10_000): Promise<number> {
  const resumed = await openSse(url, { 'Last-Event-ID': lastSeen });
  try {
    const missed = () => storedSseEvents(steady.events).filter((entry) => Number(entry.split(':')[0]) > Number(lastSeen));
    await vi.waitFor(() => expect(storedSseEvents(resumed.events)).toEqual(missed()), { timeout: timeoutMs });
    const ids = storedSseEvents(steady.events).map((entry) => Number(entry.split(':')[0]));
    expect(ids).toEqual([...new Set(ids)].sort((x, y) => x - y));
    return missed().length;
  } finally {
    resumed.close();
  }
}
