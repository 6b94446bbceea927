import type { Conversation } from '../../gen/ts/asg/store/v1/store.js';
import { notFound } from '../../services/common/grpc/errors.js';
import type { Agent } from './agent.js';
import { AccessDenied } from './decision-guard.js';
import { currentAuthScope, type AuthScope, type Principal } from './principal.js';

/**
 * Who may see and talk to a conversation. With `auth` on, a conversation belongs to the
 * principal that created it (store.proto Conversation.owner): its source-qualified id
 * (`token:carol`, `jwt:<issuer>#carol`; principal.ts), so that a JWT and an API token of the same
 * name never share conversations unless `auth.jwt.token_principals` says so. The rule, in one
 * place for every face (REST, the event streams, tRPC, A2A, MCP, the OpenAI-compatible `/v1`):
 *
 * - `admin` reads and talks to every conversation;
 * - `approve` reads every conversation — an approver needs the context of what it decides —
 *   but talks only to its own (with `chat`, as anyone);
 * - `chat` reads and talks to its own conversations only.
 *
 * A conversation the caller may not read answers exactly as an unknown one (NOT_FOUND: REST
 * 404, tRPC NOT_FOUND, A2A's unknown task), so that its id is not confirmed to a stranger. One
 * it may read but not talk to (an approver's view of someone else's) is refused with 403: the
 * caller already sees it exists. A conversation created without `auth` has no owner: once
 * `auth` is on, only `admin` and `approve` see it. Without `auth` nothing here applies: every
 * caller is anonymous with every role, conversations get no owner, and everyone sees everything.
 * Approvals are not conversations: deciding them needs `approve` (decision-guard.ts), whoever
 * owns the conversation.
 */

export type ConversationAccess = 'read' | 'write';

/** Whether `principal` may access every conversation as asked, whoever owns it. */
function accessesEveryConversation(principal: Pick<Principal, 'roles'>, access: ConversationAccess): boolean {
  return principal.roles.includes('admin') || (access === 'read' && principal.roles.includes('approve'));
}

/** The rule: whether `principal` may read (or write to) a conversation that `owner` owns (undefined: nobody). */
export function mayAccess(principal: Pick<Principal, 'id' | 'roles'>, owner: string | undefined, access: ConversationAccess): boolean {
  if (accessesEveryConversation(principal, access)) return true;
  return owner !== undefined && owner === principal.id && principal.roles.includes('chat');
}

/** Whose conversations a listing of `principal` shows: undefined for every conversation. */
export function listingOwner(principal: Pick<Principal, 'id' | 'roles'>): string | undefined {
  return accessesEveryConversation(principal, 'read') ? undefined : principal.id;
}

/** The owner of a conversation created in `scope`: the principal when `auth` is on; none otherwise. */
export function ownerOfNewConversation(scope: AuthScope | undefined): string | undefined {
  return scope?.authentication ? scope.principal.id : undefined;
}

/** The store's own answer for an id it does not know: a stranger's conversation reads the same. */
function unknownConversation(id: string): Error {
  return notFound(`conversation ${id} not found`);
}

/** Throws unless `principal` may access `conversation` as asked: NOT_FOUND when it may not even read it, else 403. */
export function requireAccess(
  principal: Pick<Principal, 'id' | 'roles'>,
  conversation: Pick<Conversation, 'id' | 'owner'>,
  access: ConversationAccess,
): void {
  if (mayAccess(principal, conversation.owner, access)) return;
  if (access === 'read' || !mayAccess(principal, conversation.owner, 'read')) throw unknownConversation(conversation.id);
  const whose =
    conversation.owner === undefined
      ? 'it was created without authentication and belongs to nobody'
      : `it belongs to ${conversation.owner}`;
  throw new AccessDenied(
    `${principal.id} may read conversation ${conversation.id} but not send to it: ${whose}; only its owner (with the chat role) or an admin may`,
  );
}

/** The principal of the current request; with `auth` on, a call outside any request has none and is refused. */
function currentPrincipal(): Principal {
  const scope = currentAuthScope();
  if (!scope) throw new AccessDenied('a caller without identity may not use conversations while authentication is on');
  return scope.principal;
}

type GuardedOperations = Pick<
  Agent,
  | 'createConversation'
  | 'getConversation'
  | 'getConversationRecord'
  | 'viewConversation'
  | 'listConversations'
  | 'sendMessage'
  | 'findConversationByHistory'
  | 'recordHistoryDigest'
  | 'deleteConversation'
  | 'listRuns'
  | 'getRun'
  | 'forkRun'
>;

/**
 * `agent` whose conversations obey the rule for the caller of each request (applied when `auth`
 * is on: auth/index.ts). A new conversation gets the caller as its owner; a listing shows only
 * what the caller may read; any other operation on a conversation is checked before it is
 * carried out — on the conversation's record, one read of the store without its messages, for
 * a caller who may not access every conversation — so that nothing a stranger asks for is read,
 * run or described, and no other error (a bad history cursor, a busy turn) tells it the id exists.
 */
export function guardConversations<T extends GuardedOperations>(agent: T): T {
  /** The record, when it had to be read to decide. */
  async function authorize(id: string, access: ConversationAccess): Promise<Conversation | undefined> {
    const principal = currentPrincipal();
    if (accessesEveryConversation(principal, access)) return undefined;
    const record = await agent.getConversationRecord(id);
    requireAccess(principal, record, access);
    return record;
  }

  const guarded: GuardedOperations = {
    async createConversation(message, origin = {}) {
      currentPrincipal();
      const owner = ownerOfNewConversation(currentAuthScope());
      return agent.createConversation(message, { ...origin, ...(owner !== undefined && { owner }) });
    },
    async getConversation(id, page) {
      await authorize(id, 'read');
      return agent.getConversation(id, page);
    },
    async getConversationRecord(id) {
      return (await authorize(id, 'read')) ?? agent.getConversationRecord(id);
    },
    async viewConversation(id, page) {
      await authorize(id, 'read');
      return agent.viewConversation(id, page);
    },
    async listConversations(query) {
      const owner = listingOwner(currentPrincipal());
      return agent.listConversations({ ...query, ...(owner !== undefined && { owner }) });
    },
    async sendMessage(conversationId, message) {
      await authorize(conversationId, 'write');
      return agent.sendMessage(conversationId, message);
    },
    // Only among the caller's own conversations, whatever its roles: a resent history never
    // continues someone else's conversation (an admin's included).
    async findConversationByHistory(digest) {
      currentPrincipal();
      return agent.findConversationByHistory(digest, ownerOfNewConversation(currentAuthScope()));
    },
    async recordHistoryDigest(conversationId, digest) {
      await authorize(conversationId, 'write');
      return agent.recordHistoryDigest(conversationId, digest);
    },
    // Its owner, or an admin: someone who may only read it (an approver) is refused with 403, a stranger gets 404.
    async deleteConversation(id, decider) {
      await authorize(id, 'write');
      return agent.deleteConversation(id, decider);
    },
    // A run is read as its conversation is: a stranger's run answers as an unknown one.
    async listRuns(conversationId, page) {
      await authorize(conversationId, 'read');
      return agent.listRuns(conversationId, page);
    },
    async getRun(runId) {
      const principal = currentPrincipal();
      const journal = await agent.getRun(runId);
      if (!accessesEveryConversation(principal, 'read')) {
        const record = await agent.getConversationRecord(journal.run.conversationId);
        if (!mayAccess(principal, record.owner, 'read')) throw notFound(`run ${runId} not found`);
      }
      return journal;
    },
    // A run the caller may read (as getRun): its fork is a new conversation of the caller's own.
    async forkRun(runId, step, message) {
      await guarded.getRun(runId);
      return agent.forkRun(runId, step, message, ownerOfNewConversation(currentAuthScope()));
    },
  };
  return { ...agent, ...guarded };
}
