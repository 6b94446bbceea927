import { describe, expect, it } from 'vitest';
import { requirementsOf, type Need } from './route-access.js';

/** The role table: what each route needs, matched as Express routes paths. */

const needs = (method: string, path: string, isStatic?: (path: string) => boolean): Need[] => requirementsOf(method, path, isStatic).needs;
const role = (...names: string[]): Need => ({ kind: 'role', roles: names }) as Need;
/** Reading conversations: their owners (chat) and approvers (approve); app/ownership.ts says which. */
const readConversations = role('chat', 'approve');

describe('requirementsOf', () => {
  it('leaves the probes, the card, the API reference and the web chat files open', () => {
    for (const path of ['/health', '/ready', '/docs', '/.well-known/agent-card.json', '/.well-known/agent.json', '/HEALTH', '/ready/'])
      expect(needs('GET', path), path).toEqual([{ kind: 'open' }]);
    const isStatic = (path: string) => path === '/' || path.startsWith('/assets/');
    expect(needs('GET', '/', isStatic)).toEqual([{ kind: 'open' }]);
    expect(needs('GET', '/assets/index-abc.js', isStatic)).toEqual([{ kind: 'open' }]);
    // Only reads of the files: a POST there is no file.
    expect(needs('POST', '/', isStatic)).toEqual([role('admin')]);
  });

  it('gives each API route its role, whatever the case or a trailing slash', () => {
    expect(needs('POST', '/conversations')).toEqual([role('chat')]);
    expect(needs('GET', '/Conversations/abc/')).toEqual([readConversations]);
    expect(needs('POST', '/conversations/abc/messages')).toEqual([role('chat')]);
    expect(needs('GET', '/tools')).toEqual([role('chat')]);
    expect(needs('POST', '/a2a')).toEqual([role('chat')]);
    expect(needs('DELETE', '/mcp')).toEqual([role('chat')]);
    expect(needs('POST', '/approvals/9b1e')).toEqual([role('approve')]);
    expect(needs('GET', '/approvals')).toEqual([role('approve')]);
    expect(needs('GET', '/approvals/9b1e/history')).toEqual([role('approve')]);
    expect(needs('GET', '/audit')).toEqual([role('admin')]);
    expect(needs('GET', '/auth/whoami')).toEqual([{ kind: 'signed-in' }]);
  });

  it('keeps GET /metrics for admins, open only when metrics.public is true', () => {
    expect(needs('GET', '/metrics')).toEqual([role('admin')]);
    expect(requirementsOf('GET', '/metrics', undefined, undefined, true).needs).toEqual([{ kind: 'open' }]);
    // The flag opens that route and no other.
    expect(requirementsOf('GET', '/audit', undefined, undefined, true).needs).toEqual([role('admin')]);
    expect(requirementsOf('GET', '/metrics/x', undefined, undefined, true).needs).toEqual([role('admin')]);
  });

  it('lets approvers read conversations, and only their owners (chat) write them', () => {
    expect(needs('GET', '/conversations')).toEqual([readConversations]);
    expect(needs('HEAD', '/conversations/abc')).toEqual([readConversations]);
    expect(needs('GET', '/conversations/abc/events')).toEqual([readConversations]);
    expect(needs('POST', '/conversations')).toEqual([role('chat')]);
    expect(needs('GET', '/conversations/abc/messages')).toEqual([role('chat')]);
    expect(needs('GET', '/trpc/conversations.list')).toEqual([readConversations]);
    expect(needs('GET', '/trpc/conversations.get')).toEqual([readConversations]);
    expect(needs('GET', '/trpc/conversation.events')).toEqual([readConversations]);
    expect(needs('POST', '/trpc/conversations.create')).toEqual([role('chat')]);
    expect(needs('POST', '/trpc/conversations.send')).toEqual([role('chat')]);
  });

  it('closes what it does not know to all but admin', () => {
    for (const path of ['/webhooks', '//conversations', '/conversations/a/b/c', '/approvalsx'])
      expect(needs('GET', path), path).toEqual([role('admin')]);
  });

  it('names the face, and takes the query token on event streams only', () => {
    expect(requirementsOf('GET', '/conversations/c1/events')).toMatchObject({
      face: 'rest',
      subject: 'GET /conversations/:id/events',
      queryToken: true,
    });
    expect(requirementsOf('POST', '/conversations/c1/events').queryToken).toBe(false);
    expect(requirementsOf('GET', '/conversations/c1').queryToken).toBe(false);
    expect(requirementsOf('POST', '/a2a')).toMatchObject({ face: 'a2a', queryToken: false });
    expect(requirementsOf('POST', '/mcp')).toMatchObject({ face: 'mcp' });
    expect(requirementsOf('POST', '/approvals/x', undefined, 'cli')).toMatchObject({ face: 'cli' });
    expect(requirementsOf('POST', '/a2a', undefined, 'cli')).toMatchObject({ face: 'a2a' });
  });

  it('reads a tRPC batch as its procedures, each with its router’s role', () => {
    expect(requirementsOf('GET', '/trpc/conversations.get,tools.list')).toMatchObject({
      face: 'web',
      needs: [readConversations, role('chat')],
      queryToken: false,
    });
    expect(needs('POST', '/trpc/approvals.resolve')).toEqual([role('approve')]);
    expect(needs('GET', '/trpc/conversations.list%2Capprovals.pending')).toEqual([readConversations, role('approve')]);
    expect(needs('GET', '/trpc/auth.whoami')).toEqual([{ kind: 'signed-in' }]);
    expect(needs('GET', '/trpc/secret.stuff')).toEqual([role('admin')]);
    // Names of Object's own members are no routers.
    expect(needs('GET', '/trpc/constructor.x,__proto__.y,toString')).toEqual([role('admin'), role('admin'), role('admin')]);
    expect(requirementsOf('GET', '/trpc/approvals.pending').queryToken).toBe(true);
    expect(requirementsOf('GET', '/trpc/conversation.events').queryToken).toBe(true);
    expect(requirementsOf('GET', '/trpc/approvals.pending,conversation.events').queryToken).toBe(false);
    expect(requirementsOf('POST', '/trpc/approvals.pending').queryToken).toBe(false);
  });
});
