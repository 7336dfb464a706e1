import { describe, expect, it } from 'vitest';
import { classifyAddress, isForbiddenAddress } from '../../../src/domain/webhooks/addressPolicy';
import { assertAcceptableWebhookUrl, resolveWebhookTarget, TargetRefusedError } from '../../../src/domain/webhooks/targetResolver';

describe('classifyAddress', () => {
  const cases: Array<[string, string]> = [
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.15.255.255', 'public'],
    ['172.32.0.0', 'public'],
    ['192.168.1.1', 'private'],
    ['192.169.0.1', 'public'],
    ['169.254.169.254', 'link_local'],
    ['100.64.0.1', 'shared'],
    ['100.127.255.255', 'shared'],
    ['100.128.0.0', 'public'],
    ['100.63.255.255', 'public'],
    ['224.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['8.8.8.8', 'public'],
    ['1.1.1.1', 'public'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['[::1]', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.1.2.3', 'private'],
    ['::ffff:169.254.169.254', 'link_local'],
    ['::ffff:8.8.8.8', 'public'],
    ['0:0:0:0:0:ffff:192.168.0.1', 'private'],
    ['::127.0.0.1', 'loopback'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['64:ff9b::8.8.8.8', 'public'],
    // IPv4-translated (::ffff:0:0/96), local-use NAT64 (64:ff9b:1::/48) and Teredo (2001::/32): private
    // whatever they embed.
    ['::ffff:0:127.0.0.1', 'private'],
    ['::ffff:0:8.8.8.8', 'private'],
    ['0:0:0:0:ffff:0:a00:1', 'private'],
    ['64:ff9b:1::10.0.0.1', 'private'],
    ['64:ff9b:1:ffff::1', 'private'],
    ['64:ff9b:1::8.8.8.8', 'private'],
    ['64:ff9b:2::1', 'public'],
    ['2001::1', 'private'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'private'],
    ['2001:1::1', 'public'],
    ['2002:7f00:1::', 'loopback'],
    ['fc00::1', 'unique_local'],
    ['fd12:3456:789a::1', 'unique_local'],
    ['fe80::1', 'link_local'],
    ['fe80::1%eth0', 'link_local'],
    ['febf::1', 'link_local'],
    ['fec0::1', 'reserved'],
    ['ff02::1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['2001:4860:4860::8888', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['not-an-ip', 'invalid'],
    ['1.2.3', 'invalid'],
    ['256.1.1.1', 'invalid'],
    ['1::2::3', 'invalid'],
  ];
  it.each(cases)('%s is %s', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
  });

  it('forbids everything that is not a public unicast address', () => {
    expect(isForbiddenAddress('8.8.8.8')).toBe(false);
    expect(isForbiddenAddress('2001:4860:4860::8888')).toBe(false);
    for (const a of [
      '127.0.0.1', '::1', '::', '0.0.0.0', '10.0.0.1', '::ffff:192.168.0.1', 'fd00::1', 'fe80::1', '100.64.1.1', 'garbage',
      '::ffff:0:169.254.169.254', '64:ff9b:1::a9fe:a9fe', '2001:0:a9fe:a9fe::1',
    ]) {
      expect(isForbiddenAddress(a)).toBe(true);
    }
  });
});

describe('webhook target checks', () => {
  it('refuses loopback and private literals, also in the forms URL parsing normalises', async () => {
    for (const raw of [
      'http://127.0.0.1:8080/hook',
      'http://[::1]/hook',
      'http://[::ffff:127.0.0.1]/hook',
      'http://0.0.0.0/hook',
      'http://[::]/hook',
      'http://2130706433/hook', // decimal 127.0.0.1
      'http://0x7f.1/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://10.0.0.5/hook',
      'https://[fd00::5]/hook',
    ]) {
      await expect(assertAcceptableWebhookUrl(raw, { allowPrivateNetworks: false }), raw).rejects.toMatchObject({ code: 'invalid_request' });
    }
  });

  it('refuses names that resolve to loopback (checked after DNS)', async () => {
    await expect(assertAcceptableWebhookUrl('http://localhost:9/hook', { allowPrivateNetworks: false })).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(resolveWebhookTarget(new URL('http://localhost:9/'), { allowPrivateNetworks: false })).rejects.toBeInstanceOf(TargetRefusedError);
  });

  it('accepts public literals, and anything when private networks are allowed', async () => {
    await expect(assertAcceptableWebhookUrl('https://8.8.8.8/hook', { allowPrivateNetworks: false })).resolves.toBeInstanceOf(URL);
    await expect(assertAcceptableWebhookUrl('http://127.0.0.1:1/hook', { allowPrivateNetworks: true })).resolves.toBeInstanceOf(URL);
    const pinned = await resolveWebhookTarget(new URL('http://localhost:9/'), { allowPrivateNetworks: true });
    expect(['127.0.0.1', '::1']).toContain(pinned.address);
  });

  it('refuses URLs that are not absolute http(s)', async () => {
    for (const raw of ['ftp://example.com/x', '/relative', 'example.com/hook', 'javascript:alert(1)', 'http://8.8.8.8/#frag']) {
      await expect(assertAcceptableWebhookUrl(raw, { allowPrivateNetworks: true }), raw).rejects.toMatchObject({ code: 'invalid_request' });
    }
  });
});
