import { describe, expect, it } from 'vitest';
import { configSchema, DEFAULT_GRPC_SETTINGS } from './schema.js';
import { CONFIG_SLICES, configSlice, type ConfigSliceName } from './slices.js';

// Each service receives only its own slice of the configuration.
describe('config slices', () => {
  // Every optional field of a slice set, so that "exactly the fields" sees them all.
  const config = configSchema.parse({
    agent: { name: 'root', type: 'llm' },
    auth: { tokens: [{ name: 'alice', token_sha256: 'a'.repeat(64), roles: ['chat'] }] },
  });
  const services = Object.keys(CONFIG_SLICES) as ConfigSliceName[];

  it.each(services)('%s gets exactly the fields of its slice', (service) => {
    const slice = configSlice(config, service);
    expect(Object.keys(slice).sort()).toEqual([...CONFIG_SLICES[service]].sort());
    for (const [field, value] of Object.entries(slice)) expect(value).toBe(config[field as keyof typeof config]);
  });

  it('leaves out an optional field that is not set', () => {
    expect(configSlice(configSchema.parse({}), 'orchestrator')).not.toHaveProperty('agent');
    expect(configSlice(configSchema.parse({}), 'a2aBridge')).toEqual({ a2a_max_depth: 5, grpc: DEFAULT_GRPC_SETTINGS });
  });

  it('every field of the configuration reaches a service, but the ones only the CLI reads', () => {
    const sliced = new Set<string>(services.flatMap((service) => CONFIG_SLICES[service]));
    const unsliced = Object.keys(config).filter((field) => !sliced.has(field));
    // services: where each service listens (cli/serve.ts); shutdown_grace: the signal handler (cli/main.ts);
    // log: the process's logger, set up once for all its services (cli/agent.ts).
    expect(unsliced.sort()).toEqual(['log', 'services', 'shutdown_grace']);
  });
});
