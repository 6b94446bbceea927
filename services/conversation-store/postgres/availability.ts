import pg from 'pg';
import { discard, within } from './connection-errors.js';

/** How often a replica asks its database whether it answers. */
const PROBE_EVERY_MS = 500;
/** How long one probe (a connection, then `SELECT 1`) may take before the database counts as away. */
const PROBE_TIMEOUT_MS = 1_000;

export interface DatabaseProbeOptions {
  /** The settings of the store's connections; the probe keeps one of its own, outside the pool. */
  connection: pg.ClientConfig;
  everyMs?: number;
  timeoutMs?: number;
  /** The database went away (`available` false, with why) or came back. Called on each change only. */
  onChange(available: boolean, reason: string): void;
}

/**
 * Whether the database answers now (the store's readiness): `SELECT 1` every `everyMs` within `timeoutMs`, on a
 * connection of its own (a busy pool does not make it look away). A failure on a connection that had worked is tried
 * again at once on a new one: one ended session is not the database going away. Starts available.
 */
export class DatabaseProbe {
  private client: pg.Client | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private closed = false;
  private availableNow = true;
  private readonly everyMs: number;
  private readonly timeoutMs: number;

  constructor(private readonly options: DatabaseProbeOptions) {
    this.everyMs = options.everyMs ?? PROBE_EVERY_MS;
    this.timeoutMs = options.timeoutMs ?? PROBE_TIMEOUT_MS;
  }

  get available(): boolean {
    return this.availableNow;
  }

  start(): void {
    this.schedule();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.running;
    this.drop();
  }

  private schedule(): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      this.running = this.probe().finally(() => {
        this.running = undefined;
        this.schedule();
      });
    }, this.everyMs);
    this.timer.unref();
  }

  private async probe(): Promise<void> {
    const reused = this.client !== undefined;
    let failure = await this.attempt();
    if (failure !== undefined && reused && !this.closed) failure = await this.attempt();
    if (this.closed) return;
    const available = failure === undefined;
    if (available === this.availableNow) return;
    this.availableNow = available;
    this.options.onChange(available, failure ?? 'the database answers again');
  }

  /** One `SELECT 1`, on a new connection when there is none; why it failed, or undefined. */
  private async attempt(): Promise<string | undefined> {
    try {
      await within(this.selectOne(), this.timeoutMs, `no answer within ${this.timeoutMs} ms`);
      return undefined;
    } catch (error) {
      this.drop();
      return (error as Error).message ?? String(error);
    }
  }

  private async selectOne(): Promise<void> {
    let client = this.client;
    if (client === undefined) {
      const fresh = new pg.Client({ ...this.options.connection, connectionTimeoutMillis: this.timeoutMs });
      // Its failures are the probe's answers; a connection that ended is replaced at the next probe.
      fresh.on('error', () => {
        if (this.client === fresh) this.client = undefined;
      });
      this.client = client = fresh;
      await fresh.connect();
    }
    await client.query('SELECT 1');
  }

  /** Forgets the connection without waiting for it: one that hangs is never waited for. */
  private drop(): void {
    const client = this.client;
    this.client = undefined;
    if (client !== undefined) void discard(client);
  }
}
