import { describe, expect, it, vi } from 'vitest';
import type { PipelineView } from '../../gen/ts/asg/orchestrator/v1/orchestrator.js';
import { ConversationStatus, type Conversation } from '../../gen/ts/asg/store/v1/store.js';
import { GrpcStatus, RpcError } from '../../services/common/grpc/errors.js';
import { FakeEventFeed } from '../../test/support/fake-event-feed.js';
import { conversationRecord, messageRecord } from '../../test/support/store-records.js';
import { watchConversation, type ConversationUpdate } from './conversation-updates.js';
import { pipelineStateJson } from './shapes.js';

const unexpectedRecordRead = async (): Promise<Conversation> => {
  throw new Error('a snapshot reads the conversation with the view of its run');
};

async function take<T>(updates: AsyncGenerator<T, void>, count: number): Promise<T[]> {
  const seen: T[] = [];
  for await (const update of updates) {
    seen.push(update);
    if (seen.length === count) break;
  }
  return seen;
}

describe('watchConversation', () => {
  it('opens the stream before it reads the snapshot, so a change in between is not lost', async () => {
    const feed = new FakeEventFeed();
    let watchesOpenAtRead = -1;
    const { updates, sessionId } = await watchConversation(
      {
        feed,
        getConversation: unexpectedRecordRead,
        viewConversation: async () => {
          watchesOpenAtRead = feed.openWatches;
          // A change committed while the snapshot is read: it must reach the watcher.
          feed.store({ conversationId: 'c1', statusChanged: ConversationStatus.CONVERSATION_STATUS_WAITING_APPROVAL });
          return { conversation: conversationRecord({ id: 'c1' }) };
        },
      },
      { conversationId: 'c1', afterId: 0 },
    );
    expect(watchesOpenAtRead).toBe(1);
    expect(sessionId).toBe('4be2a91c');
    const seen: ConversationUpdate[] = await take(updates, 2);
    expect(seen.map((update) => update.kind)).toEqual(['snapshot', 'status_changed']);
    expect(feed.watchRequests).toEqual([{ conversationId: 'c1', afterId: 0 }]);
  });

  it('on a resume sends no snapshot, only the events after the id', async () => {
    const feed = new FakeEventFeed();
    const first = feed.store({ conversationId: 'c1', messageAdded: messageRecord({ id: 'a' }) });
    feed.store({ conversationId: 'c1', messageAdded: messageRecord({ id: 'b' }) });
    // Nothing is shown of the conversation on a resume, so its run needs no view.
    const sources = {
      getConversation: async () => conversationRecord(),
      viewConversation: async () => {
        throw new Error('a resume describes no run');
      },
    };
    const { updates } = await watchConversation({ feed, ...sources }, { conversationId: 'c1', afterId: first.id });
    const [only] = await take(updates, 1);
    expect(only).toMatchObject({ kind: 'message_added', message: { id: 'b' } });
  });

  it("shows the view of the conversation's run as pipeline_state in the snapshot", async () => {
    const feed = new FakeEventFeed();
    const pipeline: PipelineView = {
      pausedNodePath: [1],
      pausedNodeOutputKey: 'out',
      sessionState: { a: 'b' },
      userMessage: 'go',
      pauses: [],
      branchOutputs: { '0': 'done' },
    };
    const { updates } = await watchConversation(
      {
        feed,
        getConversation: unexpectedRecordRead,
        viewConversation: async () => ({ conversation: conversationRecord({ id: 'c1' }), pipeline }),
      },
      { conversationId: 'c1', afterId: 0 },
    );
    const [snapshot] = await take(updates, 1);
    expect(snapshot).toMatchObject({ kind: 'snapshot', conversation: { id: 'c1', pipeline_state: pipelineStateJson(pipeline) } });
  });

  it('fails before streaming for an unknown conversation, and closes the stream it opened', async () => {
    const feed = new FakeEventFeed();
    const missing = new RpcError(
      GrpcStatus.NOT_FOUND,
      'conversation nope not found',
      '/asg.store.v1.ConversationStoreService/GetConversation',
    );
    await expect(
      watchConversation(
        {
          feed,
          getConversation: unexpectedRecordRead,
          viewConversation: async () => {
            throw missing;
          },
        },
        { conversationId: 'nope', afterId: 0 },
      ),
    ).rejects.toBe(missing);
    // Its watch is cancelled at once: nothing needs to happen on the conversation to release it.
    await vi.waitFor(() => expect(feed.openWatches).toBe(0));
  });
});
