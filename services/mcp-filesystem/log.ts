import { stderrLogger } from '../common/stderr-log.js';

/** Log lines for mcp-filesystem, as JSON on **stderr**: in stdio mode stdout carries the MCP protocol and nothing else. */
export const logToStderr = stderrLogger('mcp-filesystem');
