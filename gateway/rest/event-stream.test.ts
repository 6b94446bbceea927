import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { GrpcStatus, RpcError } from '../../services/common/grpc/errors.js';
import type { Logger } from '../../services/common/log.js';
import { sseFrame } from '../../services/common/sse.js';
import { FakeEventFeed } from '../../test/support/fake-event-feed.js';
import { openSse } from '../../test/support/sse-reader.js';
import { conversationRecord, messageRecord } from '../../test/support/store-records.js';
import { createHttpApp } from '../http/app.js';
import { eventStreamRouter, parseLastEventId, sseMessageOf } from './event-stream.js';

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };

describe('sseFrame and sseMessageOf', () => {
  it('writes id, event and one line of JSON data', () => {
    expect(sseFrame({ id: '12', event: 'message_added', data: { a: 'x\ny' } })).toBe(
      'id: 12\nevent: message_added\ndata: {"a":"x\\ny"}\n\n',
    );
    expect(sseFrame({ event: 'text_delta', data: { text: 'hi' } })).toBe('event: text_delta\ndata: {"text":"hi"}\n\n');
  });

  it('gives stored events their id and live ones none', () => {
    const base = { conversation_id: 'c1', at: '' };
    expect(sseMessageOf({ ...base, id: 4, kind: 'status_changed', status: 'active' })).toMatchObject({ id: '4', event: 'status_changed' });
    expect(sseMessageOf({ ...base, id: 0, kind: 'text_delta', text: 'hi' })).not.toHaveProperty('id');
  });
});

describe('parseLastEventId', () => {
  it('reads decimal ids; absent or empty is a first connection', () => {
    expect(parseLastEventId(undefined)).toBe(0);
    expect(parseLastEventId('')).toBe(0);
    expect(parseLastEventId(' 42 ')).toBe(42);
  });

  it('refuses anything else with INVALID_ARGUMENT', () => {
    expect(() => parseLastEventId('abc')).toThrow(
      expect.objectContaining({ code: GrpcStatus.INVALID_ARGUMENT, message: expect.stringContaining('Last-Event-ID must be') }),
    );
  });
});

describe('GET /conversations/:id/events', () => {
  const feed = new FakeEventFeed();
  let server: Server;
  let url: string;
  const getConversation = async (id: string) => {
    if (id !== 'c1')
      throw new RpcError(GrpcStatus.NOT_FOUND, `conversation ${id} not found`, '/asg.store.v1.ConversationStoreService/GetConversation');
    return conversationRecord({ id: 'c1', sessionId: '4be2a91c' });
  };

  beforeAll(async () => {
    const viewConversation = async (id: string) => ({ conversation: await getConversation(id) });
    server = createServer(createHttpApp([eventStreamRouter({ feed, getConversation, viewConversation }, quiet)], quiet));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const added = (content: string) => feed.store({ conversationId: 'c1', messageAdded: messageRecord({ id: `m-${content}`, content }) });

  it('starts with a snapshot, then sends stored events with their id and live ones without', async () => {
    const stream = await openSse(`${url}/conversations/c1/events`);
    expect(stream.status).toBe(200);
    expect(stream.headers.get('x-session-id')).toBe('4be2a91c');
    await vi.waitFor(() => expect(stream.events).toHaveLength(1));
    const stored = added('one');
    feed.publish({ conversationId: 'c1', textDelta: { text: 'typing' } });
    await vi.waitFor(() => expect(stream.events).toHaveLength(3));
    stream.close();
    expect(stream.events[0]).toMatchObject({ event: 'snapshot' });
    expect(JSON.parse(stream.events[0]!.data)).toEqual({
      conversation: expect.objectContaining({ id: 'c1', session_id: '4be2a91c', status: 'active' }),
    });
    expect(stream.events[1]).toMatchObject({ id: String(stored.id), event: 'message_added' });
    expect(JSON.parse(stream.events[1]!.data)).toMatchObject({ id: stored.id, kind: 'message_added', message: { content: 'one' } });
    expect(stream.events[2]).toEqual({ event: 'text_delta', data: expect.stringContaining('"text":"typing"') });
  });

  it('with Last-Event-ID, sends exactly the stored events after it, in order, and no snapshot', async () => {
    const seen = added('seen');
    const missed = [added('missed-1'), added('missed-2')];
    feed.store({ conversationId: 'other', messageAdded: messageRecord() });
    const stream = await openSse(`${url}/conversations/c1/events`, { 'Last-Event-ID': String(seen.id) });
    await vi.waitFor(() => expect(stream.events).toHaveLength(2));
    const later = added('later');
    await vi.waitFor(() => expect(stream.events).toHaveLength(3));
    stream.close();
    expect(stream.events.map((event) => Number(event.id))).toEqual([...missed, later].map((event) => event.id));
    expect(stream.events.map((event) => JSON.parse(event.data).message.content)).toEqual(['missed-1', 'missed-2', 'later']);
  });

  it('answers an unknown conversation with 404 and a bad Last-Event-ID with 400, as JSON', async () => {
    const unknown = await openSse(`${url}/conversations/nope/events`);
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.text!)).toEqual({ error: 'conversation nope not found' });
    const bad = await openSse(`${url}/conversations/c1/events`, { 'Last-Event-ID': 'yesterday' });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text!).error).toMatch(/^Last-Event-ID must be/);
  });
});
