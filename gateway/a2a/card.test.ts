import { AgentCard } from '@a2a-js/sdk';
import { isLegacyAgentCard, parseLegacyAgentCard } from '@a2a-js/sdk/compat/v0_3/client';
import { describe, expect, it } from 'vitest';
import type { Tool } from '../../gen/ts/asg/tools/v1/tools.js';
import { agentCard } from './card.js';
import { cardUrlResolver, type RequestOrigin } from './card-url.js';
import { agentVersion } from '../app/version.js';

const tools: Tool[] = [
  { name: 'resources_list', description: 'Lists resources', inputSchema: undefined, destructive: false, server: 'resources' },
  { name: 'a2a_summarizer', description: 'Summarizes texts', inputSchema: undefined, destructive: false, server: 'a2a' },
];
const url = 'http://127.0.0.1:8080/a2a';
const card = agentCard({ name: 'agent', description: 'An agent', version: '1.2.3', endpointUrl: url, tools });

describe('agentCard', () => {
  it('makes a skill of each tool and A2A agent', () => {
    expect(card.skills).toEqual([
      { id: 'resources_list', name: 'resources_list', description: 'Lists resources', tags: [] },
      { id: 'a2a_summarizer', name: 'a2a_summarizer', description: 'Summarizes texts', tags: [] },
    ]);
  });

  it('is read as a v1.0 card by the SDK: JSON-RPC 1.0 at the endpoint', () => {
    expect(isLegacyAgentCard(card)).toBe(false);
    const parsed = AgentCard.fromJSON(card);
    expect(parsed.supportedInterfaces).toEqual([{ url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }]);
    expect(parsed.capabilities).toMatchObject({ streaming: true, pushNotifications: false });
    expect(parsed.skills.map((skill) => skill.id)).toEqual(['resources_list', 'a2a_summarizer']);
  });

  it('is read as a v0.3 card by the SDK v0.3 reader: JSON-RPC 0.3 at the same endpoint', () => {
    const parsed = parseLegacyAgentCard(card);
    expect(parsed.supportedInterfaces).toEqual([{ url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '0.3.0' }]);
    expect(parsed.defaultInputModes).toEqual(['text/plain', 'application/json']);
    expect(parsed.version).toBe('1.2.3');
  });
});

describe('cardUrlResolver', () => {
  const request = (extra: Partial<RequestOrigin> = {}): RequestOrigin => ({
    protocol: 'http',
    host: '127.0.0.1:8080',
    remoteAddress: '::ffff:10.1.2.3',
    forwardedProto: 'https',
    forwardedHost: 'agents.example.com',
    ...extra,
  });

  it('joins the protocol, the Host header and /a2a, ignoring forwarded headers from anyone not trusted', () => {
    const url = cardUrlResolver({ trustedProxies: [] });
    expect(url(request())).toBe('http://127.0.0.1:8080/a2a');
    expect(url(request({ host: '[::1]:8080' }))).toBe('http://[::1]:8080/a2a');
    expect(cardUrlResolver({ trustedProxies: ['10.9.0.0/16'] })(request())).toBe('http://127.0.0.1:8080/a2a');
  });

  it('follows X-Forwarded-Proto and -Host from a trusted proxy (an address or a range, IPv4-mapped or not)', () => {
    expect(cardUrlResolver({ trustedProxies: ['10.1.2.3'] })(request())).toBe('https://agents.example.com/a2a');
    expect(cardUrlResolver({ trustedProxies: ['10.0.0.0/8'] })(request({ remoteAddress: '10.200.0.1' }))).toBe(
      'https://agents.example.com/a2a',
    );
    expect(
      cardUrlResolver({ trustedProxies: ['::1'] })(request({ remoteAddress: '::1', forwardedHost: 'a.example.com, b.example.com:8443' })),
    ).toBe('https://b.example.com:8443/a2a');
  });

  it('ignores forwarded values that are not a protocol or a host', () => {
    const url = cardUrlResolver({ trustedProxies: ['10.1.2.3'] });
    expect(url(request({ forwardedProto: 'javascript', forwardedHost: 'evil.example.com/path?x' }))).toBe('http://127.0.0.1:8080/a2a');
  });

  it('prefers server.public_url, keeping its path', () => {
    expect(cardUrlResolver({ publicUrl: 'https://gw.example.com/agents/one/', trustedProxies: ['10.1.2.3'] })(request())).toBe(
      'https://gw.example.com/agents/one/a2a',
    );
  });
});

describe('agentVersion', () => {
  it('is the version in package.json', async () => {
    const pkg = (await import('../../package.json', { with: { type: 'json' } })).default as { version: string };
    expect(agentVersion()).toBe(pkg.version);
  });
});
