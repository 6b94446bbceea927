import { withContextPatch } from '../common/context.js';
import type { Logger } from '../common/log.js';
import type { OrchestratorClients } from './clients.js';
import { Poller } from './poller.js';

/** Escalations asked of the store at one poll; more wait for the next. */
const ESCALATIONS_PER_POLL = 100;

/**
 * Every `interval` (the takeover loop's), asks the store to escalate the pending approvals
 * whose escalates_at has passed (EscalateDueApprovals). The timer is durable because it is a
 * row: a restart, or any other replica, finds the approval due at its next poll. Done once
 * because the store marks each escalation with a conditional update, audits it and tells it
 * (the `approval.escalated` webhook) in that update's transaction; of several replicas asking
 * at once, one marks each approval. From then on the approval's quorum counts the votes of
 * its escalation role too (run/decisions.ts).
 */
export class EscalationLoop {
  private readonly poller: Poller;

  constructor(
    private readonly clients: Pick<OrchestratorClients, 'store'>,
    private readonly intervalMs: number,
    private readonly log: Logger,
  ) {
    this.poller = new Poller(intervalMs, 'escalate due approvals', () => this.escalate(), log);
  }

  start(): void {
    this.poller.start();
  }

  stop(): void {
    this.poller.stop();
  }

  private async escalate(): Promise<void> {
    const { approvals } = await withContextPatch({ deadline: Date.now() + Math.max(1_000, this.intervalMs) }, () =>
      this.clients.store.escalateDueApprovals({ limit: ESCALATIONS_PER_POLL }),
    );
    for (const approval of approvals)
      this.log.info('approval escalated', {
        approval: approval.uuid,
        conversation: approval.conversationId,
        tool: approval.toolName,
        to_role: approval.escalationRole,
      });
  }
}
