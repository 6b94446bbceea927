import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../../test/support/until.js';
import { EventTooLarge, openEventStream, readEvents, sseFrame, type EventStream, type ReadEvent } from './sse.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** A server whose every request is answered by `serve` with an event stream. */
async function serveEvents(
  serve: (stream: EventStream, res: ServerResponse) => void,
  keepAliveMs?: number,
): Promise<{ url: string; streams: EventStream[] }> {
  const streams: EventStream[] = [];
  const server: Server = createServer((_req, res) => {
    const stream = openEventStream(res, keepAliveMs);
    streams.push(stream);
    serve(stream, res);
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  cleanups.push(() => void server.closeAllConnections());
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, streams };
}

async function collect(events: AsyncGenerator<ReadEvent, void>): Promise<ReadEvent[]> {
  const read: ReadEvent[] = [];
  for await (const event of events) read.push(event);
  return read;
}

/** A body that arrives in the given pieces. */
function bodyOf(...pieces: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const piece of pieces) controller.enqueue(encoder.encode(piece));
      controller.close();
    },
  });
}

describe('sseFrame', () => {
  it('writes id, event and one data line per line of the data; JSON for anything but a string', () => {
    expect(sseFrame({ id: '12', event: 'message_added', data: { a: 'x\ny' } })).toBe(
      'id: 12\nevent: message_added\ndata: {"a":"x\\ny"}\n\n',
    );
    expect(sseFrame({ data: '[DONE]' })).toBe('data: [DONE]\n\n');
    expect(sseFrame({ data: 'one\ntwo\r\nthree' })).toBe('data: one\ndata: two\ndata: three\n\n');
  });

  it('refuses an id or event name that would start a field of its own', () => {
    expect(() => sseFrame({ id: '1\ndata: forged', data: {} })).toThrow(/line break/);
    expect(() => sseFrame({ event: 'a\rb', data: {} })).toThrow(/line break/);
  });
});

describe('an event stream, written and read back', () => {
  it('keeps each event’s id, type and data, over real HTTP with the same headers on every stream', async () => {
    const { url } = await serveEvents((stream) => {
      stream.send({ event: 'snapshot', data: { conversation: { id: 'c1' } } });
      stream.send({ id: '17', event: 'message_added', data: { text: 'first\nsecond' } });
      stream.send({ id: '18', data: 'two\nlines' });
      stream.send({ data: '[DONE]' });
      stream.end();
    });
    const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
    expect(response.status).toBe(200);
    expect(
      Object.fromEntries(
        ['content-type', 'cache-control', 'connection', 'x-accel-buffering'].map((name) => [name, response.headers.get(name)]),
      ),
    ).toEqual({
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    expect(await collect(readEvents(response.body!))).toEqual([
      { event: 'snapshot', data: '{"conversation":{"id":"c1"}}' },
      { id: '17', event: 'message_added', data: '{"text":"first\\nsecond"}' },
      { id: '18', event: 'message', data: 'two\nlines' },
      { event: 'message', data: '[DONE]' },
    ]);
  });

  it('sends a comment line while quiet, which a reader passes over', async () => {
    const { url, streams } = await serveEvents(() => undefined, 20);
    const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
    const [raw, parsed] = response.body!.tee();
    const reader = raw.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    await until('two heartbeats', async () => {
      text += (await reader.read()).value ?? '';
      return text.split(': keep-alive\n\n').length > 2;
    });
    void reader.cancel();
    streams[0]!.send({ id: '1', data: 'after the heartbeats' });
    streams[0]!.end();
    expect(await collect(readEvents(parsed))).toEqual([{ id: '1', event: 'message', data: 'after the heartbeats' }]);
  });

  it('knows when the client went away, and sends nothing more', async () => {
    const { url, streams } = await serveEvents((stream) => stream.send({ data: 'hello' }));
    const controller = new AbortController();
    const response = await fetch(url, { signal: controller.signal });
    const events = readEvents(response.body!);
    expect((await events.next()).value).toEqual({ event: 'message', data: 'hello' });
    expect(streams[0]!.closed).toBe(false);
    controller.abort();
    await until('the server to see the client gone', () => streams[0]!.closed);
    // Neither a send nor an end after that throws.
    streams[0]!.send({ data: 'to nobody' });
    streams[0]!.end();
  });
});

describe('readEvents', () => {
  it('reads events cut anywhere between chunks, with CRLF or CR line ends, and skips comments, retry and unknown fields', async () => {
    const body = bodyOf(
      ': hi\r\nid: 4\r',
      '\nevent: st',
      'atus\r\nretry: 10\r\nfoo: bar\r\ndata: {"a"',
      ':1}\r\n\r\ndata: x\r\rdata: y\n',
      '\n',
    );
    expect(await collect(readEvents(body))).toEqual([
      { id: '4', event: 'status', data: '{"a":1}' },
      { event: 'message', data: 'x' },
      { event: 'message', data: 'y' },
    ]);
  });

  it('gives up on an event larger than it takes, rather than fill memory', async () => {
    const events = readEvents(bodyOf('data: small\n\n', `data: ${'x'.repeat(2_000)}`), 1_000);
    expect((await events.next()).value).toEqual({ event: 'message', data: 'small' });
    await expect(events.next()).rejects.toBeInstanceOf(EventTooLarge);
  });

  it('cancels the body when the reader leaves early', async () => {
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('data: one\n\ndata: two\n\n'));
      },
      cancel() {
        cancelled = true;
      },
    });
    for await (const event of readEvents(body)) {
      expect(event.data).toBe('one');
      break;
    }
    expect(cancelled).toBe(true);
  });
});
