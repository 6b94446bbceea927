import { BlockList, isIP } from 'node:net';
import { A2A_PATH } from './card.js';

/**
 * The absolute URL the agent card gives for `/a2a`: where callers reach this agent from
 * outside. `server.public_url` when it is set; else what a trusted proxy says the caller used
 * (`X-Forwarded-Proto`, `X-Forwarded-Host`), when the request came from one of
 * `server.trusted_proxies`; else the request's own protocol and Host. Forwarded headers from
 * anyone else are ignored: they are the caller's to invent. Pure but for the address parse.
 */

export interface CardUrlSettings {
  /** `server.public_url`. */
  publicUrl?: string;
  /** `server.trusted_proxies`: addresses and CIDR ranges. */
  trustedProxies: readonly string[];
}

export interface RequestOrigin {
  protocol: string;
  /** The Host header (or the local address, when there is none). */
  host: string;
  /** The peer's address (`::ffff:` IPv4-mapped addresses are read as IPv4). */
  remoteAddress: string | undefined;
  forwardedProto: string | undefined;
  forwardedHost: string | undefined;
}

const HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

function blockList(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', bits] = entry.split('/');
    const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(bits), type);
  }
  return list;
}

/** The last value of a header a proxy may have appended to: the one the trusted proxy itself wrote. */
function lastValue(header: string | undefined): string | undefined {
  const value = header?.split(',').at(-1)?.trim();
  return value === '' ? undefined : value;
}

export function cardUrlResolver(settings: CardUrlSettings): (request: RequestOrigin) => string {
  if (settings.publicUrl !== undefined) {
    // A public url with a path (a proxy that serves the agent under a prefix) keeps it.
    const base = settings.publicUrl.replace(/\/+$/, '');
    return () => `${base}${A2A_PATH}`;
  }
  const trusted = blockList(settings.trustedProxies);
  return (request) => {
    let { protocol, host } = request;
    const peer = request.remoteAddress?.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '');
    const family = peer === undefined ? 0 : isIP(peer);
    if (family !== 0 && trusted.check(peer!, family === 6 ? 'ipv6' : 'ipv4')) {
      const proto = lastValue(request.forwardedProto)?.toLowerCase();
      const forwardedHost = lastValue(request.forwardedHost);
      if (proto === 'http' || proto === 'https') protocol = proto;
      if (forwardedHost !== undefined && HOST.test(forwardedHost)) host = forwardedHost;
    }
    return `${protocol}://${host}${A2A_PATH}`;
  };
}
