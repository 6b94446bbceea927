import { describe, expect, it } from 'vitest';
import { MessageRole } from '../../../gen/ts/asg/store/v1/store.js';
import { callHash } from '../../common/call-hash.js';
import type { HistoryEntry } from './history.js';
import { assistantCall, assistantText, rejectedResult, rejectionText, toolResult, userMessage } from './messages.js';
import { rejectedInRun, repeatedRejection } from './rejections.js';

// What the model is told of a "no", and which calls of a run were refused.

const add = { id: 'c1', name: 'resources_add' };
const args = { name: 'big', value: 1e9 };

function rejectedRun(reason?: string): HistoryEntry[] {
  return [userMessage('add big with value 1000000000'), assistantCall(add, args), rejectedResult(add, args, reason)];
}

describe('rejectionText', () => {
  it('gives the reason, then says the call did not run and must not be retried', () => {
    expect(rejectionText('value too large')).toBe(
      'Rejected by a human: value too large. The call was not executed. Do not retry it unless the user asks you to.',
    );
    expect(rejectionText('Too large!')).toBe(
      'Rejected by a human: Too large! The call was not executed. Do not retry it unless the user asks you to.',
    );
  });

  it('without a reason says only that a human rejected it', () => {
    expect(rejectionText(undefined)).toBe('Rejected by a human. The call was not executed. Do not retry it unless the user asks you to.');
    expect(rejectionText('   ')).toBe('Rejected by a human. The call was not executed. Do not retry it unless the user asks you to.');
  });
});

describe('rejectedResult', () => {
  it('is an error result marked rejected, with the reason', () => {
    const message = rejectedResult(add, args, 'value too large');
    expect(message.role).toBe(MessageRole.MESSAGE_ROLE_TOOL);
    expect(message.content).toBe(rejectionText('value too large'));
    expect(message.toolCall).toEqual({
      ...add,
      argumentsJson: JSON.stringify(args),
      result: rejectionText('value too large'),
      isError: true,
      rejected: true,
      reason: 'value too large',
    });
  });

  it('leaves the reason out when none was given', () => {
    expect(rejectedResult(add, args, undefined).toolCall).not.toHaveProperty('reason');
  });
});

describe('rejectedInRun', () => {
  it('finds a call rejected since the last user message, by its hash', () => {
    const rejected = rejectedInRun(rejectedRun('value too large'));
    expect([...rejected.keys()]).toEqual([callHash('resources_add', args)]);
    expect(rejected.get(callHash('resources_add', args))).toEqual({ text: rejectionText('value too large'), reason: 'value too large' });
  });

  it('matches arguments whatever their key order (canonical hash)', () => {
    expect(repeatedRejection(rejectedRun(), 'resources_add', { value: 1e9, name: 'big' })).toEqual({ text: rejectionText(undefined) });
  });

  it('does not match another tool or other arguments', () => {
    expect(repeatedRejection(rejectedRun(), 'resources_remove', args)).toBeUndefined();
    expect(repeatedRejection(rejectedRun(), 'resources_add', { name: 'big', value: 5 })).toBeUndefined();
  });

  it('ends the window at a later user message: the user may ask for the call again', () => {
    expect(rejectedInRun([...rejectedRun('no'), assistantText('I did not add it.'), userMessage('please add it after all')]).size).toBe(0);
  });

  it('ignores failed and successful results: only a human rejection counts', () => {
    const history = [userMessage('go'), assistantCall(add, args), toolResult(add, args, 'resources_add failed: boom', true)];
    expect(rejectedInRun(history).size).toBe(0);
  });

  it('sees a rejection after approvals and other steps of the same turn', () => {
    const list = { id: 'c0', name: 'resources_list' };
    const history = [
      userMessage('go'),
      assistantCall(list, {}),
      toolResult(list, {}, '[]', false),
      ...rejectedRun('value too large').slice(1),
    ];
    expect(repeatedRejection(history, 'resources_add', args)?.reason).toBe('value too large');
  });

  it('is empty for an empty history or one without a user message', () => {
    expect(rejectedInRun([]).size).toBe(0);
    expect(rejectedInRun(rejectedRun('x').slice(1)).size).toBe(1);
  });
});
