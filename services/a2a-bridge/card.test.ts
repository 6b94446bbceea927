import { describe, expect, it } from 'vitest';
import { Dialect } from '../../gen/ts/asg/a2a/v1/a2a.js';
import { cardLocations, dialectFromCard, endpointFor } from './card.js';
import { approvalFrom } from './remote-task.js';

describe('cardLocations', () => {
  it('looks beside an endpoint with a path first, then at the origin; agent-card.json before agent.json', () => {
    expect(cardLocations('http://agent-b:8082/a2a')).toEqual([
      'http://agent-b:8082/a2a/.well-known/agent-card.json',
      'http://agent-b:8082/a2a/.well-known/agent.json',
      'http://agent-b:8082/.well-known/agent-card.json',
      'http://agent-b:8082/.well-known/agent.json',
    ]);
    expect(cardLocations('https://summarizer.example.com/')).toEqual([
      'https://summarizer.example.com/.well-known/agent-card.json',
      'https://summarizer.example.com/.well-known/agent.json',
    ]);
  });
});

describe('dialectFromCard', () => {
  const v1Card = {
    supportedInterfaces: [
      { url: 'http://x/rpc03', protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
      { url: 'http://x/grpc', protocolBinding: 'GRPC', protocolVersion: '1.0' },
      { url: 'http://x/rpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
    ],
  };

  it('prefers a v1.0 JSON-RPC interface, then a v0.3 one', () => {
    expect(dialectFromCard(v1Card)).toEqual({ dialect: Dialect.DIALECT_V1_0, endpoint: 'http://x/rpc' });
    expect(dialectFromCard({ supportedInterfaces: [v1Card.supportedInterfaces[0]!, v1Card.supportedInterfaces[1]!] })).toEqual({
      dialect: Dialect.DIALECT_V0_3,
      endpoint: 'http://x/rpc03',
    });
    expect(dialectFromCard({ supportedInterfaces: [v1Card.supportedInterfaces[1]!] })).toBeUndefined();
  });

  it('reads a v0.3 card by its protocolVersion and transport', () => {
    expect(dialectFromCard({ url: 'http://x/a2a', protocolVersion: '0.3.0' })).toEqual({
      dialect: Dialect.DIALECT_V0_3,
      endpoint: 'http://x/a2a',
    });
    expect(
      dialectFromCard({
        url: 'http://x/grpc',
        protocolVersion: '0.3.0',
        preferredTransport: 'GRPC',
        additionalInterfaces: [{ url: 'http://x/jsonrpc', transport: 'JSONRPC' }],
      }),
    ).toEqual({
      dialect: Dialect.DIALECT_V0_3,
      endpoint: 'http://x/jsonrpc',
    });
  });

  it('leaves a type-parts card, and a v0.3-shaped card that claims 1.0, to the probe', () => {
    expect(dialectFromCard({ name: 'type-parts', url: 'http://0.0.0.0:8080' })).toBeUndefined();
    expect(dialectFromCard({ url: 'http://x/a2a/agents/echo', protocolVersion: '1.0' })).toBeUndefined();
  });
});

describe('endpointFor', () => {
  it('keeps a configured URL with a path, and takes only the path from the card for a bare origin', () => {
    expect(endpointFor('http://agent-b:8082/a2a', 'http://elsewhere/rpc')).toBe('http://agent-b:8082/a2a');
    expect(endpointFor('http://agent-b:8082', 'http://0.0.0.0:8082/rpc')).toBe('http://agent-b:8082/rpc');
    expect(endpointFor('http://agent-b:8082/', '/jsonrpc?x=1')).toBe('http://agent-b:8082/jsonrpc?x=1');
    expect(endpointFor('http://agent-b:8082')).toBe('http://agent-b:8082/a2a');
  });
});

describe('approvalFrom', () => {
  it('prefers the data part, and parses the approval line otherwise', () => {
    const data = {
      approval: { uuid: 'u-1', tool_name: 'deploy', tool_args: { env: 'prod' }, description: 'Deploy to prod', chain: ['agent-c'] },
    };
    expect(approvalFrom('Approval required (id: other): text', [{ unrelated: true }, data])).toEqual({
      uuid: 'u-1',
      toolName: 'deploy',
      toolArgsJson: '{"env":"prod"}',
      description: 'Deploy to prod',
      chain: ['agent-c'],
    });
    expect(approvalFrom('Approval required (id: 9b1e0c2a-1111-2222-3333-444455556666): Remove resource r-1', [])).toEqual({
      uuid: '9b1e0c2a-1111-2222-3333-444455556666',
      toolName: '',
      toolArgsJson: '{}',
      description: 'Remove resource r-1',
      chain: [],
    });
    expect(approvalFrom('Please answer yes or no', [])).toBeUndefined();
  });
});
