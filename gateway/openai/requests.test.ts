import { describe, expect, it } from 'vitest';
import { OpenAiError } from './errors.js';
import { IGNORED_REQUEST_FIELDS, parseChatCompletionRequest } from './requests.js';

function refusal(body: unknown, header?: string): OpenAiError {
  try {
    parseChatCompletionRequest(body, header);
  } catch (error) {
    expect(error).toBeInstanceOf(OpenAiError);
    return error as OpenAiError;
  }
  throw new Error('the request was accepted');
}

describe('parseChatCompletionRequest', () => {
  it('takes the last user message as the input, text parts joined, and the user and assistant messages before it as the history', () => {
    const parsed = parseChatCompletionRequest({
      model: 'agent',
      messages: [
        { role: 'system', content: 'x' },
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'reply' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ],
        },
        { role: 'tool', content: 'after', tool_call_id: 't' },
      ],
    });
    expect(parsed).toEqual({
      model: 'agent',
      input: 'a\nb',
      stream: false,
      includeUsage: false,
      history: [
        { role: 'user', text: 'first' },
        { role: 'assistant', text: 'reply' },
      ],
    });
  });

  it('accepts every standard field and ignores those that do not apply', () => {
    const ignored = Object.fromEntries(IGNORED_REQUEST_FIELDS.map((name) => [name, null]));
    const parsed = parseChatCompletionRequest({
      model: 'agent',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
      n: 1,
      ...ignored,
    });
    expect(parsed).toEqual({ model: 'agent', input: 'hi', stream: true, includeUsage: true, history: [] });
  });

  it('reads the history leniently: a non-text part shown earlier is left out, an assistant message without content is empty', () => {
    const parsed = parseChatCompletionRequest({
      model: 'agent',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image_url', image_url: { url: 'x' } },
            { type: 'text', text: 'what is this' },
          ],
        },
        { role: 'assistant', content: null, tool_calls: [] },
        { role: 'user', content: 'go on' },
      ],
    });
    expect(parsed.history).toEqual([
      { role: 'user', text: 'what is this' },
      { role: 'assistant', text: '' },
    ]);
  });

  it('picks the conversation from the header first, then "user"', () => {
    const body = { model: 'agent', messages: [{ role: 'user', content: 'hi' }], user: 'from-user' };
    expect(parseChatCompletionRequest(body).conversationId).toBe('from-user');
    expect(parseChatCompletionRequest(body, ' from-header ').conversationId).toBe('from-header');
    expect(refusal(body, '  ')).toMatchObject({ status: 400, param: 'X-Conversation-Id' });
  });

  it('names unknown fields, wrong fields and missing input', () => {
    const unknown = refusal({ model: 'agent', messages: [{ role: 'user', content: 'hi' }], colour: 'blue', size: 2 });
    expect(unknown).toMatchObject({ status: 400, param: 'colour' });
    expect(unknown.message).toContain('"colour", "size"');
    expect(refusal({ messages: [{ role: 'user', content: 'hi' }] })).toMatchObject({ param: 'model' });
    expect(refusal({ model: 'agent', messages: [] })).toMatchObject({ param: 'messages' });
    expect(refusal({ model: 'agent', messages: [{ role: 'robot', content: 'hi' }] })).toMatchObject({ param: 'messages[0].role' });
    expect(refusal({ model: 'agent', messages: [{ role: 'system', content: 'hi' }] })).toMatchObject({ param: 'messages' });
    expect(refusal({ model: 'agent', messages: [{ role: 'user', content: '  ' }] })).toMatchObject({ param: 'messages[0].content' });
    expect(
      refusal({ model: 'agent', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }] }),
    ).toMatchObject({ param: 'messages[0].content[0].type' });
    expect(refusal({ model: 'agent', messages: [{ role: 'user', content: 'hi' }], n: 2 })).toMatchObject({ param: 'n' });
    expect(refusal({ model: 'agent', messages: [{ role: 'user', content: 'hi' }], stream: 'yes' })).toMatchObject({ param: 'stream' });
    expect(refusal([1, 2])).toMatchObject({ status: 400, param: null });
  });
});
