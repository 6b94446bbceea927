import type { Response } from 'express';
import type { ConversationEvent } from '../../gen/ts/asg/store/v1/store.js';
import type { Logger } from '../../services/common/log.js';
import { openEventStream } from '../../services/common/sse.js';
import { abortable, startReading } from '../app/abortable.js';
import type { EventFeed } from '../app/event-feed.js';
import {
  answerText,
  completionId,
  extrasOf,
  nowSeconds,
  runTurn,
  type ChatCompletionChunkJson,
  type TurnOutcome,
  type TurnsAgent,
  type TurnTarget,
} from './completions.js';
import { openAiFailureOf } from './errors.js';
import type { ChatCompletionRequest } from './requests.js';

/**
 * `stream: true`: the turn as server-sent `chat.completion.chunk` objects, ending with
 * `data: [DONE]` (OpenAI's wire format). The text arrives as the model writes it (the
 * conversation's live `text_delta` events); when the turn ends, whatever the deltas did not
 * carry of the answer follows — all of it when none arrived, and the approval text when the
 * turn stopped for one — and the last chunk has `finish_reason: "stop"` and the extra fields;
 * with `stream_options.include_usage` one more chunk follows, with no choices and the usage.
 * Before the last chunk, `shown` is told the whole text the client was sent.
 * A failure after the stream began is one `data: {"error": …}` message (how OpenAI reports
 * one mid-stream; the openai clients raise it as an APIError), then the stream ends.
 * A client that goes away does not stop the turn: it runs to its end, or to its approval.
 */

/** What of `response` the deltas of its model step did not carry. */
export function remainderOf(response: string, streamed: string): string {
  if (streamed === '') return response;
  if (response.startsWith(streamed)) return response.slice(streamed.length);
  // The step's deltas are not the answer (some were missed before the watch was open): the
  // whole answer, apart from what was shown.
  return response === '' ? '' : `\n\n${response}`;
}

export async function streamTurn(
  res: Response,
  parts: { agent: TurnsAgent; feed: EventFeed; log: Logger },
  request: ChatCompletionRequest,
  target: TurnTarget,
  shown: (answer: string) => Promise<void>,
): Promise<void> {
  const id = completionId();
  const created = nowSeconds();
  const chunk = (delta: ChatCompletionChunkJson['choices'][0]['delta'], last?: TurnOutcome): ChatCompletionChunkJson => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model: request.model,
    choices: [{ index: 0, delta, finish_reason: last ? 'stop' : null, logprobs: null }],
    ...extrasOf(target, last),
  });
  // Open before the turn starts, so that its first deltas are not missed; its store stream is
  // cancelled when the turn is over (the client leaving does not stop the turn).
  const turnOver = new AbortController();
  const events = startReading(parts.feed.watch({ conversationId: target.conversationId, afterId: 0, signal: turnOver.signal }));

  const stream = openEventStream(res);
  stream.send({ data: chunk({ role: 'assistant', content: '' }) });

  // The text of the current model step shown so far: a tool call starts the next step.
  let stepText = '';
  // Everything the client was sent.
  let sentText = '';
  const relay = (async () => {
    try {
      for await (const event of abortable<ConversationEvent>(events, turnOver.signal)) {
        if (event.toolCallStarted) stepText = '';
        const text = event.textDelta?.text;
        if (text) {
          stepText += text;
          sentText += text;
          stream.send({ data: chunk({ content: text }) });
        }
      }
    } catch (error) {
      // Deltas are a courtesy: without them the answer still comes whole at the end.
      parts.log.warn('the conversation events could not be followed; the answer comes at the end of the turn', {
        error: error instanceof Error ? error.message : String(error),
      });
    }
  })();

  try {
    const outcome = await runTurn(parts.agent, target, request.input);
    turnOver.abort();
    await relay;
    const rest = remainderOf(outcome.response, stepText);
    const notice = outcome.approval ? answerText({ response: '', approval: outcome.approval }, target.conversationId) : '';
    const tail = notice ? (rest || stepText ? `${rest}\n\n${notice}` : notice) : rest;
    if (tail) stream.send({ data: chunk({ content: tail }) });
    await shown(sentText + tail);
    stream.send({ data: chunk({}, outcome) });
    if (request.includeUsage) stream.send({ data: { ...chunk({}), choices: [], usage: outcome.usage } });
    stream.send({ data: '[DONE]' });
  } catch (error) {
    turnOver.abort();
    await relay;
    const failure = openAiFailureOf(error);
    if (failure.unexpected) parts.log.error('request failed', { route: '/v1/chat/completions', error: failure.body.error.message });
    stream.send({ data: failure.body });
  } finally {
    stream.end();
  }
}
