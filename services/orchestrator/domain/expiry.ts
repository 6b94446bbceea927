import { ApprovalTimeoutAction, type NewApproval, type PendingApproval } from '../../../gen/ts/asg/store/v1/store.js';
import type { OrchestratorConfig } from '../../common/config/slices.js';
import { wildcardPattern } from '../../common/wildcard.js';

/**
 * When an approval expires and what its expiry decides (`approvals:` in the
 * configuration). Per tool by the first matching pattern of `approvals.tools`, in config
 * order, with the same `*` / `?` wildcards as the broker's approval rules and the rate
 * limits; a pattern without its own `on_timeout` takes the top-level one. Pure.
 */
export interface ExpiryRule {
  /** Milliseconds after the approval is stored. */
  timeoutMs: number;
  onTimeout: 'reject' | 'approve';
}

export type ApprovalsConfig = OrchestratorConfig['approvals'];

export class ExpiryPolicy {
  private readonly rules: { match: RegExp; timeoutMs: number; onTimeout: 'reject' | 'approve' }[];

  constructor(private readonly config: ApprovalsConfig) {
    this.rules = Object.entries(config.tools).map(([pattern, rule]) => ({
      match: wildcardPattern(pattern),
      timeoutMs: rule.timeout,
      onTimeout: rule.on_timeout ?? config.on_timeout,
    }));
  }

  /** The rule for approvals of `toolName`; undefined when they wait for a human forever (`timeout: 0`). */
  ruleFor(toolName: string): ExpiryRule | undefined {
    const matched = this.rules.find((rule) => rule.match.test(toolName));
    const timeoutMs = matched ? matched.timeoutMs : this.config.timeout;
    if (timeoutMs <= 0) return undefined;
    return { timeoutMs, onTimeout: matched ? matched.onTimeout : this.config.on_timeout };
  }

  /**
   * The approval as stored, with its expiry. An approval asked again because its call's
   * outcome is unknown never runs by the clock: an approving expiry would re-run a call that
   * may have taken effect, so such an approval only expires when its expiry rejects.
   */
  withExpiry(approval: NewApproval): NewApproval {
    const rule = this.ruleFor(approval.toolName);
    if (!rule || (approval.outcomeUnknown && rule.onTimeout === 'approve')) return approval;
    return {
      ...approval,
      expiresInMs: rule.timeoutMs,
      onTimeout:
        rule.onTimeout === 'approve'
          ? ApprovalTimeoutAction.APPROVAL_TIMEOUT_ACTION_APPROVE
          : ApprovalTimeoutAction.APPROVAL_TIMEOUT_ACTION_REJECT,
    };
  }
}

/** A duration as the configuration writes it: "30m", "2s", "1h30m", "1500ms". */
export function formatDuration(ms: number): string {
  if (ms < 1000 || ms % 1000 !== 0) return `${Math.round(ms)}ms`;
  let seconds = ms / 1000;
  const hours = Math.floor(seconds / 3600);
  seconds -= hours * 3600;
  const minutes = Math.floor(seconds / 60);
  seconds -= minutes * 60;
  return [hours && `${hours}h`, minutes && `${minutes}m`, seconds && `${seconds}s`].filter(Boolean).join('');
}

/**
 * The decision an expiry makes on a due approval: what its on_timeout says (reject when it
 * says nothing), with the reason the decision records and the model reads. The waited time
 * is the approval's own (expires_at − created_at), whatever the configuration says now.
 */
export function expiryDecision(approval: PendingApproval): { approved: boolean; reason: string } {
  const waited =
    approval.expiresAt && approval.createdAt ? formatDuration(approval.expiresAt.getTime() - approval.createdAt.getTime()) : undefined;
  const within = waited ? `no decision within ${waited}` : 'no decision in time';
  if (approval.onTimeout === ApprovalTimeoutAction.APPROVAL_TIMEOUT_ACTION_APPROVE)
    return { approved: true, reason: `${within}; approved by the approval's expiry policy (on_timeout: approve)` };
  return { approved: false, reason: `${within}; the approval expired` };
}
