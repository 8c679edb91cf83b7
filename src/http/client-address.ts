import type { Request } from 'express';
import ipaddr from 'ipaddr.js';

/**
 * Who a per-address limit counts: the client's address as express sees it (looking through the
 * proxies TRUST_PROXY names). An IPv6 client is counted by its /64, the smallest block a network
 * hands to one subscriber: a client holds a whole /64 and could otherwise take a fresh address,
 * and a fresh allowance, for every request. IPv4-mapped IPv6 is the IPv4 address it carries.
 */
export function clientAddress(req: Request): string {
  const address = req.ip ?? req.socket.remoteAddress;
  if (!address || !ipaddr.isValid(address)) return address ?? 'unknown';
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const prefix = (parsed as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16));
  return `${prefix.join(':')}::/64`;
}
