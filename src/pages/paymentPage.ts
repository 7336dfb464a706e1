import { findMethod, type MethodCode } from '../domain/payments/methods';
import { FINAL_STATUSES, PAYMENT_EVENT_TYPES } from '../domain/payments/paymentStates';
import { esc, formatAoa, layout, safeWebUrl } from './html';
import { MOBILE_PATTERN } from '../../generated/requestLimits';

/** What the payment page of a link or a checkout session shows. */
export interface PaymentPageModel {
  kind: 'link' | 'checkout';
  /** Link code or session id: names the page's saved payment in sessionStorage. */
  key: string;
  merchantName: string;
  amount: number;
  description: string | null;
  methods: MethodCode[];
  /** Same-origin JSON route that creates the payment. */
  payUrl: string;
  successUrl?: string | null;
  cancelUrl?: string | null;
  expiresAt?: string | null;
}

/** The contract's mobile pattern as an HTML `pattern` attribute, which is anchored already. */
const MOBILE_INPUT_PATTERN = MOBILE_PATTERN.source.replace(/^\^|\$$/g, '');

/** Hints under the mobile field, in the sandbox's own terms. */
const MOBILE_HINT = '9 digits starting with 9, e.g. 923000000. You confirm the payment in the Multicaixa Express app.';

/**
 * The payment page. It works as a form; pay.js takes over the submit, calls the JSON route, and then
 * follows the payment on the public event stream, writing its status into the `role="status"` region.
 * Data for the script travels in data-* attributes (escaped), never in inline script.
 */
export function renderPaymentPage(m: PaymentPageModel): string {
  const amount = formatAoa(m.amount);
  const successUrl = safeWebUrl(m.successUrl);
  const cancelUrl = safeWebUrl(m.cancelUrl);
  const hasExpress = m.methods.includes('multicaixa_express');
  const radios = m.methods
    .map((code, i) => {
      const label = findMethod(code)?.display_name ?? code;
      return `<label class="choice"><input type="radio" name="payment_method" value="${esc(code)}"${i === 0 ? ' checked' : ''}> <span>${esc(label)}</span></label>`;
    })
    .join('\n      ');
  const data = [
    `data-kind="${m.kind}"`,
    `data-key="${esc(m.key)}"`,
    `data-pay-url="${esc(m.payUrl)}"`,
    // The statuses the stream closes on, from the state table, so that pay.js keeps no copy of them.
    `data-final-statuses="${FINAL_STATUSES.join(' ')}"`,
    `data-stream-events="${PAYMENT_EVENT_TYPES.join(' ')}"`,
    successUrl ? `data-success-url="${esc(successUrl)}"` : '',
    cancelUrl ? `data-cancel-url="${esc(cancelUrl)}"` : '',
  ]
    .filter(Boolean)
    .join(' ');

  const body = `<header class="head">
  <p class="merchant">${m.kind === 'checkout' ? 'Checkout' : 'Payment request'} · <span>${esc(m.merchantName)}</span></p>
  <h1 class="amount" id="amount">${esc(amount)}</h1>
  ${m.description ? `<p class="description" id="description">${esc(m.description)}</p>` : ''}
  ${m.expiresAt ? `<p class="expires">Pay before <time datetime="${esc(m.expiresAt)}">${esc(formatTime(m.expiresAt))}</time></p>` : ''}
</header>
<form id="pay-form" class="pay-form" method="post" action="#" novalidate ${data}>
  <fieldset class="methods">
    <legend>Payment method</legend>
    <div class="choices">
      ${radios}
    </div>
  </fieldset>
  ${hasExpress ? `<div class="field" id="mobile-field">
    <label for="mobile">Mobile number</label>
    <input id="mobile" name="mobile" type="tel" inputmode="numeric" autocomplete="tel-national" pattern="${esc(MOBILE_INPUT_PATTERN)}" maxlength="9" placeholder="923000000" aria-describedby="mobile-hint mobile-error">
    <p class="hint" id="mobile-hint">${esc(MOBILE_HINT)}</p>
    <p class="field-error" id="mobile-error" hidden></p>
  </div>` : ''}
  <p class="form-error" id="form-error" role="alert" hidden></p>
  <button type="submit" id="pay-button" class="pay-button">Pay</button>
</form>
<div class="status" id="status" role="status" aria-live="polite" aria-atomic="true"></div>
<section class="reference" id="reference" hidden aria-labelledby="reference-title">
  <h2 id="reference-title">Pay this reference at an ATM or in online banking</h2>
  <dl>
    <div><dt id="entity-label">Entity</dt><dd id="reference-entity" data-testid="reference-entity" aria-labelledby="entity-label"></dd></div>
    <div><dt id="number-label">Reference</dt><dd id="reference-number" data-testid="reference-number" aria-labelledby="number-label"></dd></div>
    <div><dt>Amount</dt><dd>${esc(amount)}</dd></div>
    <div><dt>Valid until</dt><dd id="reference-expires"></dd></div>
  </dl>
</section>
<nav class="links" aria-label="Leave this page">
  ${successUrl ? `<a id="success-link" class="button-link" href="${esc(successUrl)}" hidden>Continue to the shop</a>` : ''}
  ${cancelUrl ? `<a id="cancel-link" href="${esc(cancelUrl)}">Cancel and return to the shop</a>` : ''}
</nav>`;
  return layout({ title: `Pay ${amount}${m.description ? ` · ${m.description}` : ''}`, body, script: true });
}

/** A page that only explains (not found, inactive, expired, already paid), with optional ways out. */
export function renderMessagePage(opts: { title: string; message: string; links?: Array<{ href: string | null | undefined; text: string }> }): string {
  const links = (opts.links ?? [])
    .map((l) => ({ href: safeWebUrl(l.href), text: l.text }))
    .filter((l): l is { href: string; text: string } => l.href !== null)
    .map((l) => `<a class="button-link" href="${esc(l.href)}">${esc(l.text)}</a>`)
    .join('\n  ');
  const body = `<header class="head">
  <h1 class="message-title">${esc(opts.title)}</h1>
</header>
<p class="message">${esc(opts.message)}</p>
${links ? `<nav class="links">\n  ${links}\n</nav>` : ''}`;
  return layout({ title: opts.title, body });
}

function formatTime(isoText: string): string {
  const d = new Date(isoText);
  return Number.isNaN(d.getTime()) ? isoText : `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}
