const LABELS: Record<string, string> = {
  running: 'running',
  waiting_approval: 'waiting for approval',
  completed: 'completed',
  cancelled: 'cancelled',
  interrupted: 'interrupted',
};

/** A run's status, in the look of a conversation's (StatusBadge). */
export function RunStatus({ status }: { status: string }) {
  return (
    <span className={`status status-${status}`} data-testid="run-status" data-status={status}>
      {LABELS[status] ?? status}
    </span>
  );
}
