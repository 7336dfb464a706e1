import { describe, expect, it } from 'vitest';
import { resolveMethods } from '../../src/domain/links/methodSelection';
import { esc, formatAoa, safeWebUrl } from '../../src/pages/html';
import { renderPaymentPage } from '../../src/pages/paymentPage';

describe('resolveMethods', () => {
  it('defaults to every active method and keeps the order asked for', () => {
    expect(resolveMethods(undefined, 1000)).toEqual(['multicaixa_express', 'multicaixa_reference']);
    expect(resolveMethods(['multicaixa_reference', 'multicaixa_express'], 1000)).toEqual(['multicaixa_reference', 'multicaixa_express']);
  });

  it('checks each method against the amount, at the exact limits', () => {
    expect(resolveMethods(undefined, 100)).toHaveLength(2);
    expect(() => resolveMethods(undefined, 99)).toThrow(expect.objectContaining({ code: 'amount_out_of_range' }));
    expect(resolveMethods(['multicaixa_express'], 5_000_000)).toEqual(['multicaixa_express']);
    expect(() => resolveMethods(['multicaixa_express'], 5_000_001)).toThrow(expect.objectContaining({ code: 'amount_out_of_range' }));
    expect(resolveMethods(['multicaixa_reference'], 50_000_000)).toEqual(['multicaixa_reference']);
  });

  it('coming-soon methods are method_disabled, unknown ones invalid_request', () => {
    expect(() => resolveMethods(['afrimoney'], 1000)).toThrow(expect.objectContaining({ code: 'method_disabled' }));
    expect(() => resolveMethods(['nope'], 1000)).toThrow(expect.objectContaining({ code: 'invalid_request' }));
    expect(() => resolveMethods([], 1000)).toThrow(expect.objectContaining({ code: 'invalid_request' }));
  });
});

describe('page helpers', () => {
  it('formats AOA amounts with thousands groups', () => {
    expect(formatAoa(100)).toBe('100 AOA');
    expect(formatAoa(7500)).toBe('7 500 AOA');
    expect(formatAoa(50_000_000)).toBe('50 000 000 AOA');
  });

  it('escapes markup and keeps only http(s) URLs', () => {
    expect(esc(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
    expect(safeWebUrl('javascript:alert(1)')).toBeNull();
    expect(safeWebUrl('data:text/html,hi')).toBeNull();
    expect(safeWebUrl('https://shop.example/a?b=1')).toBe('https://shop.example/a?b=1');
  });

  it('renders no inline script or style, and no unescaped merchant text', () => {
    const html = renderPaymentPage({
      kind: 'checkout',
      key: 'cs_x',
      merchantName: '"><script>alert(1)</script>',
      amount: 1000,
      description: '<img src=x onerror=alert(1)>',
      methods: ['multicaixa_express'],
      payUrl: '/v1/public/checkout/sessions/cs_x/payments',
      successUrl: 'javascript:alert(1)',
      cancelUrl: 'https://shop.example/cart',
    });
    expect(html).not.toMatch(/<script>(?!<\/script>)/);
    expect(html).not.toContain('<img');
    expect(html).not.toMatch(/<[^>]*\sstyle=/);
    expect(html).not.toMatch(/<[^>]*\son[a-z]+=/);
    expect(html).not.toContain('javascript:');
    expect(html.match(/<script/g)).toHaveLength(1);
    expect(html).toContain('<script src="/pay-assets/pay.js" defer></script>');
  });
});
