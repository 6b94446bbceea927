import { describe, expect, it } from 'vitest';
import { ChatRole } from '../../../gen/ts/asg/llm/v1/llm.js';
import { MessageRole } from '../../../gen/ts/asg/store/v1/store.js';
import { MISSING_RESULT, systemPromptOf, toModelHistory, unansweredCallIds, type HistoryEntry } from './history.js';
import { assistantCall, assistantText, toolResult, userMessage } from './messages.js';

const system: HistoryEntry = { role: MessageRole.MESSAGE_ROLE_SYSTEM, content: 'be brief' };
const call = (id: string, name = 'resources_list') => ({ id, name });

describe('toModelHistory', () => {
  it('leaves the system prompt out and keeps user/assistant turns in order', () => {
    const history = toModelHistory([system, userMessage('hi'), assistantText('hello')]);
    expect(history.map((m) => [m.role, m.text])).toEqual([
      [ChatRole.CHAT_ROLE_USER, 'hi'],
      [ChatRole.CHAT_ROLE_ASSISTANT, 'hello'],
    ]);
  });

  it('groups the calls of one step into one assistant turn and their results into one tool turn', () => {
    const history = toModelHistory([
      userMessage('two things'),
      assistantText('on it'),
      assistantCall(call('a'), {}),
      assistantCall(call('b', 'resources_add'), { name: 'x', value: 1 }),
      toolResult(call('a'), {}, '[]', false),
      toolResult(call('b', 'resources_add'), { name: 'x', value: 1 }, 'added', false),
      assistantText('done'),
    ]);
    expect(history.map((m) => m.role)).toEqual([
      ChatRole.CHAT_ROLE_USER,
      ChatRole.CHAT_ROLE_ASSISTANT,
      ChatRole.CHAT_ROLE_TOOL,
      ChatRole.CHAT_ROLE_ASSISTANT,
    ]);
    expect(history[1]!.text).toBe('on it');
    expect(history[1]!.toolCalls.map((c) => [c.id, c.name, JSON.parse(c.argumentsJson)])).toEqual([
      ['a', 'resources_list', {}],
      ['b', 'resources_add', { name: 'x', value: 1 }],
    ]);
    expect(history[2]!.toolResults.map((r) => [r.id, r.output, r.isError])).toEqual([
      ['a', '[]', false],
      ['b', 'added', false],
    ]);
  });

  it('starts a new assistant turn for a step that follows answered calls', () => {
    const history = toModelHistory([
      userMessage('go'),
      assistantCall(call('a'), {}),
      toolResult(call('a'), {}, 'r1', false),
      assistantCall(call('b'), {}),
      toolResult(call('b'), {}, 'r2', false),
    ]);
    expect(history.map((m) => m.role)).toEqual([
      ChatRole.CHAT_ROLE_USER,
      ChatRole.CHAT_ROLE_ASSISTANT,
      ChatRole.CHAT_ROLE_TOOL,
      ChatRole.CHAT_ROLE_ASSISTANT,
      ChatRole.CHAT_ROLE_TOOL,
    ]);
  });

  it('gives a call without a result an error result, so providers never see an orphan', () => {
    const history = toModelHistory([userMessage('go'), assistantCall(call('a'), {}), userMessage('next')]);
    expect(history[2]).toMatchObject({ role: ChatRole.CHAT_ROLE_TOOL, toolResults: [{ id: 'a', output: MISSING_RESULT, isError: true }] });
    expect(history[3]).toMatchObject({ role: ChatRole.CHAT_ROLE_USER, text: 'next' });
  });

  it('drops a result whose call is not in the history', () => {
    const history = toModelHistory([userMessage('go'), toolResult(call('ghost'), {}, 'boo', false)]);
    expect(history).toHaveLength(1);
  });
});

describe('systemPromptOf and unansweredCallIds', () => {
  it('prefers the prompt the conversation was created with', () => {
    expect(systemPromptOf([system, userMessage('x')], 'config prompt')).toBe('be brief');
    expect(systemPromptOf([userMessage('x')], 'config prompt')).toBe('config prompt');
  });

  it('lists the calls still waiting for a result', () => {
    expect(unansweredCallIds([assistantCall(call('a'), {}), assistantCall(call('b'), {}), toolResult(call('a'), {}, 'ok', false)])).toEqual(
      ['b'],
    );
  });
});

describe('provider state of a call', () => {
  it('travels from the model reply through the stored message back into the history', () => {
    const signed = assistantCall({ id: 'a', name: 'resources_list', providerMetadataJson: '{"google":{"thoughtSignature":"sig-1"}}' }, {});
    expect(signed.toolCall?.providerMetadataJson).toBe('{"google":{"thoughtSignature":"sig-1"}}');
    const history = toModelHistory([userMessage('go'), signed, toolResult(call('a'), {}, 'ok', false)]);
    expect(history[1]!.toolCalls[0]!.providerMetadataJson).toBe('{"google":{"thoughtSignature":"sig-1"}}');
  });
});
