import type { ConversationStatusName } from '../api-types.js';

const LABELS: Record<ConversationStatusName, string> = {
  active: 'active',
  waiting_approval: 'waiting for approval',
  completed: 'completed',
};

export function StatusBadge({ status }: { status: ConversationStatusName }) {
  return <span className={`status status-${status}`}>{LABELS[status]}</span>;
}
