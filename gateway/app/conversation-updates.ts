import type { Conversation } from '../../gen/ts/asg/store/v1/store.js';
import { abortable, startReading, watchLifetime } from './abortable.js';
import type { ConversationView } from './agent.js';
import type { EventFeed } from './event-feed.js';
import { conversationEventJson, type ConversationEventJson } from './events.js';
import { conversationJson, type ConversationJson } from './shapes.js';

/**
 * What a watcher of one conversation receives: without a last event id, the conversation as
 * it is (`snapshot`, C) and then every event; with one, only the events after it — the
 * stored ones it missed, in order, then live ones.
 */
export type ConversationUpdate = { kind: 'snapshot'; conversation: ConversationJson } | ConversationEventJson;

export interface ConversationUpdatesRequest {
  conversationId: string;
  /** The id of the last stored event the watcher saw; 0 for a first connection. */
  afterId: number;
  /** Aborts when the watcher goes away. */
  signal?: AbortSignal;
}

export interface ConversationSources {
  feed: EventFeed;
  /** The conversation's record (Agent.getConversation); NOT_FOUND for an unknown id. */
  getConversation(id: string): Promise<Conversation>;
  /** The whole conversation with the view of its run (Agent.viewConversation), for the snapshot; NOT_FOUND for an unknown id. */
  viewConversation(id: string): Promise<ConversationView>;
}

export interface ConversationWatch {
  /** The conversation's stored session id, reused for every later request of the conversation. */
  sessionId: string;
  /** Read it to the end or until the request's signal aborts; it fails like a gRPC call. */
  updates: AsyncGenerator<ConversationUpdate, void>;
}

/**
 * Opens the watch: fails at once (NOT_FOUND, UNAVAILABLE) before anything is streamed, so
 * an adapter can still answer with a plain error.
 */
export async function watchConversation(sources: ConversationSources, request: ConversationUpdatesRequest): Promise<ConversationWatch> {
  const { conversationId, afterId, signal } = request;
  // The stream is opened before the conversation is read, so that a change made in between
  // is in the snapshot, in the stream, or in both — never in neither. Events the snapshot
  // already shows are harmless to apply again: messages carry ids, and the others describe
  // a state the later events of the stream move on from.
  const watching = watchLifetime(signal);
  const events = startReading(sources.feed.watch({ conversationId, afterId, signal: watching.signal }));
  let view: ConversationView;
  try {
    // Read on a resume too: an unknown id gets a clear NOT_FOUND, not a stream that stays
    // silent. Only a snapshot shows the run: a resume needs no view of it.
    view = afterId === 0 ? await sources.viewConversation(conversationId) : { conversation: await sources.getConversation(conversationId) };
  } catch (error) {
    watching.end();
    throw error;
  }
  async function* updates(): AsyncGenerator<ConversationUpdate, void> {
    try {
      if (afterId === 0) yield { kind: 'snapshot', conversation: conversationJson(view.conversation, view.pipeline) };
      for await (const event of abortable(events, watching.signal)) {
        const json = conversationEventJson(event);
        if (json) yield json;
      }
    } finally {
      watching.end();
    }
  }
  return { sessionId: view.conversation.sessionId, updates: updates() };
}
