import { Dialect } from '../../gen/ts/asg/a2a/v1/a2a.js';
import { failedPrecondition } from '../common/grpc/errors.js';
import type { Logger } from '../common/log.js';
import { dialectFromCard, endpointFor, fetchAgentCard, streamsPerCard, summarizeCard, type CardSummary } from './card.js';
import { PROBE_ORDER } from './dialects/index.js';
import { postJsonRpc, type JsonRpcOutcome } from './http.js';
import { displayUrl, type OutboundCall } from './outbound.js';

/** What the bridge knows about a peer: how to talk to it and what its card said. */
export interface PeerProfile {
  dialect: Dialect;
  /** Where JSON-RPC requests go. */
  endpoint: string;
  /** Undefined when the peer has no card. */
  card?: CardSummary;
  /** How the dialect was found. */
  via: 'card' | 'probe';
  /**
   * The card declares `capabilities.streaming`: messages go as `message/stream` (v0.3) or
   * `SendStreamingMessage` (v1.0), and a dropped stream is resubscribed (stream.ts).
   */
  streaming: boolean;
}

/** How long a peer's dialect is trusted before the card is read again. */
export const PROFILE_TTL_MS = 5 * 60_000;

/**
 * JSON-RPC answers that mean "I do not speak what you sent": method not found, invalid
 * request, and A2A's VersionNotSupported (-32009, a v1.0 server asked for a version its card
 * does not list). Any other answer, an error about the made-up task included, means the
 * peer understood the request.
 */
const NOT_THIS_DIALECT = new Set([-32601, -32600, -32700, -32009]);

function understood(outcome: JsonRpcOutcome): boolean {
  if (outcome.kind === 'result') return true;
  return outcome.kind === 'error' && !NOT_THIS_DIALECT.has(outcome.code);
}

export function isDialectMismatch(outcome: JsonRpcOutcome): boolean {
  return outcome.kind === 'error' && NOT_THIS_DIALECT.has(outcome.code);
}

function describeOutcome(outcome: JsonRpcOutcome): string {
  if (outcome.kind === 'error') return `JSON-RPC ${outcome.code} ${outcome.message}`.trim();
  if (outcome.kind === 'http') return outcome.detail;
  return 'a result';
}

/**
 * Finds and remembers each peer's dialect, keyed by its configured URL. A card that declares
 * a dialect settles it; otherwise the peer is probed, newest dialect first, with requests that
 * change nothing. Only the answer is kept (a few minutes), never a failure: a peer that was
 * down is asked again on the next call. The cache is an optimisation, not state: losing it
 * costs one card fetch.
 */
export class PeerDirectory {
  private readonly profiles = new Map<string, { profile: PeerProfile; expires: number }>();

  constructor(
    private readonly log: Logger,
    private readonly ttlMs = PROFILE_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  async resolve(call: OutboundCall): Promise<PeerProfile> {
    const key = call.peer.url;
    const cached = this.profiles.get(key);
    if (cached && cached.expires > this.now()) return cached.profile;

    const found = await fetchAgentCard(call);
    const declared = found ? dialectFromCard(found.card) : undefined;
    const card = found ? summarizeCard(found.card) : undefined;
    let profile: PeerProfile;
    if (declared) {
      profile = {
        dialect: declared.dialect,
        endpoint: endpointFor(call.peer.url, declared.endpoint),
        card,
        via: 'card',
        streaming: streamsPerCard(found!.card),
      };
    } else {
      // An undeclared card's url is no endpoint to trust (a type-parts card names its base URL).
      const endpoint = endpointFor(call.peer.url);
      // Without a card that declares its dialect, nothing says the peer streams: plain sends.
      profile = { dialect: await this.probe(call, endpoint), endpoint, card, via: 'probe', streaming: false };
    }
    this.profiles.set(key, { profile, expires: this.now() + this.ttlMs });
    this.log.info('a2a peer dialect', {
      peer: call.peer.name,
      dialect: Dialect[profile.dialect],
      via: profile.via,
      streaming: profile.streaming,
      endpoint: displayUrl(profile.endpoint),
      card: found ? displayUrl(found.location) : 'none',
    });
    return profile;
  }

  /** Drops what is known about a peer (it answered as if it spoke another dialect now). */
  forget(peerUrl: string): void {
    this.profiles.delete(peerUrl);
  }

  private async probe(call: OutboundCall, endpoint: string): Promise<Dialect> {
    const answers: string[] = [];
    for (const speaker of PROBE_ORDER) {
      const outcome = await postJsonRpc(call, endpoint, speaker.probe, speaker.headers);
      if (understood(outcome)) return speaker.dialect;
      answers.push(`${speaker.label}: ${describeOutcome(outcome)}`);
    }
    throw failedPrecondition(
      call.scrub(
        `sub-agent ${call.peer.name} at ${displayUrl(call.peer.url)} speaks no A2A dialect we know (no card declares one, and ${displayUrl(endpoint)} answered ${answers.join('; ')})`,
      ),
    );
  }
}
