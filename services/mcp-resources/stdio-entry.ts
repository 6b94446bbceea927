import { parseArgs } from 'node:util';
import { runMcpResourcesStdio } from './index.js';

/**
 * A stdio launcher for tests and for MCP clients that start the server from source
 * (`node --import tsx services/mcp-resources/stdio-entry.ts --db FILE`); `bin/asg
 * mcp-resources` is the command for everything else.
 */
const { values } = parseArgs({ options: { db: { type: 'string', default: './resources.db' } } });
await runMcpResourcesStdio(values.db);
