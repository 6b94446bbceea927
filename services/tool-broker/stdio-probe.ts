import { spawn, type ChildProcess } from 'node:child_process';
import type { PassThrough } from 'node:stream';
import { SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { getDefaultEnvironment, StdioClientTransport, type StdioServerParameters } from '@modelcontextprotocol/client/stdio';

/**
 * The SDK's stdio transport, probed on its own process. With `versionNegotiation: 'auto'` the
 * SDK sends its `server/discover` probe to a throw-away sibling process whenever the transport
 * is exactly its own `StdioClientTransport`, so every connect started the server twice: two
 * processes loading its code at every boot and every restart. A subclass is probed
 * in place, on the process that then serves (the SDK's documented rule for subclasses).
 *
 * The sibling protects servers built on SDKs that exit at any request before `initialize`:
 * probed in place, such a server is gone before it can be asked anything, which
 * `exitedAtProbe` recognizes; the connection then starts it once more with a plain 2025-era
 * `initialize` (LEGACY_ERA), and keeps doing so on every later start.
 */
class InPlaceProbeStdioTransport extends StdioClientTransport {}

/** `connect({ prior })` for a server known to speak only the 2025-era handshake: no probe. */
export const LEGACY_ERA = { kind: 'legacy' } as const;

/** Whether a connect failed because the stdio server exited at the `server/discover` probe. */
export function exitedAtProbe(error: unknown): boolean {
  return (
    error instanceof SdkError &&
    error.code === SdkErrorCode.EraNegotiationFailed &&
    error.message.includes('closed during the server/discover probe')
  );
}

/** How a stdio server's process ended, when it did. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** The SDK transport's own fields that `start` fills (private in its types only; the SDK version is pinned). */
interface SdkStdioInternals {
  _process?: ChildProcess;
  _serverParams: StdioServerParameters;
  _readBuffer: { append(chunk: Buffer): void };
  _stderrStream: PassThrough | null;
  processReadBuffer(): void;
}

/**
 * Signals a stdio server's whole process group (its pid is the group's id: it runs detached),
 * so that what it started itself (a server run through npx, uvx or a shell) goes with it.
 */
export function signalGroup(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(-pid, name);
  } catch {
    // The group is gone already.
  }
}

/** The stdio servers of this process that are running: killed if the process exits before it closed them. */
const running = new Set<ChildProcess>();
let exitHookInstalled = false;

/**
 * A stdio server runs in its own process group (below), so the signal that stops the broker's
 * group does not reach it, and the broker stops it itself after the drain (mcp-connection.ts,
 * closeClient). Should the process exit without that (a second signal, a stop past its overrun,
 * a crash), the servers still running are killed on the way out: none is left behind. A broker
 * killed outright (SIGKILL) closes their stdin by dying, which is the MCP stdio binding's
 * signal to exit.
 */
function track(child: ChildProcess): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const server of running) signalGroup(server.pid!, 'SIGKILL');
    });
  }
  running.add(child);
  child.once('exit', () => running.delete(child));
}

/**
 * The transport the broker starts stdio servers with: probed in place (above), keeping how its
 * process exited, so that a server that cannot start is reported with its exit code (the SDK's
 * transport only says "closed"), and started detached, in a process group of its own.
 *
 * Detached, because a stop signal is often sent to the whole process group (Ctrl-C, a process
 * manager's group kill): a server in the broker's group died with the signal while calls were
 * still running on it, and a turn in its drain then failed with "MCP server … not running". In
 * its own group the server lives until the broker has drained and closes it (stdin, then
 * SIGTERM, then SIGKILL); `track` covers the exits that skip that close.
 *
 * `start` is the SDK's own (the same spawn options, handlers and errors), with `detached: true`,
 * which the SDK offers no option for.
 */
export class ObservedStdioTransport extends InPlaceProbeStdioTransport {
  exit: ProcessExit | undefined;

  override start(): Promise<void> {
    const sdk = this as unknown as SdkStdioInternals;
    if (sdk._process) throw new Error('ObservedStdioTransport already started');
    const params = sdk._serverParams;
    return new Promise<void>((resolve, reject) => {
      const child = spawn(params.command, params.args ?? [], {
        env: { ...getDefaultEnvironment(), ...params.env },
        stdio: ['pipe', 'pipe', params.stderr ?? 'inherit'],
        shell: false,
        cwd: params.cwd,
        detached: true,
      });
      sdk._process = child;
      child.on('error', (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.on('spawn', () => {
        track(child);
        resolve();
      });
      child.once('exit', (code, signal) => (this.exit = { code, signal }));
      child.on('close', () => {
        sdk._process = undefined;
        this.onclose?.();
      });
      child.stdin?.on('error', (error) => this.onerror?.(error));
      child.stdout?.on('data', (chunk: Buffer) => {
        try {
          sdk._readBuffer.append(chunk);
          sdk.processReadBuffer();
        } catch (error) {
          this.onerror?.(error as Error);
          this.close().catch(() => undefined);
        }
      });
      child.stdout?.on('error', (error) => this.onerror?.(error));
      if (sdk._stderrStream && child.stderr) child.stderr.pipe(sdk._stderrStream);
    });
  }
}
