import { describe, expect, it } from 'vitest';
import type { Logger } from '../../services/common/log.js';
import { checkBinding, InsecureBindingError } from './binding.js';

/** The bind rule: no non-loopback host without auth, unless insecure, and then loudly. */

function recorder() {
  const warnings: string[] = [];
  const log: Logger = { debug() {}, info() {}, warn: (msg) => void warnings.push(msg), error() {}, child: () => log };
  return { log, warnings };
}

const tokens = { tokens: [{ name: 'alice', token_sha256: 'a'.repeat(64), roles: ['chat' as const] }] };

describe('checkBinding', () => {
  it('refuses a host beyond loopback without auth, saying what to do', () => {
    for (const host of ['0.0.0.0', '::', '192.168.1.5', 'agent.internal']) {
      expect(() => checkBinding({ host, port: 8080, insecure: false }, recorder().log)).toThrow(InsecureBindingError);
    }
    expect(() => checkBinding({ host: '0.0.0.0', port: 8080, insecure: false }, recorder().log)).toThrow(
      /refusing to listen on 0.0.0.0 without authentication.*insecure: true.*--insecure/,
    );
  });

  it('starts beyond loopback with insecure, warning loudly; with auth, silently', () => {
    const insecure = recorder();
    checkBinding({ host: '0.0.0.0', port: 8080, insecure: true }, insecure.log);
    expect(insecure.warnings).toEqual([expect.stringMatching(/^INSECURE: listening beyond loopback without authentication/)]);
    const secured = recorder();
    checkBinding({ host: '0.0.0.0', port: 8080, insecure: false, auth: tokens }, secured.log);
    expect(secured.warnings).toEqual([]);
  });

  it('on loopback without auth, one line says nobody is authenticated', () => {
    for (const host of ['127.0.0.1', 'localhost', '::1']) {
      const { log, warnings } = recorder();
      checkBinding({ host, port: 8080, insecure: false }, log);
      expect(warnings).toEqual([expect.stringMatching(/^authentication is off: nobody is asked who they are/)]);
    }
  });
});
