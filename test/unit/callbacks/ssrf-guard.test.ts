// The SSRF guard of outgoing callbacks: which URLs and addresses are refused, without the network
// (names are resolved by a scripted resolver, except `localhost`, resolved by the system).
import { describe, expect, it } from 'vitest';
import {
  CallbackUrlRefused,
  checkCallbackUrl,
  embeddedIpv4,
  isForbiddenAddress,
  vetCallbackTarget,
} from '../../../shared/callbacks/ssrf-guard';

describe('isForbiddenAddress', () => {
  it.each([
    '127.0.0.1',
    '127.255.0.9',
    '10.0.0.1',
    '172.16.5.4',
    '192.168.1.1',
    '169.254.169.254',
    '169.254.0.1',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    'fd00:ec2::254',
    'fc00::1',
    'fe80::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:169.254.169.254',
    '::ffff:10.0.0.1',
    '64:ff9b::a9fe:a9fe',
    '2002:7f00:1::',
    '::127.0.0.1',
    'not an address',
  ])('refuses %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  it.each(['93.184.216.34', '8.8.8.8', '2606:4700::1111', '::ffff:8.8.8.8', '172.32.0.1', '100.128.0.1'])(
    'allows the public address %s',
    (address) => {
      expect(isForbiddenAddress(address)).toBe(false);
    },
  );

  // Every IPv6 form that carries or reaches an IPv4 address (RFC 4291, 6052, 6145, 3056, 4380, 5214,
  // 8215), and the ranges that are no destination: refused when the IPv4 address is, or always.
  it.each([
    ['SIIT IPv4-translated, loopback', '::ffff:0:7f00:1'],
    ['SIIT IPv4-translated, dotted', '::ffff:0:127.0.0.1'],
    ['SIIT IPv4-translated, metadata', '::ffff:0:a9fe:a9fe'],
    ['SIIT IPv4-translated, even public (a translator reaches it)', '::ffff:0:808:808'],
    ['Teredo, a client at 192.0.2.45 (RFC 4380 example)', '2001:0:4136:e378:8000:63bf:3fff:fdd2'],
    ['Teredo, a client at 127.0.0.1', '2001:0:4136:e378:8000:63bf:80ff:fffe'],
    ['Teredo, even a public client (a tunnel)', '2001:0:4136:e378:8000:63bf:f7f7:f7f7'],
    ['ORCHIDv2 (2001:20::/28)', '2001:20::1'],
    ['benchmarking (2001:2::/48)', '2001:2::1'],
    ['NAT64 well-known, loopback', '64:ff9b::7f00:1'],
    ['NAT64 well-known, dotted private', '64:ff9b::10.1.2.3'],
    ['NAT64 well-known, metadata', '64:ff9b::169.254.169.254'],
    ['NAT64 local-use 64:ff9b:1::/48 (RFC 8215)', '64:ff9b:1::808:808'],
    ['NAT64 outside the /96', '64:ff9b:0:0:1::808:808'],
    ['6to4 of a private address', '2002:0a00:0001::1'],
    ['6to4 of the metadata address', '2002:a9fe:a9fe::'],
    ['ISATAP interface id of loopback', '2607:f8b0::5efe:7f00:1'],
    ['ISATAP interface id (global bit) of a private address', '2607:f8b0::200:5efe:c0a8:101'],
    ['IPv4-compatible of the metadata address', '::169.254.169.254'],
    ['IPv4-mapped with a zone', '::ffff:127.0.0.1%eth0'],
    ['documentation 3fff::/20', '3fff::1'],
    ['SRv6 5f00::/16', '5f00::1'],
    ['discard 100::/64', '100::1'],
  ])('refuses %s: %s', (_form, address) => {
    expect(isForbiddenAddress(address)).toBe(true);
    expect(() => checkCallbackUrl(`https://[${address.replace(/%.*$/, '')}]/hook`)).toThrow(
      CallbackUrlRefused,
    );
  });

  it.each([
    ['NAT64 well-known of a public address', '64:ff9b::808:808'],
    ['IPv4-mapped public', '::ffff:8.8.8.8'],
    ['6to4 of a public address', '2002:0808:0808::1'],
    ['ISATAP interface id of a public address', '2607:f8b0::200:5efe:808:808'],
    ['a public address of 2001::/16 beyond 2001::/23', '2001:4860:4860::8888'],
  ])('allows %s: %s', (_form, address) => {
    expect(isForbiddenAddress(address)).toBe(false);
  });

  it('finds the IPv4 address inside mapped, NAT64 and 6to4 forms', () => {
    expect(embeddedIpv4('::ffff:7f00:1')).toBe('127.0.0.1');
    expect(embeddedIpv4('64:ff9b::0a00:0001')).toBe('10.0.0.1');
    expect(embeddedIpv4('2002:c0a8:0101::1')).toBe('192.168.1.1');
    expect(embeddedIpv4('2606:4700::1111')).toBeUndefined();
    expect(embeddedIpv4('::ffff:0:7f00:1')).toBe('127.0.0.1');
    expect(embeddedIpv4('2001:0:4136:e378:8000:63bf:3fff:fdd2')).toBe('192.0.2.45');
    expect(embeddedIpv4('fe80::5efe:10.0.0.1')).toBe('10.0.0.1');
  });
});

describe('checkCallbackUrl (no network)', () => {
  const refused = (url: string, policy = {}) => {
    try {
      checkCallbackUrl(url, policy);
    } catch (error) {
      expect(error).toBeInstanceOf(CallbackUrlRefused);
      return (error as Error).message;
    }
    throw new Error(`${url} was accepted`);
  };

  it('takes https URLs to names and public addresses', () => {
    expect(checkCallbackUrl('https://hooks.example.com/opflow?token=x').hostname).toBe('hooks.example.com');
    expect(checkCallbackUrl('https://93.184.216.34/x').hostname).toBe('93.184.216.34');
  });

  it('refuses other schemes, plain http off the allow-list, and credentials', () => {
    expect(refused('file:///etc/passwd')).toMatch(/must be an https URL \(file is refused/);
    expect(refused('ftp://example.com/')).toMatch(/https/);
    expect(refused('http://example.com/')).toMatch(/OPFLOW_CALLBACK_ALLOW_HOSTS/);
    expect(refused('https://user:secret@example.com/')).toMatch(/credentials/);
    expect(refused('https://user:secret@example.com/')).not.toContain('secret');
    expect(refused('not a url')).toMatch(/not a URL/);
  });

  it.each([
    'https://127.0.0.1/',
    'https://10.0.0.1/',
    'https://169.254.169.254/latest/meta-data/',
    'https://[::ffff:127.0.0.1]/',
    'https://[::1]:8443/',
    'https://[fd00:ec2::254]/',
    'https://0x7f000001/',
    'https://2130706433/',
  ])('refuses the literal address of %s', (url) => {
    expect(refused(url)).toMatch(/loopback, private, link-local, multicast or metadata address/);
  });

  it('lets allow-listed hosts use http and any address', () => {
    const policy = { allowHosts: ['127.0.0.1:8080'] };
    expect(checkCallbackUrl('http://127.0.0.1:8080/hook', policy).port).toBe('8080');
    expect(refused('http://127.0.0.1:8081/hook', policy)).toMatch(/https/);
  });
});

describe('vetCallbackTarget', () => {
  it('refuses a name that resolves to loopback (the system resolver, localhost)', async () => {
    await expect(vetCallbackTarget('https://localhost/hook')).rejects.toThrow(
      /localhost resolves to (127\.0\.0\.1|::1), a loopback/,
    );
  });

  it('refuses a name any of whose addresses is internal, and pins a public one', async () => {
    const resolve = async (name: string) =>
      name === 'mixed.example'
        ? [
            { address: '93.184.216.34', family: 4 },
            { address: '10.1.2.3', family: 4 },
          ]
        : [{ address: '93.184.216.34', family: 4 }];
    await expect(vetCallbackTarget('https://mixed.example/', {}, resolve)).rejects.toThrow(/10\.1\.2\.3/);
    const vetted = await vetCallbackTarget('https://public.example/', {}, resolve);
    expect(vetted).toMatchObject({ address: '93.184.216.34', family: 4 });
  });

  it('refuses a name that does not resolve', async () => {
    const resolve = async () => {
      throw Object.assign(new Error('nope'), { code: 'ENOTFOUND' });
    };
    await expect(vetCallbackTarget('https://nowhere.example/', {}, resolve)).rejects.toThrow(/ENOTFOUND/);
  });
});
