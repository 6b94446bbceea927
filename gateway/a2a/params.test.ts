import { describe, expect, it } from 'vitest';
import { JsonRpcError } from './jsonrpc.js';
import { parseSendParams, parseTaskQuery } from './params.js';

function refusal(run: () => unknown): JsonRpcError {
  try {
    run();
  } catch (error) {
    if (error instanceof JsonRpcError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('parseSendParams', () => {
  it('reads the type-parts dialect: type parts, taskId beside the message', () => {
    expect(
      parseSendParams('type-parts', {
        taskId: 't1',
        message: {
          role: 'user',
          parts: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
            { type: 'data', data: { approved: true } },
          ],
        },
      }),
    ).toEqual({ text: 'a\nb', data: [{ approved: true }], taskId: 't1' });
    expect(parseSendParams('type-parts', { message: { parts: [{ type: 'text', text: 'a' }], taskId: 't2' } })).toMatchObject({
      taskId: 't2',
    });
  });

  it('reads v0.3: kind parts, taskId and contextId in the message, historyLength', () => {
    expect(
      parseSendParams('v0.3', {
        message: {
          kind: 'message',
          messageId: 'm',
          role: 'user',
          taskId: 't',
          contextId: 'c',
          parts: [
            { kind: 'text', text: 'yes' },
            { kind: 'file', file: { uri: 'x' } },
          ],
        },
        configuration: { blocking: true, historyLength: 3 },
      }),
    ).toEqual({ text: 'yes', data: [], taskId: 't', contextId: 'c', historyLength: 3 });
  });

  it('reads v1.0: untagged parts, only object data kept', () => {
    expect(
      parseSendParams('v1.0', {
        message: {
          messageId: 'm',
          role: 'ROLE_USER',
          parts: [{ text: 'hi' }, { data: { approved: false } }, { data: [1, 2] }],
          taskId: 't',
        },
        configuration: {},
      }),
    ).toEqual({ text: 'hi', data: [{ approved: false }], taskId: 't' });
  });

  it.each([
    ['type-parts', {}, 'message:'],
    ['type-parts', { message: { parts: [] } }, 'message.parts:'],
    ['type-parts', { message: { parts: [{ kind: 'text', text: 'a' }] } }, 'message.parts[0].type:'],
    ['v0.3', { message: { messageId: 'm', role: 'user', parts: [{ kind: 'text', text: 1 }] } }, 'message.parts[0].text:'],
    ['v0.3', { message: { messageId: 'm', role: 'robot', parts: [{ kind: 'text', text: 'a' }] } }, 'message.role:'],
    ['v0.3', { message: { messageId: 'm', role: 'agent', parts: [{ kind: 'text', text: 'a' }] } }, 'message.role:'],
    ['v0.3', { message: { role: 'user', parts: [{ kind: 'text', text: 'a' }] } }, 'message.messageId:'],
    ['v0.3', { message: { messageId: 'm', role: 'user', parts: [{ kind: 'text', text: 'a' }], taskId: '' } }, 'message.taskId:'],
    [
      'v0.3',
      { message: { messageId: 'm', role: 'user', parts: [{ kind: 'text', text: 'a' }] }, configuration: { blocking: 'no' } },
      'configuration.blocking:',
    ],
    ['v1.0', { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'a', data: {} }] } }, 'message.parts[0]:'],
    ['v1.0', { message: { messageId: 'm', role: 'ROLE_USER', parts: [{}] } }, 'exactly one of'],
    [
      'v1.0',
      { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'a' }] }, configuration: { historyLength: -1 } },
      'configuration.historyLength:',
    ],
    [
      'v1.0',
      { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'a' }] }, configuration: { returnImmediately: 1 } },
      'configuration.returnImmediately:',
    ],
    ['v1.0', { message: { messageId: 'm', parts: [{ text: 'a' }] } }, 'message.role:'],
    ['v1.0', { message: { role: 'ROLE_USER', parts: [{ text: 'a' }] } }, 'message.messageId:'],
  ] as const)('refuses %s params %j with -32602 naming %s', (dialect, params, field) => {
    const error = refusal(() => parseSendParams(dialect, params));
    expect(error.code).toBe(-32602);
    expect(error.message).toContain(field);
  });
});

describe('parseTaskQuery', () => {
  it('reads {"id"} and a history length', () => {
    expect(parseTaskQuery({ id: 't' })).toEqual({ id: 't' });
    expect(parseTaskQuery({ id: 't', historyLength: 2, tenant: '' })).toEqual({ id: 't', historyLength: 2 });
  });

  it('refuses a missing or empty id', () => {
    expect(refusal(() => parseTaskQuery({})).message).toContain('id:');
    expect(refusal(() => parseTaskQuery({ id: '' })).code).toBe(-32602);
  });
});
