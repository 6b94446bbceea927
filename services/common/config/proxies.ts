import { isIP } from 'node:net';

/** Why an entry of `server.trusted_proxies` is neither an IP address nor a CIDR range; undefined when it is one. */
export function proxyEntryProblem(entry: string): string | undefined {
  const [address, bits, extra] = entry.split('/');
  const family = isIP(address ?? '');
  if (family === 0 || extra !== undefined) return `${JSON.stringify(entry)} is not an IP address or a CIDR range (e.g. 10.0.0.0/8)`;
  if (bits === undefined) return undefined;
  if (!/^\d{1,3}$/.test(bits) || Number(bits) > (family === 4 ? 32 : 128)) return `${JSON.stringify(entry)} has a bad prefix length`;
  return undefined;
}
