/**
 * The copies the in-process transport makes in `asg up` instead of protobuf bytes: for every
 * method of every service, a copy equal to what the bytes give, sharing no object with the
 * original — also where ts-proto hands a field on as it is (Struct, Timestamp, bytes).
 */
import { describe, expect, it } from 'vitest';
import * as a2a from '../../../gen/ts/asg/a2a/v1/a2a.js';
import * as llm from '../../../gen/ts/asg/llm/v1/llm.js';
import * as orchestrator from '../../../gen/ts/asg/orchestrator/v1/orchestrator.js';
import * as store from '../../../gen/ts/asg/store/v1/store.js';
import * as tools from '../../../gen/ts/asg/tools/v1/tools.js';
import type { AnyMethod } from './in-process.js';
import { loadMessageCopies, messageCopies } from './message-copies.js';

const MODULES = [a2a, llm, orchestrator, store, tools] as ReadonlyArray<Record<string, unknown>>;

function methodsOf(module: Record<string, unknown>): AnyMethod[] {
  return Object.entries(module)
    .filter(([name]) => name.endsWith('Service') && !name.endsWith('ServiceClient'))
    .flatMap(([, definition]) => Object.values(definition as Record<string, AnyMethod>));
}

const bytes = <T>(method: { responseSerialize: (value: T) => Buffer; responseDeserialize: (bytes: Buffer) => unknown }, value: unknown) =>
  method.responseDeserialize(method.responseSerialize(value as T));

describe('the copies of the in-process transport', () => {
  it('copies the request and the response of every method of every service, none left to the bytes', async () => {
    const copies = await loadMessageCopies();
    const methods = MODULES.flatMap(methodsOf);
    expect(methods.length).toBeGreaterThan(40);
    expect(methods.filter((method) => !copies.get(method.path)).map((method) => method.path)).toEqual([]);
    for (const method of methods) {
      const copy = copies.get(method.path)!;
      expect(copy.request({}), method.path).toStrictEqual(method.requestDeserialize(Buffer.alloc(0)));
      expect(copy.response({}), method.path).toStrictEqual(method.responseDeserialize(Buffer.alloc(0)));
    }
  });

  it('gives what the bytes give for a conversation with dates, a tool call and a run, sharing none of its objects', () => {
    const method = store.ConversationStoreServiceService.getConversation;
    const created = new Date('2026-11-29T10:00:00.123Z');
    const original = {
      conversation: {
        ...store.Conversation.fromPartial({ id: 'c1', sessionId: 's' }),
        messages: [
          store.Message.fromPartial({ id: 'm1', content: 'hello', seq: 1, createdAt: created }),
          store.Message.fromPartial({ id: 'm2', seq: 2, toolCall: { id: 't', name: 'add', argumentsJson: '{}' }, createdAt: created }),
        ],
        createdAt: created,
        run: { state: Buffer.from([1, 2, 3]), schemaVersion: 2, revision: 7 },
        extra: 'not in the proto',
      },
    };
    const copy = messageCopies(MODULES).get(method.path)!.response(original) as store.GetConversationResponse;
    expect(copy).toStrictEqual(bytes(method, original));
    expect(copy.conversation).not.toHaveProperty('extra');

    created.setTime(0);
    original.conversation.run.state[0] = 9;
    original.conversation.messages[1]!.toolCall!.name = 'changed';
    expect(copy.conversation?.messages[0]?.createdAt).toEqual(new Date('2026-11-29T10:00:00.123Z'));
    expect(copy.conversation?.createdAt).toEqual(new Date('2026-11-29T10:00:00.123Z'));
    expect([...(copy.conversation?.run?.state ?? [])]).toEqual([1, 2, 3]);
    expect(Buffer.isBuffer(copy.conversation?.run?.state)).toBe(true);
    expect(copy.conversation?.messages[1]?.toolCall?.name).toBe('add');
  });

  it("clones a Struct whole: the original's schema changed afterwards is not the copy's, and a __proto__ key stays data", () => {
    const method = tools.ToolBrokerServiceService.listTools;
    const schema = JSON.parse('{"type":"object","properties":{"name":{"type":"string","enum":["a","b"]}},"__proto__":{"x":1}}');
    const original = { tools: [tools.Tool.fromPartial({ name: 'add', server: 'resources', inputSchema: schema })], servers: [] };
    const copy = messageCopies(MODULES).get(method.path)!.response(original) as tools.ListToolsResponse;
    expect(copy.tools[0]?.inputSchema).not.toBe(schema);
    schema.properties.name.enum.push('c');
    expect(copy.tools[0]?.inputSchema?.properties.name.enum).toEqual(['a', 'b']);
    expect(Object.getPrototypeOf(copy.tools[0]?.inputSchema)).toBe(Object.prototype);
    expect(Object.hasOwn(copy.tools[0]!.inputSchema!, '__proto__')).toBe(true);
  });

  it('hands a message holding what is not plain data (a class instance in a Struct) to the bytes', () => {
    const method = llm.LlmGatewayServiceService.generate;
    class Odd {
      value = 1;
    }
    const original = llm.GenerateRequest.fromPartial({ model: 'm', tools: [{ name: 't', inputSchema: { odd: new Odd() } }] });
    const copy = messageCopies(MODULES).get(method.path)!.request(original);
    expect(copy).toStrictEqual(method.requestDeserialize(method.requestSerialize(original)));
  });

  it('leaves to the bytes a method whose types do not follow the naming rule or do not match', () => {
    const definition = {
      odd: { ...llm.LlmGatewayServiceService.generate, path: '/asg.llm.v1.LlmGatewayService/Odd' },
      mismatched: { ...llm.LlmGatewayServiceService.generate, path: '/asg.llm.v1.LlmGatewayService/GenerateStream' },
    };
    const copies = messageCopies([{ ...llm, OddService: definition }]);
    expect(copies.get('/asg.llm.v1.LlmGatewayService/Odd')).toBeUndefined();
    expect(copies.get('/asg.llm.v1.LlmGatewayService/Generate')).toBeDefined();
  });
});
