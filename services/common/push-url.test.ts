import { describe, expect, it } from 'vitest';
import { isPrivateAddress, pushUrlProblem } from './push-url.js';

describe('isPrivateAddress', () => {
  it.each([
    ['127.0.0.1', true],
    ['10.1.2.3', true],
    ['172.20.0.1', true],
    ['192.168.1.1', true],
    ['169.254.169.254', true],
    ['100.64.0.1', true],
    ['0.0.0.0', true],
    ['::1', true],
    ['fd00::1', true],
    ['fe80::1', true],
    ['::ffff:127.0.0.1', true],
    ['8.8.8.8', false],
    ['2606:4700:4700::1111', false],
    ['::ffff:8.8.8.8', false],
    ['not-an-address', true],
  ])('%s → %s', (address, expected) => {
    expect(isPrivateAddress(address)).toBe(expected);
  });
});

describe('pushUrlProblem', () => {
  const resolvesTo = (...addresses: string[]) =>
    (async () => addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))) as never;

  it('allows a public http(s) url', async () => {
    expect(await pushUrlProblem('https://hooks.example.com/a2a', false, resolvesTo('93.184.216.34'))).toBeUndefined();
  });

  it('refuses other schemes, credentials in the url, and names that resolve to a private address (any of them)', async () => {
    expect(await pushUrlProblem('file:///etc/passwd', false)).toContain('http or https');
    expect(await pushUrlProblem('https://user:pw@hooks.example.com/', false)).toContain('user or password');
    expect(await pushUrlProblem('not a url', false)).toBe('not a url');
    expect(await pushUrlProblem('https://rebind.example.com/', false, resolvesTo('93.184.216.34', '10.0.0.5'))).toContain('10.0.0.5');
    expect(await pushUrlProblem('http://[::1]:8080/', false)).toContain('::1');
  });

  it('allows private networks when the configuration says so', async () => {
    expect(await pushUrlProblem('http://127.0.0.1:9/hook', true)).toBeUndefined();
  });
});
