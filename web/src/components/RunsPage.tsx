import { useRuns } from '../hooks/use-run.js';
import { conversationHash, runHash } from '../hooks/use-route.js';
import { timeAgo } from '../state/decision-trace.js';
import { durationText } from '../state/run-inspector.js';
import { ErrorNote } from './ErrorNote.js';
import { RunStatus } from './RunStatus.js';

/** A conversation's runs, newest first, a page at a time; each opens its inspector. */
export function RunsPage({ conversationId, now }: { conversationId: string; now: number }) {
  const { runs, loaded, notFound, error, more, loadMore } = useRuns(conversationId);
  return (
    <div className="chat-body runs-page" data-testid="runs-page">
      <header className="chat-header">
        <h2>Runs</h2>
        <a className="header-link" href={conversationHash(conversationId)}>
          back to the conversation
        </a>
        <code className="conversation-id">{conversationId.slice(0, 8)}</code>
      </header>
      <ErrorNote text={error} />
      <div className="messages runs-list">
        {notFound && (
          <p className="placeholder not-found" data-testid="not-found">
            No such conversation here: it does not exist, or it is not yours to see.
          </p>
        )}
        {loaded && !notFound && !error && runs.length === 0 && <p className="placeholder">No runs yet: each message sent starts one.</p>}
        <ul>
          {runs.map((run) => (
            <li key={run.run_id}>
              <a className="runs-item" href={runHash(run.run_id)} data-testid="runs-item" data-run={run.run_id} data-status={run.status}>
                <span className="conversation-text">
                  <span className="conversation-title" title={run.started_at}>
                    Run {run.run_id.slice(0, 8)} · started {timeAgo(run.started_at, now, true)}
                  </span>
                  <span className="conversation-detail">
                    {run.steps} {run.steps === 1 ? 'step' : 'steps'}
                    {run.ended_at && ` · took ${durationText(Date.parse(run.ended_at) - Date.parse(run.started_at))}`}
                  </span>
                </span>
                <RunStatus status={run.status} />
              </a>
            </li>
          ))}
        </ul>
        {more && (
          <button type="button" className="link-button load-more" onClick={loadMore} data-testid="runs-more">
            Older runs
          </button>
        )}
      </div>
    </div>
  );
}
