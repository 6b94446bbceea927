import { ConfigError, loadConfig } from '../services/common/config/load.js';
import type { AgentConfig } from '../services/common/config/schema.js';
import { fail, USAGE } from './usage.js';

/** The agent configuration in `file`, or exit 2 with every problem in it named. */
export function readConfig(file: string): AgentConfig {
  try {
    return loadConfig(file);
  } catch (error) {
    if (error instanceof ConfigError) fail(error.message, 2);
    throw error;
  }
}

/** `asg config check FILE`: validates the file and says what it defines. */
export function configCheck(file: string | undefined): void {
  if (!file) fail(`config check needs a FILE\n\n${USAGE}`, 2);
  const config = readConfig(file);
  process.stdout.write(`${file}: valid (model ${config.llm.model}, ${config.mcp_servers.length} MCP server(s), ${config.a2a.length} A2A agent(s), ${config.agent ? 'agent tree' : 'simple mode'})\n`);
}
