import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * Whether a push-notification url (A2A) may be called: a caller of this agent names
 * it, so it must not turn the agent into a way into its own network (SSRF). http(s) only, no
 * user or password in it, and every address its host resolves to outside the loopback,
 * private, link-local, shared, multicast and reserved ranges — unless the configuration allows
 * private networks (`a2a_push.allow_private_networks`, for receivers on the same network, and
 * tests). Checked when the config is set and again before each delivery (a name may resolve
 * elsewhere later).
 */

const PRIVATE = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv6');
}

/** Whether an IP address is one a push notification must not reach by default. */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return PRIVATE.check(mapped[1]!, 'ipv4');
  const family = isIP(address);
  if (family === 0) return true;
  return PRIVATE.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

/** Why `value` is not a url a push notification may go to; undefined when it is one. */
export async function pushUrlProblem(value: string, allowPrivateNetworks: boolean, resolve = lookup): Promise<string | undefined> {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'not a url';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return `the scheme must be http or https, not ${url.protocol.replace(/:$/, '')}`;
  if (url.username !== '' || url.password !== '') return 'a user or password in the url is not allowed (use the token)';
  if (allowPrivateNetworks) return undefined;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : (await resolve(host, { all: true, verbatim: true })).map((entry) => entry.address);
  } catch {
    return `its host ${url.hostname} does not resolve`;
  }
  const inside = addresses.find(isPrivateAddress);
  if (inside !== undefined)
    return `its host ${url.hostname} is (or resolves to) ${inside}, an address on a private, loopback or reserved network (a2a_push.allow_private_networks allows it)`;
  return undefined;
}
