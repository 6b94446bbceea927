import type { PipelineView, RunToDescribe } from '../../gen/ts/asg/orchestrator/v1/orchestrator.js';
import type { Conversation } from '../../gen/ts/asg/store/v1/store.js';
import { internal } from '../../services/common/grpc/errors.js';
import type { OrchestratorClient } from './backends.js';

/**
 * The public view of conversations' runs (REST "pipeline_state"), for what the gateway reads
 * from the store. The store keeps a run as opaque bytes: only the orchestrator
 * knows their format, so a conversation read from the store is shown with the view the
 * orchestrator makes of its run. Answers of turns carry their view already (the
 * orchestrator fills `pipeline`); these reads need one call, for all their conversations at
 * once. A failure of that call fails the read like any backend failure: a conversation is
 * never shown without the pipeline state it has.
 */

/** The pipeline views of conversations, by conversation id; a conversation without one (no run, or a run of simple mode) is absent. */
export type RunViews = ReadonlyMap<string, PipelineView>;

const NO_VIEWS: RunViews = new Map();

/**
 * One DescribeRuns call for those of `conversations` that have a run, none when no one has.
 * Each run goes with its conversation's first pending approval: states stored by early
 * releases name their one pause only through it.
 */
export async function describeRunsOf(
  orchestrator: Pick<OrchestratorClient, 'describeRuns'>,
  conversations: readonly Conversation[],
): Promise<RunViews> {
  const withRun = conversations.filter((conversation) => conversation.run !== undefined);
  if (withRun.length === 0) return NO_VIEWS;
  const runs: RunToDescribe[] = withRun.map((conversation) => ({
    run: conversation.run,
    pendingApprovalUuid: conversation.pendingApproval?.uuid ?? '',
  }));
  const { views } = await orchestrator.describeRuns({ runs });
  // Views are matched to runs by position: any other count would show one conversation's state on another.
  if (views.length !== runs.length)
    throw internal(`the orchestrator described ${views.length} runs of the ${runs.length} it was asked for`);
  const byConversation = new Map<string, PipelineView>();
  withRun.forEach((conversation, index) => {
    const pipeline = views[index]!.pipeline;
    if (pipeline) byConversation.set(conversation.id, pipeline);
  });
  return byConversation;
}

/** The view of one conversation's run: one call when it has a run, none otherwise. */
export async function describeRunOf(
  orchestrator: Pick<OrchestratorClient, 'describeRuns'>,
  conversation: Conversation,
): Promise<PipelineView | undefined> {
  return (await describeRunsOf(orchestrator, [conversation])).get(conversation.id);
}
