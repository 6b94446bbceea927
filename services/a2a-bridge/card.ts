import { A2A_PROTOCOL_VERSION, A2A_VERSION_HEADER } from '@a2a-js/sdk';
import { z } from 'zod';
import { Dialect } from '../../gen/ts/asg/a2a/v1/a2a.js';
import { getJson } from './http.js';
import type { OutboundCall } from './outbound.js';

/**
 * Agent cards: where to find one, and what it says about the peer's dialect and endpoint.
 * A v1.0 card lists `supportedInterfaces` (each with its protocolBinding and protocolVersion),
 * a v0.3 card has a top-level `url` and `protocolVersion`, a type-parts card neither.
 */

const lenientString = z.string().optional().catch(undefined);
const cardSchema = z.looseObject({
  name: lenientString,
  description: lenientString,
  url: lenientString,
  protocolVersion: lenientString,
  preferredTransport: lenientString,
  additionalInterfaces: z
    .array(z.looseObject({ url: z.string(), transport: lenientString }))
    .optional()
    .catch(undefined),
  supportedInterfaces: z
    .array(z.looseObject({ url: z.string(), protocolBinding: lenientString, protocolVersion: lenientString }))
    .optional()
    .catch(undefined),
  skills: z
    .array(z.looseObject({ id: lenientString, name: lenientString, description: lenientString }))
    .optional()
    .catch(undefined),
  capabilities: z
    .looseObject({ streaming: z.boolean().optional().catch(undefined) })
    .optional()
    .catch(undefined),
});

export type AgentCardDocument = z.infer<typeof cardSchema>;

export interface FoundCard {
  /** Where the card was found. */
  location: string;
  card: AgentCardDocument;
}

/**
 * Where to look, in order: beside the configured URL when it has a path (a host may serve
 * several agents under their own paths, mock-llm does), then at the origin's /.well-known/;
 * at each, agent-card.json (A2A v0.3 and later) before agent.json (type-parts peers', and A2A before 0.3).
 */
export function cardLocations(peerUrl: string): string[] {
  const url = new URL(peerUrl);
  const path = url.pathname.replace(/\/+$/, '');
  const bases = path ? [`${url.origin}${path}/`, `${url.origin}/`] : [`${url.origin}/`];
  return bases.flatMap((base) => [new URL('.well-known/agent-card.json', base).href, new URL('.well-known/agent.json', base).href]);
}

/**
 * The peer's card, or undefined when none of the locations has one. A location that answers
 * 4xx or something other than a JSON object is passed over; an unreachable peer, 5xx or the
 * deadline fail the call (there is no point in asking the next location).
 */
export async function fetchAgentCard(call: OutboundCall): Promise<FoundCard | undefined> {
  for (const location of cardLocations(call.peer.url)) {
    // A v1.0 server that also serves v0.3 answers a request without A2A-Version with its v0.3 card.
    const { json } = await getJson(call, location, { [A2A_VERSION_HEADER]: A2A_PROTOCOL_VERSION });
    if (!json || typeof json !== 'object' || Array.isArray(json)) continue;
    const parsed = cardSchema.safeParse(json);
    if (parsed.success) return { location, card: parsed.data };
  }
  return undefined;
}

export interface CardDialect {
  dialect: Dialect;
  /** The JSON-RPC endpoint the card names for that dialect, as written there (may be relative). */
  endpoint?: string;
}

function majorVersion(version: string | undefined): number | undefined {
  const major = Number.parseInt((version ?? '').trim(), 10);
  return Number.isFinite(major) ? major : undefined;
}

const isJsonRpc = (binding: string | undefined) => (binding ?? '').toUpperCase() === 'JSONRPC';

/**
 * The dialect a card declares, or undefined when it declares none we can trust: no version
 * at all (a type-parts card), no JSON-RPC interface, or a v0.3-shaped card that claims 1.0
 * (mock-llm's agents do; their server speaks v0.3). The probe decides those.
 */
export function dialectFromCard(card: AgentCardDocument): CardDialect | undefined {
  if (card.supportedInterfaces && card.supportedInterfaces.length > 0) {
    const jsonRpc = card.supportedInterfaces.filter((entry) => isJsonRpc(entry.protocolBinding));
    const v1 = jsonRpc.find((entry) => majorVersion(entry.protocolVersion) === 1);
    if (v1) return { dialect: Dialect.DIALECT_V1_0, endpoint: v1.url };
    const v03 = jsonRpc.find((entry) => majorVersion(entry.protocolVersion) === 0);
    if (v03) return { dialect: Dialect.DIALECT_V0_3, endpoint: v03.url };
    return undefined;
  }
  if (card.protocolVersion !== undefined && majorVersion(card.protocolVersion) === 0) {
    if (card.preferredTransport === undefined || isJsonRpc(card.preferredTransport))
      return { dialect: Dialect.DIALECT_V0_3, endpoint: card.url };
    const jsonRpc = card.additionalInterfaces?.find((entry) => isJsonRpc(entry.transport));
    return jsonRpc ? { dialect: Dialect.DIALECT_V0_3, endpoint: jsonRpc.url } : undefined;
  }
  return undefined;
}

/**
 * Where JSON-RPC requests go. A configured URL with a path names the endpoint itself and
 * wins (the A2A endpoint URL is used directly). A bare origin takes the path the
 * card names — on the configured origin: cards often name hosts that only resolve elsewhere
 * (0.0.0.0, a public name), and the caller's bearer token must only travel to the host the
 * config names. Without a card path, /a2a, where type-parts servers and ours listen.
 */
export function endpointFor(peerUrl: string, cardEndpoint?: string): string {
  const configured = new URL(peerUrl);
  if (configured.pathname.replace(/\/+$/, '') !== '') return configured.href;
  if (cardEndpoint) {
    try {
      const named = new URL(cardEndpoint, configured);
      return `${configured.origin}${named.pathname}${named.search}`;
    } catch {
      // An unparsable card URL: fall through to the default path.
    }
  }
  return `${configured.origin}/a2a`;
}

/** Whether the card says the peer streams (`capabilities.streaming`, v0.3 and v1.0 alike); no card, no streaming. */
export function streamsPerCard(card: AgentCardDocument): boolean {
  return card.capabilities?.streaming === true;
}

export interface CardSummary {
  name: string;
  description: string;
  skills: Array<{ id: string; name: string; description: string }>;
}

export function summarizeCard(card: AgentCardDocument): CardSummary {
  return {
    name: card.name ?? '',
    description: card.description ?? '',
    skills: (card.skills ?? []).map((skill) => ({
      id: skill.id ?? skill.name ?? '',
      name: skill.name ?? skill.id ?? '',
      description: skill.description ?? '',
    })),
  };
}
