import { afterEach, describe, expect, it } from 'vitest';
import { ToolBrokerServiceService } from '../../gen/ts/asg/tools/v1/tools.js';
import { configSchema } from '../common/config/schema.js';
import { configSlice } from '../common/config/slices.js';
import { createPromiseClient } from '../common/grpc/client.js';
import { ROOM_QUESTION, startElicitingServer, type ElicitingServer } from '../../test/fixtures/eliciting-mcp-server.js';
import { startToolBroker } from './index.js';
import { lineLogger } from '../../test/support/line-logger.js';

/**
 * A server that asks for input during a call (MCP 2026-07-28 `input_required` with a
 * form elicitation) is told from a failure: the broker hands the question back
 * (CallToolResponse.input_required) and, called again with the answer and the server's
 * requestState, the call goes on. The server is real (test/fixtures/eliciting-mcp-server.ts).
 */

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function setUp(): Promise<{
  rooms: ElicitingServer;
  call: (
    request: Record<string, unknown>,
  ) => ReturnType<ReturnType<typeof createPromiseClient<typeof ToolBrokerServiceService>>['callTool']>;
}> {
  const rooms = await startElicitingServer();
  cleanups.push(() => rooms.close());
  const service = await startToolBroker({
    config: configSlice(configSchema.parse({ mcp_servers: [{ name: 'rooms', url: rooms.url }] }), 'toolBroker'),
    listen: '127.0.0.1:0',
    log: lineLogger(),
  });
  cleanups.push(() => service.stop());
  const client = createPromiseClient(ToolBrokerServiceService, service.address, 'test', 10_000);
  cleanups.push(() => client.close());
  return {
    rooms,
    call: (request) =>
      client.callTool({
        name: 'book_room',
        argumentsJson: JSON.stringify({ room: 'A' }),
        approvalUuid: 'approval-under-test',
        unapprovedReason: '',
        ...request,
      }),
  };
}

describe('a server that asks for input during a call', () => {
  it('is answered with its question, not a failure, and nothing is booked yet', async () => {
    const { rooms, call } = await setUp();
    const asked = await call({});
    expect(asked).toMatchObject({ text: '', isError: false, server: 'rooms' });
    expect(asked.inputRequired?.requestState).toBe('room=A');
    expect(asked.inputRequired?.inputRequests).toEqual({ guest: { method: 'elicitation/create', params: ROOM_QUESTION } });
    expect(rooms.bookings).toEqual([]);
  });

  it('goes on with an accepted answer, once', async () => {
    const { rooms, call } = await setUp();
    const asked = await call({});
    const done = await call({
      requestState: asked.inputRequired!.requestState,
      inputResponsesJson: JSON.stringify({ guest: { action: 'accept', content: { name: 'Ada' } } }),
    });
    expect(done).toMatchObject({ text: 'room A booked for Ada', isError: false, server: 'rooms' });
    expect(done.inputRequired).toBeUndefined();
    expect(rooms.bookings).toEqual(['A:Ada']);
    expect(rooms.states).toEqual(['room=A']);
  });

  it('goes on with a decline, and the server books nothing', async () => {
    const { rooms, call } = await setUp();
    const asked = await call({});
    const done = await call({
      requestState: asked.inputRequired!.requestState,
      inputResponsesJson: JSON.stringify({ guest: { action: 'decline' } }),
    });
    expect(done.text).toBe('room A not booked: the answer was decline');
    expect(rooms.bookings).toEqual([]);
  });
});
