import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stdioPathProblems } from './stdio-paths.js';

const folder = mkdtempSync(join(tmpdir(), 'asg-stdio-paths-'));
mkdirSync(join(folder, 'bin'));
writeFileSync(join(folder, 'bin', 'server'), '');

const servers = (...entries: { command?: string; url?: string; args?: string[] }[]) => ({
  mcp_servers: entries.map((entry, index) => ({ name: `s${index}`, args: [], ...entry })) as never,
});

describe('the stdio MCP servers’ relative paths', () => {
  it('accepts relative paths that exist in the working folder, absolute paths and bare program names', () => {
    expect(
      stdioPathProblems(
        servers(
          { command: 'node', args: ['bin/server', '--db', './not-yet.db'] },
          { command: './bin/server' },
          { command: 'npx', args: ['-y', 'some-server'] },
          { command: 'node', args: ['--import', 'tsx', 'missing.ts'] },
          { command: 'node', args: ['/nowhere/at/all.js'] },
          { url: 'http://127.0.0.1:1/mcp' },
        ),
        folder,
      ),
    ).toEqual([]);
  });

  it('refuses a program or a node script that is not there, saying where it was looked for', () => {
    expect(stdioPathProblems(servers({ command: 'node', args: ['bin/asg', 'mcp-resources'] }, { command: 'bin/other' }), folder)).toEqual([
      {
        path: ['mcp_servers', 0, 'args', 0],
        message: `"bin/asg" does not exist in ${folder}: relative paths are taken from the folder the agent starts in; start it from the folder this file expects, or give an absolute path`,
      },
      {
        path: ['mcp_servers', 1, 'command'],
        message: `"bin/other" does not exist in ${folder}: relative paths are taken from the folder the agent starts in; start it from the folder this file expects, or give an absolute path`,
      },
    ]);
  });
});
