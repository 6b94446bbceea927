/** The `grpc` section and the service addresses a gRPC target may take. */
import { describe, expect, it } from 'vitest';
import { configSchema, DEFAULT_GRPC_SETTINGS } from './schema.js';

describe('grpc settings', () => {
  it('defaults: keepalive 30 s / 10 s, connection age 5 min with 30 s grace, no drain delay, in-process calls in one process', () => {
    expect(configSchema.parse({}).grpc).toEqual({
      keepalive_time: 30_000,
      keepalive_timeout: 10_000,
      max_connection_age: 300_000,
      max_connection_age_grace: 30_000,
      drain_delay: 0,
      in_process: true,
    });
    expect(DEFAULT_GRPC_SETTINGS).toEqual(configSchema.parse({}).grpc);
  });

  it('reads durations, and refuses unknown keys', () => {
    expect(configSchema.parse({ grpc: { max_connection_age: '10m', drain_delay: '5s' } }).grpc).toMatchObject({
      max_connection_age: 600_000,
      drain_delay: 5000,
    });
    expect(() => configSchema.parse({ grpc: { max_age: '10m' } })).toThrow();
    expect(configSchema.parse({ grpc: { in_process: false } }).grpc.in_process).toBe(false);
    expect(() => configSchema.parse({ grpc: { in_process: 'no' } })).toThrow();
  });

  it.each([
    '127.0.0.1:7101',
    'store:7101',
    'dns:///store.asg.svc.cluster.local:7101',
    'dns://10.0.0.10:53/store:7101',
    'ipv4:127.0.0.1:7101,127.0.0.1:7201',
    'ipv6:[::1]:7101',
  ])('takes %s as a service address', (address) => {
    expect(configSchema.parse({ services: { conversation_store: address } }).services.conversation_store).toBe(address);
  });

  it.each(['store', 'http://store:7101', 'dns:///store', 'store:port'])('refuses %s as a service address', (address) => {
    expect(() => configSchema.parse({ services: { conversation_store: address } })).toThrow();
  });
});
