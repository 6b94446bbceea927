/** Stopping the tool broker leaves no MCP stdio child behind, even one that will not stop. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { configSchema } from '../common/config/schema.js';
import { createLogger } from '../common/log.js';
import { ToolComposite } from './composite.js';
import { isAlive } from './mcp-connection.js';

const STUBBORN = fileURLToPath(new URL('../../test/fixtures/stubborn-mcp-server.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'tool-broker-stop-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the tool broker stops its MCP children', () => {
  // Its bound is the test's timeout: stdin closed, SIGTERM after 1 s, SIGKILL after another (mcp-connection.ts).
  it('kills a stdio server that ignores its closed stdin and SIGTERM, within a few seconds', { timeout: 15_000 }, async () => {
    const pidFile = join(dir, 'stubborn.pid');
    const config = configSchema.parse({
      mcp_servers: [{ name: 'stubborn', command: process.execPath, args: [STUBBORN], env: { PID_FILE: pidFile } }],
    });
    const composite = await ToolComposite.start(config.mcp_servers, createLogger('tool-broker-test'));
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(isAlive(pid)).toBe(true);
    await composite.close();
    // Gone when close() returns: the SIGKILL, as it ignores the rest.
    expect(isAlive(pid)).toBe(false);
  });
});
