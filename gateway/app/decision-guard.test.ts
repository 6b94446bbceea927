import { describe, expect, it } from 'vitest';
import { failureOf } from './errors.js';
import { AccessDenied, guardDecisions } from './decision-guard.js';
import { withAuthScope, type AuthScope } from './principal.js';
import type { Agent } from './agent.js';

/** Every face's decisions pass one check: the approve role, or admin. */

const decided = { decided: false as const, approval: {} as never, decision: 'approved' as const, decidedAt: undefined };

function guarded() {
  const calls: unknown[][] = [];
  const refusals: string[] = [];
  const resolveApproval: Agent['resolveApproval'] = async (...args) => {
    calls.push(args);
    return decided;
  };
  const agent = guardDecisions<Pick<Agent, 'resolveApproval'>>({ resolveApproval }, (scope, uuid) =>
    refusals.push(`${scope.principal.name} ${uuid}`),
  );
  return { agent, calls, refusals };
}

const scope = (name: string, roles: AuthScope['principal']['roles']): AuthScope => ({
  principal: { id: `token:${name}`, name, roles, via: 'a2a' },
  subject: 'POST /a2a',
  authentication: true,
});

describe('guardDecisions', () => {
  it('lets an approver or an admin decide, with every argument passed on', async () => {
    const { agent, calls } = guarded();
    await withAuthScope(scope('alice', ['approve']), () =>
      agent.resolveApproval('u1', 'approved', { decider: { principal: 'token:alice', via: 'a2a' }, reason: 'ok' }),
    );
    await withAuthScope(scope('root', ['admin']), () =>
      agent.resolveApproval('u2', 'rejected', { decider: { principal: 'token:root', via: 'a2a' } }),
    );
    expect(calls).toEqual([
      ['u1', 'approved', { decider: { principal: 'token:alice', via: 'a2a' }, reason: 'ok' }],
      ['u2', 'rejected', { decider: { principal: 'token:root', via: 'a2a' } }],
    ]);
  });

  it('refuses a chat-only caller with a 403 that names what is missing, and reports it', async () => {
    const { agent, calls, refusals } = guarded();
    const error = await withAuthScope(scope('chatty', ['chat']), () =>
      agent.resolveApproval('u1', 'approved', { decider: { principal: 'token:chatty', via: 'a2a' } }),
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AccessDenied);
    expect(failureOf(error)).toEqual({
      status: 403,
      message: 'chatty may not decide approvals: that needs the approve role (chatty has chat)',
      unexpected: false,
    });
    expect(calls).toEqual([]);
    expect(refusals).toEqual(['chatty u1']);
  });

  it('refuses a decision made outside any request', async () => {
    const { agent, calls } = guarded();
    await expect(agent.resolveApproval('u1', 'approved', { decider: { principal: 'anonymous', via: 'rest' } })).rejects.toBeInstanceOf(
      AccessDenied,
    );
    expect(calls).toEqual([]);
  });
});
