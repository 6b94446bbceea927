/** mcp-filesystem: the built-in sandboxed filesystem MCP server, over stdio or Streamable HTTP. */
export {
  FilesystemConfigError,
  loadFilesystemConfig,
  parseFilesystemConfig,
  ROOT_TOOLS,
  type FilesystemConfig,
  type RootToolName,
} from './config.js';
export { MCP_PATH, startFilesystemHttp, type FilesystemHttpServer } from './http.js';
export { Sandbox } from './sandbox.js';
export { createFilesystemServer, SERVER_INFO } from './server.js';
export { runFilesystemStdio } from './stdio.js';
export { callTool, FILESYSTEM_TOOLS, toolNamed } from './tools/index.js';
