import type { GenerateResponse, GenerateStreamFinish, GenerateStreamResponse, ToolCallPart } from '../../../gen/ts/asg/llm/v1/llm.js';
import { redactSecrets } from '../../common/secrets.js';

/**
 * The reply of a streamed model call, put together from its events (llm.proto,
 * GenerateStreamResponse): the text deltas joined, the tool calls in order as they came
 * (with their provider metadata), and the finish event's reason and usage — the
 * GenerateResponse that Generate gives for the same answer.
 */
export class StreamedReply {
  private text = '';
  private readonly toolCalls: ToolCallPart[] = [];
  private finish: GenerateStreamFinish | undefined;

  /** Takes one event; returns its text delta, if it is one. */
  add(event: GenerateStreamResponse): string | undefined {
    if (event.textDelta !== undefined) {
      this.text += event.textDelta;
      return event.textDelta;
    }
    if (event.toolCall) this.toolCalls.push(event.toolCall);
    else if (event.finish) this.finish = event.finish;
    return undefined;
  }

  /** The whole reply; undefined when the stream ended without its finish event (it was cut off). */
  reply(): GenerateResponse | undefined {
    if (!this.finish) return undefined;
    return { text: this.text, toolCalls: this.toolCalls, finishReason: this.finish.finishReason, usage: this.finish.usage };
  }
}

// A Bearer token is one word after another: the cut must not fall between the two.
const TRAILING_BEARER = /\bBearer\s+$/i;
/** How far back from a cut "Bearer " is looked for; more whitespace than this between it and its token is not held. */
const BEARER_LOOKBACK_CHARS = 64;

/**
 * Redacts model text that is shown while it streams, as the stored answer is
 * redacted. A secret may arrive split over several deltas, so the text is released a whole
 * word at a time: the trailing word is held back until whitespace follows it (or the answer
 * ends), and a trailing "Bearer " waits for its token. What is released, joined, is the
 * redacted answer. A known secret that itself contains whitespace is redacted in the stored
 * answer but may show in parts here.
 *
 * A delta costs time in its own length plus what it releases, so a long answer
 * without spaces, streamed in many small deltas, stays linear.
 */
export class StreamedTextRedactor {
  private pending = '';
  /** Index just after the last whitespace character of `pending`; 0 when it has none. */
  private lastWhitespaceEnd = 0;

  /** Takes a delta; returns the redacted text that can be shown now ('' when none can yet). */
  push(delta: string): string {
    const offset = this.pending.length;
    this.pending += delta;
    // Only the delta is scanned: reading the held text again (even one character of it) would
    // flatten it each time, which is what made a long word in many deltas quadratic.
    let found = -1;
    for (let index = delta.length - 1; index >= 0; index--) {
      if (isWhitespace(delta.charCodeAt(index))) {
        found = index;
        break;
      }
    }
    // No new whitespace: nothing more can be released than the last delta released.
    if (found < 0) return '';
    this.lastWhitespaceEnd = offset + found + 1;
    let cut = this.lastWhitespaceEnd;
    const from = Math.max(0, cut - BEARER_LOOKBACK_CHARS);
    const bearer = TRAILING_BEARER.exec(this.pending.slice(from, cut));
    if (bearer) cut = from + bearer.index;
    return this.release(cut);
  }

  /** The rest, once the answer is complete. */
  end(): string {
    return this.release(this.pending.length);
  }

  private release(cut: number): string {
    if (cut <= 0) return '';
    const shown = redactSecrets(this.pending.slice(0, cut));
    this.pending = this.pending.slice(cut);
    this.lastWhitespaceEnd = Math.max(0, this.lastWhitespaceEnd - cut);
    return shown;
  }
}

/** What `\s` matches in a regular expression, for one UTF-16 code unit. */
function isWhitespace(code: number): boolean {
  return /\s/.test(String.fromCharCode(code));
}
