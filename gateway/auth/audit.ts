import type { AuditEntry } from '../../gen/ts/asg/store/v1/store.js';
import { withContextPatch } from '../../services/common/context.js';
import type { Logger } from '../../services/common/log.js';
import type { Face } from '../app/principal.js';
import type { FailureReason } from './verdict.js';

/**
 * Every refused request is an "auth.failed" audit entry: who it claimed to
 * be when that is known, the face, the route, and why — never the token or any part of it.
 * The write is fire and forget with its own deadline: the 401 is sent at once whatever the
 * store does, and a failed write is a log line. Writes in flight are bounded, so a flood of
 * bad requests cannot pile up calls to the store; what is dropped meanwhile is counted in the
 * log instead.
 */

export interface AuthFailure {
  /** The principal (`token:<name>`, `jwt:<issuer>#<name>`) when known, else "anonymous". */
  actor: string;
  via: Face;
  /** The route, e.g. "POST /approvals/:uuid". */
  subject: string;
  reason: FailureReason;
  /** For a refused role: the role that was needed. */
  needed?: string;
}

/** Where audit entries go: the store's AppendAudit. */
export interface AuditSink {
  appendAudit(request: { entry: AuditEntry }): Promise<unknown>;
}

const AUDIT_DEADLINE_MS = 2_000;
const MAX_AUDIT_WRITES_IN_FLIGHT = 64;

export class AuthAudit {
  private inFlight = 0;
  private dropped = 0;

  constructor(
    private readonly sink: AuditSink,
    private readonly log: Logger,
    private readonly limits = { deadlineMs: AUDIT_DEADLINE_MS, maxInFlight: MAX_AUDIT_WRITES_IN_FLIGHT },
  ) {}

  /** Records a refusal in the background; never throws, never waits. */
  record(failure: AuthFailure): void {
    if (this.inFlight >= this.limits.maxInFlight) {
      this.dropped += 1;
      return;
    }
    this.inFlight += 1;
    const detail = { reason: failure.reason, ...(failure.needed && { needed: failure.needed }) };
    // id and at are the store's to set.
    const entry: AuditEntry = {
      id: 0,
      at: undefined,
      kind: 'auth.failed',
      actor: failure.actor,
      via: failure.via,
      subject: failure.subject,
      detailJson: JSON.stringify(detail),
    };
    // Its own deadline, not the request's: the request is answered before the write ends. The
    // refused credential stays out of the call's metadata.
    const write = async () =>
      withContextPatch({ deadline: Date.now() + this.limits.deadlineMs, authorization: undefined }, () => this.sink.appendAudit({ entry }));
    void write()
      .catch((error: unknown) => {
        this.log.warn('an authentication failure could not be written to the audit', {
          reason: failure.reason,
          subject: failure.subject,
          error: error instanceof Error ? error.message : String(error),
        });
      })
      .finally(() => {
        this.inFlight -= 1;
        if (this.dropped > 0 && this.inFlight === 0) {
          this.log.warn('authentication failures were not written to the audit: too many at once', { dropped: this.dropped });
          this.dropped = 0;
        }
      });
  }

  /** Writes in flight now (for tests that wait for the audit). */
  get pending(): number {
    return this.inFlight;
  }
}
