import { afterEach, describe, expect, it } from 'vitest';
import { Dialect } from '../../gen/ts/asg/a2a/v1/a2a.js';
import type { Logger } from '../common/log.js';
import { startSdkAgent, type A2aTestPeer } from '../../test/support/a2a-peers.js';
import { openOutboundCall } from './outbound.js';
import { PeerDirectory, PROFILE_TTL_MS } from './probe.js';

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };

let agent: A2aTestPeer | undefined;
afterEach(async () => {
  await agent?.close();
  agent = undefined;
});

describe('PeerDirectory', () => {
  it("remembers a peer's dialect for PROFILE_TTL_MS, then reads its card again", async () => {
    agent = await startSdkAgent();
    let now = 1_000_000;
    const directory = new PeerDirectory(quiet, PROFILE_TTL_MS, () => now);
    const call = () => openOutboundCall({ name: 'p', url: agent!.baseUrl, timeoutMs: 5000 }, { sessionId: '' }, 5);

    expect((await directory.resolve(call())).dialect).toBe(Dialect.DIALECT_V1_0);
    const fetched = agent.requests.length;
    now += PROFILE_TTL_MS - 1;
    await directory.resolve(call());
    expect(agent.requests.length).toBe(fetched);

    now += 2;
    await directory.resolve(call());
    expect(agent.requests.length).toBe(fetched + 1);

    directory.forget(agent.baseUrl);
    await directory.resolve(call());
    expect(agent.requests.length).toBe(fetched + 2);
  });
});
