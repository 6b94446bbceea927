import { existsSync } from 'node:fs';
import { basename, isAbsolute, resolve } from 'node:path';
import type { ConfigProblem } from './check.js';
import type { AgentConfig } from './schema.js';

/**
 * The relative paths of the stdio MCP servers, checked where the tool broker will start them:
 * a program given as a relative path (`./bin/server`), or the script `node` runs
 * (`node bin/asg …`), is taken from the working folder, so a configuration copied elsewhere, or
 * started from another folder, would start without its tools. Refused at start (and by
 * `asg config check`) with the reason instead. Bare program names (`npx`, `uvx`) are found on
 * the PATH when they start and are not judged here.
 */
export function stdioPathProblems(config: Pick<AgentConfig, 'mcp_servers'>, cwd = process.cwd()): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  config.mcp_servers.forEach((server, index) => {
    if (!server.command) return;
    const missing = (path: string) => !isAbsolute(path) && !existsSync(resolve(cwd, path));
    const reason = (path: string) =>
      `"${path}" does not exist in ${cwd}: relative paths are taken from the folder the agent starts in; ` +
      'start it from the folder this file expects, or give an absolute path';
    if (isPath(server.command) && missing(server.command)) {
      problems.push({ path: ['mcp_servers', index, 'command'], message: reason(server.command) });
      return;
    }
    // node's first argument, unless an option: the script it runs.
    const script = server.args[0];
    if (isNode(server.command) && script !== undefined && !script.startsWith('-') && missing(script))
      problems.push({ path: ['mcp_servers', index, 'args', 0], message: reason(script) });
  });
  return problems;
}

/** A command with a folder in it is a path; a bare name is looked up on the PATH. */
function isPath(command: string): boolean {
  return command.includes('/') || command.includes('\\');
}

function isNode(command: string): boolean {
  return /^node(\.exe)?$/i.test(basename(command)) || command === process.execPath;
}
