/**
 * The SSRF guard of outgoing callbacks. A callback URL comes from whoever may create a job, so
 * opflow must not become a way to reach what sits behind it: https only (plain http only to hosts
 * on an explicit allow-list, for tests and development), no credentials in the URL, and the host
 * resolved once, every address it resolves to vetted, and the connection pinned to the vetted
 * address (the request's `lookup` answers with it, so no second lookup can be rebound).
 *
 * Refused: loopback, private (RFC 1918, unique local), link-local, CGNAT, multicast, unspecified,
 * broadcast, documentation and benchmark ranges, cloud metadata addresses (169.254.169.254,
 * fd00:ec2::254), IPv6 forms that embed one of those IPv4 addresses (IPv4-mapped, IPv4-compatible,
 * NAT64 64:ff9b::/96 of RFC 6052, 6to4, ISATAP interface ids), and IPv6 ranges that only tunnel or
 * translate to an IPv4 address opflow cannot see or are not destinations at all: SIIT's
 * IPv4-translated ::ffff:0:0:0/96 (RFC 6145), the rest of 64:ff9b::/32 including the local-use
 * 64:ff9b:1::/48 (RFC 8215), Teredo 2001::/32 and the IETF protocol block 2001::/23 around it,
 * documentation 3fff::/20 and SRv6 5f00::/16.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/** A callback URL opflow will not call, with the reason (no part of the URL beyond its host). */
export class CallbackUrlRefused extends Error {
  override readonly name = 'CallbackUrlRefused';
}

const blocked = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // CGNAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata 169.254.169.254
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  blocked.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['::ffff:0:0:0', 96], // SIIT IPv4-translated (RFC 6145): reaches an IPv4 host through a translator
  ['64:ff9b::', 32], // NAT64 beyond the well-known /96 (checked by its embedded IPv4 below), local-use /48
  ['100::', 64], // discard
  ['2001::', 23], // IETF protocol assignments: Teredo 2001::/32 (a tunnel to an IPv4 host), ORCHID, benchmarking
  ['3fff::', 20], // documentation (RFC 9637)
  ['5f00::', 16], // SRv6 segment identifiers (RFC 9602)
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local, fd00:ec2::254 (EC2 metadata over IPv6)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6');
}

/** The 8 groups of an IPv6 address as numbers (handles `::` and a trailing dotted IPv4). */
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase().replace(/%.*$/, '');
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, -dotted[1]!.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? (text.split('::') as [string, string]) : [text, undefined];
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = 8 - headGroups.length - tailGroups.length;
  const groups = [...headGroups, ...Array(tail === undefined ? 0 : missing).fill('0'), ...tailGroups];
  return groups.map((group) => Number.parseInt(group, 16));
}

function ipv4Of(high: number, low: number): string {
  return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
}

/** The IPv4 address an IPv6 address carries (mapped, compatible, NAT64, 6to4), if any. */
export function embeddedIpv4(address: string): string | undefined {
  const g = ipv6Groups(address);
  if (g.length !== 8 || g.some((part) => !Number.isInteger(part))) return undefined;
  const zeros = (from: number, to: number) => g.slice(from, to).every((part) => part === 0);
  // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible, deprecated but still routed by some stacks)
  if (zeros(0, 5) && (g[5] === 0xffff || g[5] === 0) && !(g[5] === 0 && g[6] === 0))
    return ipv4Of(g[6]!, g[7]!);
  // ::ffff:0:a.b.c.d (SIIT IPv4-translated, RFC 6145)
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return ipv4Of(g[6]!, g[7]!);
  // 64:ff9b::a.b.c.d (NAT64 well-known prefix, RFC 6052) and 64:ff9b:1::/48 (local-use NAT64)
  if (g[0] === 0x64 && g[1] === 0xff9b) return ipv4Of(g[6]!, g[7]!);
  // 2002:AABB:CCDD::/48 (6to4)
  if (g[0] === 0x2002) return ipv4Of(g[1]!, g[2]!);
  // 2001:0:SSSS:SSSS:flags:port:CCCC:CCCC (Teredo): the client's IPv4 address, each bit inverted
  if (g[0] === 0x2001 && g[1] === 0) return ipv4Of(g[6]! ^ 0xffff, g[7]! ^ 0xffff);
  // <prefix>:0:5efe:a.b.c.d and <prefix>:200:5efe:a.b.c.d (ISATAP interface ids, RFC 5214)
  if ((g[4] === 0 || g[4] === 0x200) && g[5] === 0x5efe) return ipv4Of(g[6]!, g[7]!);
  return undefined;
}

/** The well-known NAT64 prefix 64:ff9b::/96 exactly (its IPv4 decides; the rest of 64:ff9b::/32 is refused). */
function isWellKnownNat64(address: string): boolean {
  const g = ipv6Groups(address);
  return g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((part) => part === 0);
}

/** True for an address a callback must never reach. */
export function isForbiddenAddress(address: string): boolean {
  const family = isIP(address.replace(/%.*$/, ''));
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family === 6) {
    const bare = address.replace(/%.*$/, '');
    const inner = embeddedIpv4(bare);
    if (inner !== undefined && blocked.check(inner, 'ipv4')) return true;
    // The mapped/compatible forms, and the well-known NAT64 prefix, are as public as their IPv4 address.
    if (
      inner !== undefined &&
      ipv6Groups(bare)
        .slice(0, 5)
        .every((part) => part === 0)
    )
      return false;
    if (inner !== undefined && isWellKnownNat64(bare)) return false;
    return blocked.check(bare, 'ipv6');
  }
  return true; // not an address at all
}

export interface CallbackUrlPolicy {
  /**
   * Hosts (`name` or `name:port`, lower case) that may be called over plain http and at any
   * address: for tests and development only (OPFLOW_CALLBACK_ALLOW_HOSTS). Default: none.
   */
  allowHosts?: readonly string[] | undefined;
}

/** Reads OPFLOW_CALLBACK_ALLOW_HOSTS (comma-separated `host` or `host:port`). */
export function callbackPolicyFromEnv(env: Readonly<Record<string, string | undefined>>): CallbackUrlPolicy {
  const raw = env.OPFLOW_CALLBACK_ALLOW_HOSTS ?? '';
  return {
    allowHosts: raw
      .split(',')
      .map((entry) => entry.trim().toLowerCase())
      .filter(Boolean),
  };
}

function isAllowListed(url: URL, policy: CallbackUrlPolicy): boolean {
  const hosts = policy.allowHosts ?? [];
  const name = url.hostname.toLowerCase();
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  return hosts.includes(name) || hosts.includes(`${name}:${port}`);
}

/** The host part of a URL for messages: never its credentials, path or query. */
export function describeHost(url: URL): string {
  return url.host;
}

/**
 * What can be checked without the network: a URL, https (or an allow-listed http host), no
 * credentials, at most 2048 characters, and a literal address that is not forbidden. Throws
 * CallbackUrlRefused; returns the parsed URL.
 */
export function checkCallbackUrl(raw: string, policy: CallbackUrlPolicy = {}): URL {
  if (raw.length > 2048) throw new CallbackUrlRefused('callbackUrl: must be at most 2048 characters');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new CallbackUrlRefused('callbackUrl: is not a URL');
  }
  const allowListed = isAllowListed(url, policy);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && allowListed)) {
    throw new CallbackUrlRefused(
      `callbackUrl: must be an https URL (${url.protocol.replace(/:$/, '')} is refused; plain http only to hosts in OPFLOW_CALLBACK_ALLOW_HOSTS)`,
    );
  }
  if (url.username !== '' || url.password !== '') {
    throw new CallbackUrlRefused(
      'callbackUrl: must not carry credentials (the signature authenticates opflow to the receiver)',
    );
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!allowListed && isIP(host) !== 0 && isForbiddenAddress(host)) {
    throw new CallbackUrlRefused(
      `callbackUrl: ${describeHost(url)} is a loopback, private, link-local, multicast or metadata address`,
    );
  }
  return url;
}

export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;

const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** A URL checked and its host resolved once, with the one address to connect to. */
export interface VettedTarget {
  url: URL;
  address: string;
  family: 4 | 6;
}

/**
 * Checks the URL, resolves its host once and vets every address it resolves to (one forbidden
 * address refuses the URL: a name must not mix public and internal addresses). Allow-listed hosts
 * skip the address check.
 */
export async function vetCallbackTarget(
  raw: string,
  policy: CallbackUrlPolicy = {},
  resolve: Resolver = systemResolver,
): Promise<VettedTarget> {
  const url = checkCallbackUrl(raw, policy);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const literal = isIP(host);
  if (literal !== 0) return { url, address: host, family: literal as 4 | 6 };
  let addresses: { address: string; family: number }[];
  try {
    addresses = await resolve(host);
  } catch (error) {
    throw new CallbackUrlRefused(
      `callbackUrl: ${describeHost(url)} does not resolve (${(error as { code?: string }).code ?? 'lookup failed'})`,
    );
  }
  if (addresses.length === 0)
    throw new CallbackUrlRefused(`callbackUrl: ${describeHost(url)} does not resolve`);
  if (!isAllowListed(url, policy)) {
    const bad = addresses.find((entry) => isForbiddenAddress(entry.address));
    if (bad) {
      throw new CallbackUrlRefused(
        `callbackUrl: ${describeHost(url)} resolves to ${bad.address}, a loopback, private, link-local, multicast or metadata address`,
      );
    }
  }
  const first = addresses[0]!;
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
}
