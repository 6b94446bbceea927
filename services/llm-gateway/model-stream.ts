import { NoContentGeneratedError, type TextStreamPart, type ToolSet } from 'ai';
import type { GenerateStreamResponse } from '../../gen/ts/asg/llm/v1/llm.js';
import { normaliseFinishReason, toolCallPartOf, toolCallPartOfError } from './reply.js';

/** The stream ended because its abort signal fired; the caller knows which signal and why. */
class ModelStreamAborted extends Error {
  constructor() {
    super('the model stream was aborted');
    this.name = 'ModelStreamAborted';
  }
}

/**
 * A failure the provider reported inside the stream. `reported` is what the SDK handed on,
 * as it was: an SDK error (APICallError, a chunk that did not parse) or, for Anthropic's and
 * OpenAI's in-stream error events, the vendor's own error object.
 */
export class ModelStreamFailed extends Error {
  constructor(readonly reported: unknown) {
    super('the model stream reported an error');
    this.name = 'ModelStreamFailed';
  }
}

/**
 * The events of one `streamText` call (its `fullStream`) in the proto's terms. Text deltas
 * pass on as they come; a tool call passes on once the SDK has it complete and parsed (the
 * SDK gathers each provider's argument fragments); the SDK's `finish` becomes the finish
 * event. Everything else (step and block boundaries, reasoning, argument fragments) is not
 * part of the reply and is skipped. Tool calls are mapped exactly as Generate maps them
 * (reply.ts), so both methods give the same calls for the same answer.
 *
 * The parts must include the provider's raw chunks (`includeRawChunks`): a 200 whose body
 * holds no event at all (a JSON document, an HTML page) ends in the SDK with an empty
 * `finish`, which would read as an empty answer; with no raw chunk before the finish it is
 * a reply that could not be understood, as Generate reports it (INTERNAL).
 */
export class ModelStream {
  private readonly sentCalls = new Set<string>();
  private readonly parts: AsyncIterator<TextStreamPart<ToolSet>>;
  private rawChunks = 0;

  constructor(parts: AsyncIterable<TextStreamPart<ToolSet>>) {
    this.parts = parts[Symbol.asyncIterator]();
  }

  /**
   * The next event, or undefined when the stream is over. Throws ModelStreamFailed for an
   * error the stream reported and ModelStreamAborted when it was aborted; a broken
   * connection surfaces as whatever the HTTP client threw.
   */
  async next(): Promise<GenerateStreamResponse | undefined> {
    for (;;) {
      const { done, value } = await this.parts.next();
      if (done) return undefined;
      const event = this.eventOf(value);
      if (event) return event;
    }
  }

  /** Stops reading; the SDK releases the provider's response. A stream that failed has nothing left to release. */
  async close(): Promise<void> {
    await this.parts.return?.().catch(() => undefined);
  }

  private eventOf(part: TextStreamPart<ToolSet>): GenerateStreamResponse | undefined {
    switch (part.type) {
      case 'text-delta':
        return part.text === '' ? undefined : { textDelta: part.text };
      case 'tool-call':
        // Calls the provider ran itself (e.g. Gemini's code execution) are not ours to run.
        if (part.providerExecuted) return undefined;
        this.sentCalls.add(part.toolCallId);
        return { toolCall: toolCallPartOf(part) };
      case 'tool-error':
        // The SDK follows an invalid call with an error for it; the call itself was sent.
        if (part.providerExecuted || this.sentCalls.has(part.toolCallId)) return undefined;
        this.sentCalls.add(part.toolCallId);
        return { toolCall: toolCallPartOfError(part) };
      case 'raw':
        this.rawChunks += 1;
        return undefined;
      case 'finish':
        if (this.rawChunks === 0) {
          throw new ModelStreamFailed(
            new NoContentGeneratedError({ message: 'the response held no stream events (it is not a server-sent event stream)' }),
          );
        }
        return {
          finish: {
            finishReason: normaliseFinishReason(part.finishReason, this.sentCalls.size > 0),
            usage: { inputTokens: part.totalUsage.inputTokens ?? 0, outputTokens: part.totalUsage.outputTokens ?? 0 },
          },
        };
      case 'error':
        throw new ModelStreamFailed(part.error);
      case 'abort':
        throw new ModelStreamAborted();
      default:
        return undefined;
    }
  }
}
