import type { Tool } from '../../gen/ts/asg/tools/v1/tools.js';

/**
 * The agent card (`/.well-known/agent-card.json` and `/.well-known/agent.json`): one JSON
 * that both card generations read. A v1.0 reader takes `supportedInterfaces`; a v0.3 reader
 * takes `url`, `preferredTransport` and `protocolVersion` — @a2a-js/sdk calls such a card
 * with both a v0.3 card with `supportedInterfaces` embedded (toCompatAgentCard's
 * `embedV1Interfaces`), and its v1.0 client prefers the interfaces as soon as there are any.
 * Pure.
 */

export const A2A_PATH = '/a2a';
export const CARD_PATHS = ['/.well-known/agent-card.json', '/.well-known/agent.json'] as const;

interface AgentSkillJson {
  id: string;
  name: string;
  description: string;
  /** Required by v0.3 readers (the SDK's parseLegacyAgentCard refuses a skill without it). */
  tags: string[];
}

export interface AgentCardJson {
  name: string;
  description: string;
  version: string;
  /** v0.3: where JSON-RPC requests go. */
  url: string;
  protocolVersion: '0.3.0';
  preferredTransport: 'JSONRPC';
  /** v1.0: every endpoint with its binding and protocol version. */
  supportedInterfaces: { url: string; protocolBinding: 'JSONRPC'; protocolVersion: '1.0' }[];
  capabilities: { streaming: boolean; pushNotifications: boolean };
  defaultInputModes: string[];
  defaultOutputModes: string[];
  skills: AgentSkillJson[];
  /** With `auth`: the one scheme, in both generations' shapes (see cardSecurity). */
  securitySchemes?: Record<string, SecuritySchemeJson>;
  /** v0.3: the schemes a request must satisfy. */
  security?: Record<string, string[]>[];
  /** v1.0: the same, as ProtoJSON of SecurityRequirement. */
  securityRequirements?: { schemes: Record<string, { list: string[] }> }[];
}

/**
 * One HTTP bearer scheme that both card generations read: v0.3 (an OpenAPI security scheme
 * object: `type`, `scheme`, `bearerFormat`) and v1.0 (ProtoJSON of SecurityScheme, the
 * `httpAuthSecurityScheme` member of its oneof). Each reader ignores the other's fields.
 */
interface SecuritySchemeJson {
  type: 'http';
  scheme: 'bearer';
  bearerFormat?: string;
  description: string;
  httpAuthSecurityScheme: { scheme: 'Bearer'; bearerFormat?: string; description: string };
}

/** How callers authenticate, when `auth` is on: `bearerFormat` "JWT" when JWTs are the only credential. */
export interface CardSecurity {
  bearerFormat?: string;
  description: string;
}

const SECURITY_SCHEME_NAME = 'bearer';

function cardSecurity(security: CardSecurity): Pick<AgentCardJson, 'securitySchemes' | 'security' | 'securityRequirements'> {
  const format = security.bearerFormat === undefined ? {} : { bearerFormat: security.bearerFormat };
  return {
    securitySchemes: {
      [SECURITY_SCHEME_NAME]: {
        type: 'http',
        scheme: 'bearer',
        ...format,
        description: security.description,
        httpAuthSecurityScheme: { scheme: 'Bearer', ...format, description: security.description },
      },
    },
    security: [{ [SECURITY_SCHEME_NAME]: [] }],
    securityRequirements: [{ schemes: { [SECURITY_SCHEME_NAME]: { list: [] } } }],
  };
}

export interface CardFacts {
  name: string;
  description: string;
  version: string;
  /** The absolute URL of the JSON-RPC endpoint, as the caller reaches it. */
  endpointUrl: string;
  /** What the agent offers its model: MCP tools and `a2a_<name>` sub-agents. */
  tools: readonly Tool[];
  /** Set when callers must authenticate. */
  security?: CardSecurity;
  /** Whether push notifications are offered. */
  pushNotifications?: boolean;
}

const MODES = ['text/plain', 'application/json'];

export function agentCard(facts: CardFacts): AgentCardJson {
  return {
    name: facts.name,
    description: facts.description,
    version: facts.version,
    url: facts.endpointUrl,
    protocolVersion: '0.3.0',
    preferredTransport: 'JSONRPC',
    supportedInterfaces: [{ url: facts.endpointUrl, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: { streaming: true, pushNotifications: facts.pushNotifications === true },
    defaultInputModes: [...MODES],
    defaultOutputModes: [...MODES],
    skills: facts.tools.map((tool) => ({ id: tool.name, name: tool.name, description: tool.description, tags: [] })),
    ...(facts.security && cardSecurity(facts.security)),
  };
}
