import type { ConversationEvent, ToolCall } from '../../../gen/ts/asg/store/v1/store.js';
import type { Logger } from '../../common/log.js';
import { redactSecrets } from '../../common/secrets.js';
import type { OrchestratorClients } from '../clients.js';

/** How long a live event may take to reach the store; after that it is dropped. */
export const PUBLISH_TIMEOUT_MS = 1000;
/**
 * Live events on their way at once. Beyond that the store is slow or gone, and new events are
 * dropped rather than piling up in memory: live events are a view, the stored ones the record.
 */
export const MAX_IN_FLIGHT = 256;

/** A live event before it is sent: which conversation, and one live-only kind. */
type LiveEvent = Pick<ConversationEvent, 'conversationId' | 'toolCallStarted' | 'toolCallFinished' | 'textDelta'>;

/**
 * Publishes the live-only events of a turn (store.proto PublishEvent): tool calls starting and
 * finishing, and the model's text as it streams. Fire and forget: a publish is started and
 * never awaited, so a slow or failing store costs a turn nothing but the few microseconds of
 * starting the call; a failure is logged at debug and otherwise ignored. The calls leave in
 * the order they were made, on the same channel as the turn's store writes, so a watcher sees
 * them in order and before the message they lead to.
 */
export class LiveEvents {
  private inFlight = 0;

  constructor(
    private readonly store: Pick<OrchestratorClients['store'], 'publishEvent'>,
    private readonly log: Logger,
  ) {}

  toolCallStarted(conversationId: string, call: ToolCall): void {
    this.publish({ conversationId, toolCallStarted: call }, 'tool_call_started');
  }

  toolCallFinished(conversationId: string, call: ToolCall): void {
    this.publish({ conversationId, toolCallFinished: call }, 'tool_call_finished');
  }

  /** Text the model produced; `node` in orchestrated mode. Empty text is not an event. */
  textDelta(conversationId: string, text: string, node: string | undefined): void {
    if (text === '') return;
    this.publish({ conversationId, textDelta: { text, ...(node !== undefined && { node }) } }, 'text_delta');
  }

  private publish(event: LiveEvent, kind: string): void {
    if (this.inFlight >= MAX_IN_FLIGHT) {
      this.log.debug('live event dropped: too many still on their way to the store', {
        conversation: event.conversationId,
        kind,
        in_flight: this.inFlight,
      });
      return;
    }
    this.inFlight += 1;
    let sent: Promise<unknown>;
    try {
      sent = this.store.publishEvent({ event: { id: 0, at: new Date(), ...event } }, { timeoutMs: PUBLISH_TIMEOUT_MS });
    } catch (error) {
      sent = Promise.reject(error);
    }
    sent
      .catch((error: unknown) =>
        this.log.debug('live event not published', {
          conversation: event.conversationId,
          kind,
          error: redactSecrets(error instanceof Error ? error.message : String(error)),
        }),
      )
      .finally(() => {
        this.inFlight -= 1;
      });
  }
}
