import type { ConversationEvent } from '../../../gen/ts/asg/store/v1/store.js';
import { AttemptsFailed, backoffDelay, retry, type BackoffPolicy } from '../../common/backoff.js';
import { withContextPatch } from '../../common/context.js';
import { GrpcStatus, isCode } from '../../common/grpc/errors.js';
import type { Logger } from '../../common/log.js';
import type { OrchestratorClients } from '../clients.js';
import { errorText } from '../run/io.js';
import { storedKindsOf, webhookId, webhookPayload, type WebhookEventType } from './events.js';
import { webhookHeaders } from './signing.js';

/** How deliveries are paced; internal (not in the configuration file), tests shorten it. */
export interface DeliveryOptions {
  /** The deadline of one POST. */
  timeoutMs: number;
  /** Attempts per event before it is given up on (logged) and the cursor moves past it. */
  maxAttempts: number;
  /** The wait after the first failed attempt; it doubles after each further one… */
  baseDelayMs: number;
  /** …up to this (each wait jittered between half of it and all of it). */
  maxDelayMs: number;
  /** The lease on the endpoint's cursor; renewed every third of it while held. */
  leaseTtlMs: number;
  /** How often a replica that does not hold the cursor asks for it (the holder may have died). */
  claimEveryMs: number;
}

export const DEFAULT_DELIVERY: DeliveryOptions = {
  timeoutMs: 10_000,
  maxAttempts: 8,
  baseDelayMs: 1_000,
  maxDelayMs: 60_000,
  leaseTtlMs: 30_000,
  claimEveryMs: 5_000,
};

/** One stream of events lasts at most this long; the next one opens after the cursor. */
const WATCH_STREAM_MS = 60 * 60_000;
/** Waits between attempts to read the events again after the stream failed (store down): from 1 s, doubling up to 30 s. */
const STREAM_RETRY: BackoffPolicy = { attempts: Infinity, baseMs: 1_000, maxMs: 30_000, jitter: 'equal' };
/**
 * How long the cursor may stay behind events that called for nothing (most events, and every
 * event when no webhook or push config wants it): moving it past each of them was a store write
 * per event on every turn's path. A holder that dies in between leaves the next one
 * to read those events again and find nothing to send in them.
 */
const SKIPPED_ADVANCE_MS = 1_000;

/** One configured webhook, checked at start. */
export interface WebhookEndpoint {
  /** Where it is in the configuration, for logs ("webhooks[0]"). */
  where: string;
  url: string;
  /** The url's scheme, host and port: what the logs show (a url's path or query may hold a token). */
  origin: string;
  /** sha256 of the url, hex: the cursor's name in the store. */
  name: string;
  events: ReadonlySet<WebhookEventType>;
  key: Buffer;
}

type DeliveryClients = Pick<OrchestratorClients, 'store'>;

/** One POST an event calls for. */
export interface OutboundPost {
  /** The same at every attempt, for the logs (and, for webhooks, the receiver: `webhook-id`). */
  id: string;
  url: string;
  /** The url's origin: what the logs show (a url's path or query may hold a token). */
  origin: string;
  /** What the event is, for the logs. */
  type: string;
  body: string;
  /** The headers of one attempt (a signature carries the attempt's time). */
  headers(): Record<string, string>;
  /** Checked before each attempt (SSRF: a name may resolve elsewhere now); a reason not to send at all. */
  refuse?(): Promise<string | undefined>;
}

/**
 * What one cursor over the outbox delivers: a configured webhook (its events, to its url), or
 * the A2A push notifications of every task (push.ts). `posts` says what an event calls for;
 * none, and the cursor just moves past it.
 */
export interface OutboxTarget {
  /** For logs ("webhooks[0]", "a2a-push"). */
  where: string;
  /** What the logs show of where it goes. */
  origin: string;
  /** The cursor's name in the store. */
  name: string;
  /** What it delivers, for the logs: "webhook events", "A2A push notifications". */
  label: string;
  /**
   * The stored event kinds that can call for a post (store.proto's names: "turn_ended"…), which the store then sends
   * alone; absent: every kind. Every event `posts` answers with a post for must be of one of them.
   */
  kinds?: readonly string[];
  posts(event: ConversationEvent): Promise<OutboundPost[]>;
}

/** A configured webhook as an outbox target: its subscribed events, signed, to its url. */
export function webhookTarget(endpoint: WebhookEndpoint): OutboxTarget {
  return {
    where: endpoint.where,
    origin: endpoint.origin,
    name: endpoint.name,
    label: 'webhook events',
    kinds: storedKindsOf(endpoint.events),
    async posts(event) {
      const payload = webhookPayload(event);
      if (!payload || !endpoint.events.has(payload.type)) return [];
      const id = webhookId(endpoint.name, event.id);
      const body = JSON.stringify(payload);
      return [
        {
          id,
          url: endpoint.url,
          origin: endpoint.origin,
          type: payload.type,
          body,
          headers: () => webhookHeaders(endpoint.key, id, Math.floor(Date.now() / 1000), body),
        },
      ];
    },
  };
}

/**
 * Delivers one endpoint's events: the store's events table is the outbox, and the
 * endpoint's cursor (the id of the last event it got, or was given up on for) is held by one
 * replica at a time with a lease, like a run. The holder reads the events after the cursor in
 * id order (of the kinds the target names, when it names some: the store sends no other), POSTs
 * each one the webhook subscribed to — signed, with its own deadline, retried with exponential
 * backoff — and advances the cursor past every event it read, subscribed or not. Nothing here
 * is on a turn's path: a receiver that is slow or down delays only its own deliveries. At least
 * once: a replica that dies between a POST and its advance leaves the event to be sent again by
 * the next holder, with the same webhook-id.
 */
export class WebhookDeliverer {
  private readonly stopping = new AbortController();
  private running: Promise<void> | undefined;

  constructor(
    private readonly endpoint: OutboxTarget,
    private readonly clients: DeliveryClients,
    private readonly holder: { owner: string; node: string },
    private readonly options: DeliveryOptions,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.running ??= this.run();
  }

  /** Stops: a wait between attempts is cut (its event is sent again by the next holder); a POST in flight ends first, and its cursor advance. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.running;
  }

  private get fields() {
    return { webhook: this.endpoint.where, origin: this.endpoint.origin };
  }

  private async run(): Promise<void> {
    const stop = this.stopping.signal;
    let holding = false;
    while (!stop.aborted) {
      const claimed = await this.claim();
      if (!claimed?.held) {
        if (holding) this.log.info('webhook cursor held by another replica now', this.fields);
        holding = false;
        await sleep(this.options.claimEveryMs, stop);
        continue;
      }
      if (!holding) this.log.info(`delivering ${this.endpoint.label}`, { ...this.fields, after: claimed.lastEventId });
      holding = true;
      const held = new AbortController();
      const onStop = () => held.abort();
      stop.addEventListener('abort', onStop);
      const renewal = this.keep(held);
      try {
        await this.deliverFrom(claimed.lastEventId, held.signal);
      } catch (error) {
        if (!held.signal.aborted)
          this.log.warn('webhook delivery interrupted; reading the events again', { ...this.fields, error: errorText(error) });
      } finally {
        renewal.stop();
        stop.removeEventListener('abort', onStop);
      }
      if (!stop.aborted && held.signal.aborted) holding = false;
      // Whatever ended the hold, the next claim says where the cursor is and who holds it.
      await sleep(Math.min(this.options.claimEveryMs, STREAM_RETRY.baseMs), stop);
    }
  }

  private async claim(): Promise<{ held: boolean; lastEventId: number } | undefined> {
    try {
      return await withContextPatch({ deadline: Date.now() + Math.max(1_000, this.options.leaseTtlMs / 3) }, () =>
        this.clients.store.claimWebhookCursor({
          endpoint: this.endpoint.name,
          lease: { owner: this.holder.owner, node: this.holder.node, ttlMs: this.options.leaseTtlMs },
        }),
      );
    } catch (error) {
      if (!this.stopping.signal.aborted)
        this.log.warn('webhook cursor not claimed; trying again', { ...this.fields, error: errorText(error) });
      return undefined;
    }
  }

  /** Renews the cursor's lease every third of its ttl; aborts `held` when it is lost, or not renewed for a whole ttl. */
  private keep(held: AbortController): { stop(): void } {
    let lastRenewed = Date.now();
    let renewing = false;
    const timer = setInterval(
      () => {
        if (renewing || held.signal.aborted) return;
        renewing = true;
        void this.claim()
          .then((claimed) => {
            if (claimed?.held) lastRenewed = Date.now();
            else if (claimed || Date.now() - lastRenewed >= this.options.leaseTtlMs) {
              this.log.warn('webhook cursor lost; another replica delivers now', this.fields);
              held.abort();
            }
          })
          .finally(() => (renewing = false));
      },
      Math.max(100, Math.floor(this.options.leaseTtlMs / 3)),
    );
    timer.unref();
    return { stop: () => clearInterval(timer) };
  }

  /** Reads the stored events after `cursor`, in order, delivering each and advancing the cursor, until `held` aborts. */
  private async deliverFrom(after: number, held: AbortSignal): Promise<void> {
    let cursor = after;
    /** Failed reads since the last event: the backoff starts over once events flow. */
    let failures = 0;
    let advancedAt = 0;
    while (!held.aborted) {
      // A stream of the kinds the target can post for: the cursor moves only to events it was sent, and the events left
      // out between them called for nothing. But after_id 0 asks for live events only (a new cursor of an empty outbox
      // starts there): until the cursor names a stored event, events of every kind move it, else a restart before the
      // first event of those kinds would miss the ones stored in between.
      const kinds = cursor === 0 ? [] : [...(this.endpoint.kinds ?? [])];
      try {
        for await (const { event } of this.clients.store.watchEvents(
          { conversationId: '', afterId: cursor, storedOnly: true, kinds },
          { timeoutMs: WATCH_STREAM_MS, signal: held },
        )) {
          // Live-only events (id 0) are not stored, so no webhook's: only stored events move the cursor.
          if (!event || event.id <= cursor) continue;
          if (held.aborted) return;
          // A delivery cut short (stop, lost cursor) leaves the cursor before its event: the next holder sends it again.
          const handled = await this.handle(event, held);
          if (!handled) return;
          cursor = event.id;
          failures = 0;
          // Past a delivery at once (so that it is not sent again); past events with nothing to send, now and then.
          if (handled === 'skipped' && Date.now() - advancedAt < SKIPPED_ADVANCE_MS) continue;
          if (!(await this.advance(event.id))) {
            this.log.warn('webhook cursor lost; another replica delivers now', this.fields);
            return;
          }
          advancedAt = Date.now();
          // The cursor names a stored event now: the stream opens again after it, with the target's kinds.
          if (kinds.length === 0 && this.endpoint.kinds?.length) break;
        }
      } catch (error) {
        if (held.aborted) return;
        // The stream's own deadline, not a failure: the next one opens after the cursor.
        if (isCode(error, GrpcStatus.DEADLINE_EXCEEDED)) continue;
        failures += 1;
        const retryMs = backoffDelay(STREAM_RETRY, failures);
        this.log.warn('webhook events could not be read; trying again', { ...this.fields, error: errorText(error), retry_in_ms: retryMs });
        await sleep(retryMs, held);
      }
    }
  }

  private async advance(eventId: number): Promise<boolean> {
    const { held } = await withContextPatch({ deadline: Date.now() + Math.max(1_000, this.options.leaseTtlMs / 3) }, () =>
      this.clients.store.advanceWebhookCursor({
        endpoint: this.endpoint.name,
        owner: this.holder.owner,
        lastEventId: eventId,
        ttlMs: this.options.leaseTtlMs,
      }),
    );
    return held;
  }

  /**
   * Delivers what the event calls for (posts(): a subscribed webhook event, a task's push
   * notifications), each with retries; gives one up (logged) after its last attempt. Truthy when
   * the cursor may move past the event (delivered or given up on; 'skipped': nothing to send);
   * false when it was cut short between attempts by a stop or a lost cursor.
   */
  private async handle(event: ConversationEvent, held: AbortSignal): Promise<boolean | 'skipped'> {
    let posts: OutboundPost[];
    try {
      posts = await this.endpoint.posts(event);
    } catch (error) {
      // What to send could not be read (the store, for a task's configs): the event is read again.
      if (held.aborted) return false;
      throw error;
    }
    if (posts.length === 0) return 'skipped';
    for (const post of posts) if (!(await this.deliver(post, event, held))) return false;
    return true;
  }

  /** Posts with retries (jittered backoff); true when delivered, refused or given up on, false when cut short by `held`. */
  private async deliver(post: OutboundPost, event: ConversationEvent, held: AbortSignal): Promise<boolean> {
    const fields = { ...this.fields, origin: post.origin, type: post.type, event: event.id };
    const { maxAttempts, baseDelayMs, maxDelayMs } = this.options;
    try {
      await retry(
        async (attempt) => {
          const refused = await post.refuse?.();
          if (refused !== undefined) return this.log.warn('delivery refused; not sent', { ...fields, error: refused });
          const failure = await this.post(post);
          if (failure !== undefined) throw new DeliveryFailed(failure);
          this.log.info('webhook delivered', { ...fields, attempt });
        },
        { attempts: maxAttempts, baseMs: baseDelayMs, maxMs: maxDelayMs, jitter: 'equal' },
        {
          signal: held,
          retry: (error) => error instanceof DeliveryFailed,
          onRetry: ({ attempt, error, delayMs }) =>
            this.log.warn('webhook delivery failed; trying again', { ...fields, attempt, error: errorText(error), retry_in_ms: delayMs }),
        },
      );
      return true;
    } catch (error) {
      if (held.aborted) return false;
      if (!(error instanceof AttemptsFailed)) throw error;
      // What to send could not be read (a push url's check failed): the event is read again.
      if (error.reason === 'permanent') throw error.lastError;
      this.log.error('webhook delivery given up', { ...fields, attempts: error.attempts, error: errorText(error.lastError) });
      return true;
    }
  }

  /**
   * One POST: undefined when the receiver took it (2xx), else why not. A POST in flight
   * is not cut by a stop (only by its own deadline): a receiver that took the event gets its
   * cursor advanced, rather than the same event again from the next holder.
   */
  private async post(post: OutboundPost): Promise<string | undefined> {
    try {
      const response = await fetch(post.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'agent-stop-and-go-webhooks', ...post.headers() },
        body: post.body,
        // A redirect is not followed: the event goes to the configured url or nowhere.
        redirect: 'manual',
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      // The receiver's answer is not read: only its status counts.
      await response.body?.cancel().catch(() => undefined);
      if (response.status >= 200 && response.status < 300) return undefined;
      return `the receiver answered HTTP ${response.status}`;
    } catch (error) {
      if (error instanceof Error && error.name === 'TimeoutError') return `no answer within ${this.options.timeoutMs} ms`;
      // fetch's own message ("fetch failed") says little; its cause says what (ECONNREFUSED…).
      const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
      return `${errorText(error)}${cause}`;
    }
  }
}

/** Why a receiver did not take a POST (its status, a timeout, the network): worth another attempt. */
class DeliveryFailed extends Error {
  override name = 'DeliveryFailed';
}

/** Waits `ms`, or less when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });
}
