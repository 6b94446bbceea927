/**
 * Where an approval's quorum stands, as people read it — one wording for `asg approvals` and the
 * web chat's approval card: "1 of 2 approvals — alice approved 3 min ago; you cannot approve
 * your own request". Pure, and free of runtime imports, so that the web chat bundles it as is.
 */

/** The quorum fields of an approval as REST shows it (A, and P while pending). */
export interface QuorumView {
  status?: string;
  required?: number;
  not_requester?: true;
  requested_by?: string;
  votes?: { voter: string; at: string }[];
  escalates_at?: string;
  escalated_at?: string;
  escalated_to?: string;
}

/** A principal as people call it: "token:alice" → "alice", "jwt:https://idp#bob" → "bob". */
export function personOf(principal: string): string {
  const name = principal.replace(/^(token|jwt):/, '');
  return name.includes('#') ? name.slice(name.lastIndexOf('#') + 1) : name;
}

/**
 * The quorum's standing, or empty for an approval without one. `ago` words a time ("3 min ago",
 * "in 30 min"); `viewer` is the principal reading it, when known.
 */
export function quorumText(approval: QuorumView, ago: (iso: string | undefined) => string, viewer?: string): string {
  if (approval.required === undefined) return '';
  const votes = approval.votes ?? [];
  const count = `${votes.length} of ${approval.required} approval${approval.required === 1 ? '' : 's'}`;
  const who = votes.map((vote) => `${viewer === vote.voter ? 'you' : personOf(vote.voter)} approved ${ago(vote.at)}`);
  const notes: string[] = [];
  const pending = approval.status === undefined || approval.status === 'pending';
  if (pending && viewer !== undefined && approval.not_requester && approval.requested_by === viewer)
    notes.push('you cannot approve your own request');
  if (approval.escalated_to) notes.push(`escalated to ${approval.escalated_to} ${ago(approval.escalated_at)}`);
  else if (pending && approval.escalates_at) notes.push(`escalates ${ago(approval.escalates_at)}`);
  return [who.length > 0 ? `${count} — ${who.join(', ')}` : count, ...notes].join('; ');
}
