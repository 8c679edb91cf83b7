import { lookup as dnsLookup, LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Resolves a host name to every address, like dns.lookup with `all: true` (a seam for tests). */
export type HostResolver = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolver: HostResolver = (hostname) =>
  new Promise((resolve, reject) => dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))));

export class UrlRefused extends Error {}

/**
 * The outbound address guard (webhook deliveries, providers' calls): only public unicast addresses
 * may be reached when it is on: loopback, private
 * (10/8, 172.16/12, 192.168/16, fc00::/7), link-local (169.254/16 with the cloud metadata
 * address, fe80::/10), carrier-grade NAT, multicast, reserved, and IPv6 forms that embed IPv4
 * (mapped, compatible, NAT64, 6to4, Teredo) are all refused; IPv6 must be global unicast. ipaddr.js names the ranges, so the list is
 * theirs, not a hand-kept set of masks.
 */
export function isPublicAddress(address: string): boolean {
  // net.isIP first: ipaddr.js also accepts legacy forms ("8.8.8", "134744072") no resolver answers with.
  if (!isIP(address) || !ipaddr.isValid(address)) return false;
  const parsed = ipaddr.process(address);
  if (parsed.range() !== 'unicast') return false;
  // ipaddr.js calls what no range names "unicast", IPv4-compatible IPv6 (::/96, `[::127.0.0.1]`)
  // among them; for IPv6, only global unicast (2000::/3) is public.
  return parsed.kind() === 'ipv4' || (parsed as ipaddr.IPv6).match(GLOBAL_UNICAST);
}

const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3') as [ipaddr.IPv6, number];

const bareHost = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

/**
 * Resolves the URL's host and refuses it unless every address is public. Used when a
 * subscription is created or changed, and again right before each delivery connects (through
 * guardedLookup), so a name that later resolves to a private address is refused then too.
 */
export async function checkPublicUrl(text: string, resolve: HostResolver): Promise<void> {
  const host = bareHost(new URL(text));
  const addresses = isIP(host) ? [host] : (await resolveOrRefuse(host, resolve)).map((entry) => entry.address);
  const blocked = addresses.find((address) => !isPublicAddress(address));
  if (blocked !== undefined) {
    throw new UrlRefused(`url resolves to ${blocked}, a loopback, private, link-local or otherwise non-public address`);
  }
}

async function resolveOrRefuse(host: string, resolve: HostResolver): Promise<LookupAddress[]> {
  try {
    const addresses = await resolve(host);
    if (addresses.length === 0) throw new Error('no addresses');
    return addresses;
  } catch {
    throw new UrlRefused(`url host ${host} does not resolve`);
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http.request that connects only to addresses it has checked: the check and the
 * connection use the same answer, so a DNS record that changes between the two (rebinding) gains
 * nothing. With `allowPrivate`, it resolves without checking.
 */
export function guardedLookup(resolve: HostResolver, allowPrivate: boolean) {
  return (hostname: string, options: { all?: boolean }, callback: LookupCallback): void => {
    const refuse = (error: Error) => callback(Object.assign(error, { code: 'EREFUSED_URL' }), '');
    // then(ok, fail) rather than then().catch(): the callback must run once, even if it throws.
    resolveOrRefuse(hostname, resolve).then((addresses) => {
      const blocked = allowPrivate ? undefined : addresses.find((entry) => !isPublicAddress(entry.address));
      if (blocked) refuse(new UrlRefused(`url resolves to ${blocked.address}, a non-public address`));
      else if (options.all) callback(null, addresses);
      else callback(null, addresses[0].address, addresses[0].family);
    }, refuse);
  };
}
