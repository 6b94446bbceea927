/** mcp-resources: the SQLite-backed built-in MCP server, over stdio or Streamable HTTP. */
export { serveMcpHttp, startMcpResourcesHttp, type McpHttpEndpoint } from './http.js';
export { runMcpResourcesStdio } from './stdio.js';
