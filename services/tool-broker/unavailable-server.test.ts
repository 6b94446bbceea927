import { afterEach, describe, expect, it } from 'vitest';
import { ToolBrokerServiceService } from '../../gen/ts/asg/tools/v1/tools.js';
import { backoffDelay } from '../common/backoff.js';
import { configSchema } from '../common/config/schema.js';
import { configSlice } from '../common/config/slices.js';
import { createPromiseClient } from '../common/grpc/client.js';
import { until } from '../../test/support/until.js';
import { ToolComposite } from './composite.js';
import { startToolBroker } from './index.js';
import { RECONNECT, reconnectBackoff } from './reconnect.js';
import { lineLogger } from '../../test/support/line-logger.js';

/** An MCP server that cannot start is reported once, retried in the background, and the broker serves without it. */

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const FAST = { initialMs: 20, maxMs: 80, startupMs: 300 };
const servers = (entries: unknown[]) => configSchema.parse({ mcp_servers: entries }).mcp_servers;
/** A server that says why on stderr and exits 3 before any handshake. */
const crashing = {
  name: 'crashing',
  command: process.execPath,
  args: ['-e', "console.error('loading config'); console.error('boom: no such table'); process.exit(3)"],
};
const missing = { name: 'missing', command: 'asg-no-such-mcp-server-7f3a' };

describe('an MCP server that cannot start', () => {
  it('is reported once, with the command, exit code and its stderr, while retries go on in the background', async () => {
    const log = lineLogger();
    const composite = await ToolComposite.start(servers([crashing]), log, FAST);
    cleanups.push(() => composite.close());
    // Several background retries, all failing the same way.
    await until('three background retries', () => log.lines.filter((line) => line.includes('MCP server retry scheduled')).length >= 4);
    const loud = log.lines.filter((line) => /^(warn|error) /.test(line));
    expect(loud).toHaveLength(1);
    expect(loud[0]).toContain('MCP server unavailable; the agent runs without its tools');
    const [server] = composite.servers();
    expect(server).toMatchObject({ name: 'crashing', available: false, required: false });
    expect(server!.error).toMatch(
      /^MCP server crashing could not be started: command `.*node -e .*` exited with code 3 before the MCP handshake; last stderr lines:\n {2}loading config\n {2}boom: no such table$/,
    );
    // The stderr lines are in the report, not logged one by one.
    expect(log.lines.filter((line) => line.includes('MCP server stderr'))).toEqual([]);
    expect(composite.listTools()).toEqual([]);
  });

  it('names a command that does not exist as such', async () => {
    const log = lineLogger();
    const composite = await ToolComposite.start(servers([missing]), log, FAST);
    cleanups.push(() => composite.close());
    expect(composite.servers()[0]!.error).toMatch(
      /^MCP server missing could not be started: command `asg-no-such-mcp-server-7f3a` failed: .*ENOENT.* \(command not found: check "command" and PATH\)$/,
    );
  });

  it('shows as unavailable over gRPC, and the broker serves its other servers', async () => {
    const log = lineLogger();
    const service = await startToolBroker({
      config: configSlice(configSchema.parse({ mcp_servers: [missing] }), 'toolBroker'),
      listen: '127.0.0.1:0',
      log,
    });
    cleanups.push(() => service.stop());
    const client = createPromiseClient(ToolBrokerServiceService, service.address, 'test', 5000);
    cleanups.push(() => client.close());
    const { tools, servers: listed } = await client.listTools({});
    expect(tools).toEqual([]);
    expect(listed).toEqual([
      {
        name: 'missing',
        available: false,
        required: false,
        error: expect.stringContaining('command `asg-no-such-mcp-server-7f3a` failed'),
      },
    ]);
  });

  it('stops startup when it is required, with that report', async () => {
    const log = lineLogger();
    await expect(ToolComposite.start(servers([{ ...crashing, required: true }]), log, FAST)).rejects.toThrow(
      /^MCP server crashing could not be started: command .* exited with code 3 before the MCP handshake; last stderr lines:\n {2}loading config\n {2}boom: no such table \(required: true, so the agent does not start without it\)$/,
    );
  });
});

describe('reconnect backoff', () => {
  it('doubles from the initial delay up to the cap, with half of each delay random', () => {
    const policy = reconnectBackoff({ initialMs: 100, maxMs: 1000, startupMs: 0 });
    expect([1, 2, 3, 4, 5, 40].map((failures) => backoffDelay(policy, failures, () => 0))).toEqual([50, 100, 200, 400, 500, 500]);
    expect([1, 2, 3, 4, 5, 40].map((failures) => backoffDelay(policy, failures, () => 0.999999))).toEqual([100, 200, 400, 800, 1000, 1000]);
    expect(backoffDelay(reconnectBackoff(RECONNECT), 1000, () => 0.5)).toBe(22_500);
  });
});
