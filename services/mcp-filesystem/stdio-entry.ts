import { parseArgs } from 'node:util';
import { FilesystemConfigError, loadFilesystemConfig, runFilesystemStdio } from './index.js';

/**
 * A stdio launcher for tests and for MCP clients that start the server from source
 * (`node --import tsx services/mcp-filesystem/stdio-entry.ts --config FILE`); `bin/asg
 * mcp-filesystem --config FILE --stdio` is the command for everything else.
 */
const { values } = parseArgs({ options: { config: { type: 'string' } } });
if (!values.config) {
  process.stderr.write('stdio-entry needs --config FILE\n');
  process.exit(2);
}
try {
  await runFilesystemStdio(loadFilesystemConfig(values.config));
} catch (error) {
  if (!(error instanceof FilesystemConfigError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exit(2);
}
