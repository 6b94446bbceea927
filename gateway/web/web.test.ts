import { describe, expect, it } from 'vitest';
import { agentRequestHeaders, endToEndHeaders } from './agent-proxy.js';
import { parseWebConfig } from './config.js';
import { ApiRequestError, approveCall, conversationCall, sendCall } from './api-routes.js';

describe('parseWebConfig', () => {
  it('fills the defaults and trims a trailing slash off agent_url', () => {
    expect(parseWebConfig({}, 'web.yaml')).toEqual({
      host: '127.0.0.1',
      port: 3000,
      agent_url: 'http://localhost:8080',
      server: { allowed_hosts: [], cors: { allowed_origins: [] } },
    });
    expect(parseWebConfig({ host: '127.0.0.1', port: 0, agent_url: 'http://agent:8080/' }, 'web.yaml').agent_url).toBe('http://agent:8080');
  });

  it('names the file, the field and what was expected', () => {
    expect(() => parseWebConfig({ port: 'x', agent: 'y' }, 'config/web.yaml')).toThrow(
      /config\/web\.yaml: port: .*\n.*config\/web\.yaml: \(top level\): unknown field "agent" \(expected host, port, agent_url, server\)/s,
    );
    expect(() => parseWebConfig({ agent_url: 'ftp://agent' }, 'w.yaml')).toThrow('w.yaml: agent_url: expected an http:// or https:// URL');
  });
});

describe('the /api routes', () => {
  it('POST /api/send starts a conversation, or continues one', () => {
    expect(sendCall({ message: 'hi' })).toEqual({ method: 'POST', path: '/conversations', body: { message: 'hi' } });
    expect(sendCall({ message: 'hi', conversation_id: 'a/b' })).toEqual({
      method: 'POST',
      path: '/conversations/a%2Fb/messages',
      body: { message: 'hi' },
    });
    expect(() => sendCall({})).toThrow(new ApiRequestError('"message" is required and must be a string'));
    expect(() => sendCall('hi')).toThrow('the body must be a JSON object');
  });

  it('POST /api/approve passes the decision on as REST reads it', () => {
    expect(approveCall({ uuid: 'u1', approved: true })).toEqual({ method: 'POST', path: '/approvals/u1', body: { approved: true } });
    expect(approveCall({ uuid: 'u1', answer: 'no' })).toEqual({ method: 'POST', path: '/approvals/u1', body: { answer: 'no' } });
    expect(() => approveCall({ approved: true })).toThrow('"uuid" is required: the approval to decide');
  });

  it('GET /api/conversation/:id reads the conversation', () => {
    expect(conversationCall('c 1')).toEqual({ method: 'GET', path: '/conversations/c%201' });
  });
});

describe('endToEndHeaders', () => {
  it('drops the headers that describe one connection', () => {
    expect(
      endToEndHeaders({
        host: 'web:3000',
        connection: 'keep-alive',
        'transfer-encoding': 'chunked',
        'last-event-id': '7',
        authorization: 'Bearer t',
      }),
    ).toEqual({ 'last-event-id': '7', authorization: 'Bearer t' });
  });
});

describe('agentRequestHeaders', () => {
  it('sends the agent what a server-side client would: no browser Origin or Referer', () => {
    expect(
      agentRequestHeaders({
        host: 'web:3000',
        origin: 'http://web:3000',
        referer: 'http://web:3000/',
        'content-type': 'application/json',
        'x-session-id': 'abcd1234',
      }),
    ).toEqual({
      'content-type': 'application/json',
      'x-session-id': 'abcd1234',
    });
  });
});
