import { A2A_HOPS_HEADER, type RequestContext } from '../common/context.js';
import { deadlineExceeded, failedPrecondition, unavailable, type ServiceError } from '../common/grpc/errors.js';
import { redactSecrets } from '../common/secrets.js';

/** A peer as a request names it (proto Peer, validated). */
export interface PeerRef {
  name: string;
  url: string;
  /** 0 means the default. */
  timeoutMs: number;
}

/** No call waits forever: A2A calls wait 60 s unless the peer's config says otherwise. */
const DEFAULT_PEER_TIMEOUT_MS = 60_000;

/**
 * Everything one bridge call needs to talk to one peer: the headers every HTTP request
 * carries on behalf of the caller, one deadline for all of them (card, probes, the call
 * itself), and error constructors that name the peer and never show the caller's token.
 */
export interface OutboundCall {
  peer: PeerRef;
  /** Authorization (when the caller sent one), X-Session-ID (when known), X-A2A-Hops. */
  headers: Record<string, string>;
  /** Epoch ms: the earlier of now + the peer's timeout and the caller's deadline. */
  deadline: number;
  /** Whether `deadline` is the caller's rather than the peer's timeout (for the message). */
  callerDeadline: boolean;
  /** The hop count sent as X-A2A-Hops. */
  hops: number;
  /** The text with the caller's credentials taken out, for errors and logs. */
  scrub(text: string): string;
  unavailable(reason: string): ServiceError;
  deadlineExceeded(): ServiceError;
}

/** The configured URL without user:password@, for messages. */
export function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.toString().replace(/\/$/, '');
  } catch {
    return url;
  }
}

/**
 * Opens one call to `peer` on behalf of the request in `context`. Refuses at once, before any
 * HTTP request, when the chain of agents would grow past `maxDepth`: agents that delegate to
 * each other in a cycle stop there instead of calling each other forever.
 */
export function openOutboundCall(peer: PeerRef, context: RequestContext | undefined, maxDepth: number, now = Date.now()): OutboundCall {
  const hops = (context?.a2aHops ?? 0) + 1;
  if (hops > maxDepth) {
    throw failedPrecondition(
      `A2A call to ${peer.name} refused: the chain of agents is ${hops} hops deep, past a2a_max_depth (${maxDepth}); agents may be calling each other in a cycle`,
    );
  }
  const timeoutMs = peer.timeoutMs > 0 ? peer.timeoutMs : DEFAULT_PEER_TIMEOUT_MS;
  const own = now + timeoutMs;
  const inherited = context?.deadline;
  const callerDeadline = inherited !== undefined && inherited < own;
  const deadline = callerDeadline ? inherited : own;

  const headers: Record<string, string> = { [A2A_HOPS_HEADER]: String(hops) };
  if (context?.authorization) headers.Authorization = context.authorization;
  if (context?.sessionId) headers['X-Session-ID'] = context.sessionId;

  // The token is taken out of any text built from what the peer said or what fetch reported:
  // a peer may echo the request's headers back in an error message.
  const secrets = credentialParts(context?.authorization);
  const scrub = (text: string): string => redactSecrets(secrets.reduce((out, secret) => out.split(secret).join('[redacted]'), text));
  const where = `${peer.name} at ${displayUrl(peer.url)}`;
  return {
    peer,
    headers,
    deadline,
    callerDeadline,
    hops,
    scrub,
    unavailable: (reason) => unavailable(`sub-agent unavailable: ${where}: ${scrub(reason)}`),
    deadlineExceeded: () =>
      deadlineExceeded(
        callerDeadline
          ? `sub-agent ${where} did not answer before the caller's deadline`
          : `sub-agent ${where} did not answer within ${timeoutMs} ms (its timeout)`,
      ),
  };
}

/** The Authorization value and its credential (after the scheme), longest first. */
function credentialParts(authorization: string | undefined): string[] {
  if (!authorization) return [];
  const parts = [authorization.trim()];
  const credential = authorization.trim().split(/\s+/).slice(1).join(' ');
  if (credential.length >= 4) parts.push(credential);
  return parts;
}
