import { describe, expect, it } from 'vitest';
import { headerVersion, legacyTaskDialect, methodInfo, originDialect, partsDialect, requestDialect, storedOrigin } from './dialect.js';

const info = (method: string) => methodInfo(method)!;

describe('methodInfo', () => {
  it('knows the slash-named and the v1.0 methods, and nothing inherited', () => {
    expect(methodInfo('message/send')).toEqual({ operation: 'send', family: 'legacy' });
    expect(methodInfo('message/stream')).toEqual({ operation: 'stream', family: 'legacy' });
    expect(methodInfo('tasks/cancel')).toEqual({ operation: 'cancel', family: 'legacy' });
    expect(methodInfo('SendStreamingMessage')).toEqual({ operation: 'stream', family: 'v1.0' });
    expect(methodInfo('GetTask')).toEqual({ operation: 'get', family: 'v1.0' });
    expect(methodInfo('toString')).toBeUndefined();
    expect(methodInfo('tasks/resubscribe')).toEqual({ operation: 'subscribe', family: 'legacy' });
    expect(methodInfo('SubscribeToTask')).toEqual({ operation: 'subscribe', family: 'v1.0' });
    expect(methodInfo('ListTasks')).toEqual({ operation: 'list', family: 'v1.0' });
    expect(methodInfo('tasks/list')).toEqual({ operation: 'list', family: 'legacy' });
  });

  it('knows the push notification methods of both versions', () => {
    expect(methodInfo('tasks/pushNotificationConfig/get')).toEqual({ operation: 'pushGet', family: 'legacy' });
    expect(methodInfo('ListTaskPushNotificationConfigs')).toEqual({ operation: 'pushList', family: 'v1.0' });
    expect(methodInfo('CreateTaskPushNotificationConfig')).toEqual({ operation: 'pushSet', family: 'v1.0' });
  });
});

describe('headerVersion', () => {
  it.each([
    [undefined, undefined],
    ['', undefined],
    ['1.0', 'v1.0'],
    [' 1 ', 'v1.0'],
    ['0.3', 'v0.3'],
    ['0.3.0', 'v0.3'],
    ['0.2.5', 'v0.3'],
    ['2.0', 'unsupported'],
    ['1.1', 'unsupported'],
    ['latest', 'unsupported'],
  ])('%j → %j', (value, expected) => {
    expect(headerVersion(value)).toBe(expected);
  });
});

describe('partsDialect', () => {
  it('reads kind as v0.3 and type as type-parts', () => {
    expect(partsDialect({ message: { parts: [{ kind: 'text', text: 'a' }] } })).toBe('v0.3');
    expect(partsDialect({ message: { parts: [{ type: 'text', text: 'a' }] } })).toBe('type-parts');
    expect(partsDialect({ message: { kind: 'message', parts: [] } })).toBe('v0.3');
    expect(partsDialect({ message: { parts: [{ text: 'a' }] } })).toBeUndefined();
    expect(partsDialect('nonsense')).toBeUndefined();
  });
});

describe('requestDialect', () => {
  it('lets the method name decide for v1.0, whatever the parts', () => {
    expect(requestDialect(info('SendMessage'), undefined, { message: { parts: [{ kind: 'text' }] } })).toBe('v1.0');
    expect(requestDialect(info('GetTask'), 'v0.3', {})).toBe('v1.0');
  });

  it('reads message/send by its parts, then by the header, else as type-parts', () => {
    expect(requestDialect(info('message/send'), undefined, { message: { parts: [{ kind: 'text' }] } })).toBe('v0.3');
    expect(requestDialect(info('message/send'), 'v0.3', { message: { parts: [{ type: 'text' }] } })).toBe('type-parts');
    expect(requestDialect(info('message/send'), 'v0.3', { message: { parts: [] } })).toBe('v0.3');
    expect(requestDialect(info('message/send'), undefined, {})).toBe('type-parts');
  });

  it('streams only in v0.3 among the slash-named methods', () => {
    expect(requestDialect(info('message/stream'), undefined, { message: { parts: [{ type: 'text' }] } })).toBe('v0.3');
  });

  it('leaves a headerless tasks/get to its task', () => {
    expect(requestDialect(info('tasks/get'), undefined, { id: 'x' })).toBeUndefined();
    expect(requestDialect(info('tasks/get'), 'v1.0', { id: 'x' })).toBeUndefined();
    expect(requestDialect(info('tasks/cancel'), 'v0.3', { id: 'x' })).toBe('v0.3');
  });
});

describe('origin dialects', () => {
  it('reads a conversation made over REST, or with an unknown origin, as type-parts', () => {
    expect(originDialect(undefined)).toBe('type-parts');
    expect(originDialect({ dialect: 'v0.9', contextId: 'c' })).toBe('type-parts');
    expect(originDialect({ dialect: 'v1.0', contextId: 'c' })).toBe('v1.0');
  });

  it('stores type-parts as "seed", the code stored conversations already carry, and reads it back', () => {
    expect(storedOrigin('type-parts', 'c')).toEqual({ dialect: 'seed', contextId: 'c' });
    expect(storedOrigin('v0.3', 'c')).toEqual({ dialect: 'v0.3', contextId: 'c' });
    for (const dialect of ['type-parts', 'v0.3', 'v1.0'] as const) expect(originDialect(storedOrigin(dialect, 'c'))).toBe(dialect);
  });

  it('answers slash-named task methods in the task dialect, v1.0 tasks as v0.3', () => {
    expect(legacyTaskDialect('type-parts')).toBe('type-parts');
    expect(legacyTaskDialect('v0.3')).toBe('v0.3');
    expect(legacyTaskDialect('v1.0')).toBe('v0.3');
  });
});
