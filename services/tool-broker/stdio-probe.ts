import { SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

/**
 * The SDK's stdio transport, probed on its own process. With `versionNegotiation: 'auto'` the
 * SDK sends its `server/discover` probe to a throw-away sibling process whenever the transport
 * is exactly its own `StdioClientTransport`, so every connect started the server twice: two
 * processes loading its code at every boot and every restart (issue 16). A subclass is probed
 * in place, on the process that then serves (the SDK's documented rule for subclasses).
 *
 * The sibling protects servers built on SDKs that exit at any request before `initialize`:
 * probed in place, such a server is gone before it can be asked anything, which
 * `exitedAtProbe` recognizes; the connection then starts it once more with a plain 2025-era
 * `initialize` (LEGACY_ERA), and keeps doing so on every later start.
 */
export class InPlaceProbeStdioTransport extends StdioClientTransport {}

/** `connect({ prior })` for a server known to speak only the 2025-era handshake: no probe. */
export const LEGACY_ERA = { kind: 'legacy' } as const;

/** Whether a connect failed because the stdio server exited at the `server/discover` probe. */
export function exitedAtProbe(error: unknown): boolean {
  return error instanceof SdkError && error.code === SdkErrorCode.EraNegotiationFailed && error.message.includes('closed during the server/discover probe');
}

/** How a stdio server's process ended, when it did. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * The transport the broker starts stdio servers with: probed in place (above), and keeping how
 * its process exited, so that a server that cannot start is reported with its exit code
 * (the SDK's transport only says "closed").
 */
export class ObservedStdioTransport extends InPlaceProbeStdioTransport {
  exit: ProcessExit | undefined;

  override start(): Promise<void> {
    const started = super.start();
    // Set synchronously by start(); private in the SDK's types only.
    const child = (this as unknown as { _process?: import('node:child_process').ChildProcess })._process;
    child?.once('exit', (code, signal) => (this.exit = { code, signal }));
    return started;
  }
}
