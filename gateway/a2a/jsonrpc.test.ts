import { describe, expect, it } from 'vitest';
import { GrpcStatus, RpcError, ServiceError } from '../../services/common/grpc/errors.js';
import { registerSecret } from '../../services/common/secrets.js';
import { failure, JsonRpcCode, JsonRpcError, parseEnvelope, toJsonRpcError } from './jsonrpc.js';

describe('parseEnvelope', () => {
  it('reads a request, with {} for absent params', () => {
    expect(parseEnvelope('{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"t"}}')).toEqual({
      ok: true,
      request: { id: 1, method: 'tasks/get', params: { id: 't' } },
    });
    expect(parseEnvelope('{"jsonrpc":"2.0","id":"a","method":"GetTask"}')).toEqual({
      ok: true,
      request: { id: 'a', method: 'GetTask', params: {} },
    });
    expect(parseEnvelope('{"jsonrpc":"2.0","id":null,"method":"GetTask"}')).toMatchObject({ ok: true, request: { id: null } });
  });

  it('answers -32700 for what is not JSON, or nothing at all', () => {
    for (const body of [undefined, '', '  ', '{"jsonrpc":', 'nope']) {
      const parsed = parseEnvelope(body);
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) expect(parsed.error.code).toBe(JsonRpcCode.PARSE_ERROR);
    }
  });

  it.each([
    ['[]', null, 'batch'],
    ['"text"', null, 'request object'],
    ['{"jsonrpc":"1.0","id":5,"method":"x"}', 5, '"jsonrpc"'],
    ['{"jsonrpc":"2.0","id":{"a":1},"method":"x"}', null, '"id"'],
    ['{"jsonrpc":"2.0","id":5,"method":""}', 5, '"method"'],
    ['{"jsonrpc":"2.0","id":5}', 5, '"method"'],
  ])('answers -32600 for %s, echoing the id %j', (body, id, words) => {
    const parsed = parseEnvelope(body);
    expect(parsed).toMatchObject({ ok: false, id, error: { code: JsonRpcCode.INVALID_REQUEST } });
    if (!parsed.ok) expect(parsed.error.message).toContain(words);
  });

  it('answers -32602 for params that are not an object', () => {
    expect(parseEnvelope('{"jsonrpc":"2.0","id":5,"method":"x","params":[1]}')).toMatchObject({
      ok: false,
      id: 5,
      error: { code: JsonRpcCode.INVALID_PARAMS },
    });
  });
});

describe('toJsonRpcError', () => {
  const method = '/asg.orchestrator.v1.OrchestratorService/SendMessage';

  it('keeps JSON-RPC errors as they are', () => {
    const error = new JsonRpcError(JsonRpcCode.TASK_NOT_CANCELABLE, 'no');
    expect(toJsonRpcError(error)).toEqual({ error, unexpected: false });
  });

  it('maps NOT_FOUND to -32001 and INVALID_ARGUMENT to -32602', () => {
    expect(toJsonRpcError(new RpcError(GrpcStatus.NOT_FOUND, 'conversation x not found', method)).error).toMatchObject({
      code: -32001,
      message: 'conversation x not found',
    });
    expect(toJsonRpcError(new ServiceError(GrpcStatus.INVALID_ARGUMENT, 'message must be a non-empty string')).error).toMatchObject({
      code: -32602,
      message: 'invalid params: message must be a non-empty string',
    });
  });

  it('maps outages to -32603 naming the failed call', () => {
    const mapped = toJsonRpcError(new RpcError(GrpcStatus.UNAVAILABLE, 'No connection established', method));
    expect(mapped.error.code).toBe(-32603);
    expect(mapped.error.message).toBe('service unavailable: SendMessage on the orchestrator failed: No connection established');
    expect(mapped.unexpected).toBe(false);
  });

  it('maps anything else to an unexpected -32603 without secrets', () => {
    registerSecret('sk-test-secret-value-1234567890');
    const mapped = toJsonRpcError(new Error('boom with sk-test-secret-value-1234567890'));
    expect(mapped.unexpected).toBe(true);
    expect(mapped.error.code).toBe(-32603);
    expect(mapped.error.message).not.toContain('sk-test-secret-value');
    expect(failure(3, new JsonRpcError(-32603, 'Bearer abc.def'))).toEqual({
      jsonrpc: '2.0',
      id: 3,
      error: { code: -32603, message: 'Bearer [redacted]' },
    });
  });
});

describe('parseEnvelope strictness', () => {
  it('refuses a request without id, with an id of the wrong type, or with members JSON-RPC does not have', () => {
    const missing = parseEnvelope('{"jsonrpc": "2.0", "method": "tasks/get", "params": {"id": "x"}}');
    expect(missing).toMatchObject({ ok: false, id: null, error: { code: -32600, message: expect.stringContaining('"id" is missing') } });
    const object = parseEnvelope('{"jsonrpc": "2.0", "id": {}, "method": "tasks/get"}');
    expect(object).toMatchObject({ ok: false, error: { code: -32600 } });
    const extra = parseEnvelope('{"jsonrpc": "2.0", "id": 7, "method": "tasks/get", "parms": {}}');
    expect(extra).toMatchObject({ ok: false, id: 7, error: { code: -32600, message: expect.stringContaining('"parms"') } });
  });
});
