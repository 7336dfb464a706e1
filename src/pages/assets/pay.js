/* global document, window, fetch, EventSource, sessionStorage, setTimeout, clearTimeout */
/*
 * The script of the payment-link and checkout pages. Served same-origin (the pages' CSP allows no
 * inline code and no third party). It turns the form into a call to the public JSON route, then
 * follows the payment on GET /v1/public/payments/{id}/events and writes the status into the
 * role="status" region, which screen readers announce. No framework, no build step.
 */
(function () {
  'use strict';

  var form = document.getElementById('pay-form');
  if (!form) return;

  // The events the payment's stream sends besides its snapshot: the page carries them from the state
  // table (data-stream-events), as it carries the final statuses.
  var STREAM_EVENTS = ['snapshot'].concat((form.getAttribute('data-stream-events') || '').split(' ').filter(Boolean));
  // The stream closes after these; so do we (otherwise EventSource would reconnect). The page carries
  // them from the server's state table (data-final-statuses), the one list of them.
  var FINAL = (form.getAttribute('data-final-statuses') || '').split(' ').filter(Boolean);
  // After these the customer may try again with the same page.
  var RETRYABLE = ['FAILED', 'CANCELLED', 'EXPIRED'];

  var STATUS_TEXT = {
    PENDING_multicaixa_express: 'Confirm the payment in the Multicaixa Express app on your phone.',
    PENDING_multicaixa_reference: 'Waiting for the payment of the reference below.',
    PROCESSING: 'Waiting for your confirmation in the Multicaixa Express app…',
    UNKNOWN: 'The bank has not answered yet. We are checking; please do not pay again.',
    SUCCEEDED: 'Payment confirmed. Thank you!',
    FAILED: 'The payment did not go through.',
    CANCELLED: 'The payment was cancelled.',
    EXPIRED: 'The reference expired before it was paid.',
    PARTIALLY_REFUNDED: 'Payment confirmed, and partly refunded.',
    REFUNDED: 'Payment refunded.',
  };
  var FAILURE_TEXT = {
    rejected_by_customer: 'It was declined in the Multicaixa Express app.',
    insufficient_funds: 'There were not enough funds.',
    provider_unavailable: 'The payment service is unavailable right now.',
  };
  var ERROR_TEXT = {
    invalid_phone_number: 'Enter a valid mobile number: 9 digits starting with 9, for example 923000000.',
    payment_link_inactive: 'This payment link is no longer active.',
    payment_already_processed: 'This checkout can no longer be paid.',
    rate_limit_exceeded: 'Too many attempts. Please wait a minute and try again.',
    amount_out_of_range: 'This amount cannot be paid with the chosen method.',
    method_disabled: 'This payment method is not available yet.',
  };

  var kind = form.getAttribute('data-kind');
  var payUrl = form.getAttribute('data-pay-url');
  var successUrl = form.getAttribute('data-success-url');
  var storageKey = 'gw-pay:' + kind + ':' + form.getAttribute('data-key');

  var statusEl = document.getElementById('status');
  var button = document.getElementById('pay-button');
  var mobileField = document.getElementById('mobile-field');
  var mobileInput = document.getElementById('mobile');
  var mobileError = document.getElementById('mobile-error');
  var formError = document.getElementById('form-error');
  var referenceBox = document.getElementById('reference');
  var successLink = document.getElementById('success-link');
  var cancelLink = document.getElementById('cancel-link');

  var current = null; // { id, payment_method, status }
  var source = null;
  var retryTimer = null;
  var retryDelay = 1000;

  function selectedMethod() {
    var checked = form.querySelector('input[name="payment_method"]:checked');
    return checked ? checked.value : null;
  }

  function syncMethodFields() {
    if (mobileField) mobileField.hidden = selectedMethod() !== 'multicaixa_express';
  }

  function clearErrors() {
    formError.hidden = true;
    formError.textContent = '';
    if (mobileError) {
      mobileError.hidden = true;
      mobileError.textContent = '';
    }
    if (mobileInput) mobileInput.removeAttribute('aria-invalid');
  }

  function showError(code, message) {
    var text = ERROR_TEXT[code] || message || 'Something went wrong. Please try again.';
    if (code === 'invalid_phone_number' && mobileInput && mobileError) {
      mobileError.textContent = text;
      mobileError.hidden = false;
      mobileInput.setAttribute('aria-invalid', 'true');
      mobileInput.focus();
      return;
    }
    formError.textContent = text;
    formError.hidden = false;
  }

  function setBusy(busy) {
    button.disabled = busy;
    button.setAttribute('aria-busy', busy ? 'true' : 'false');
    button.textContent = busy ? 'Paying…' : 'Pay';
  }

  function formatDate(isoText) {
    var d = new Date(isoText);
    if (isNaN(d.getTime())) return isoText;
    try {
      return d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
    } catch {
      return d.toISOString().slice(0, 16).replace('T', ' ') + ' UTC';
    }
  }

  /** "923 000 000", "+244 923000000" → "923000000"; anything else is sent as typed for the API to judge. */
  function normalizeMobile(value) {
    var digits = value.replace(/[\s().-]/g, '');
    if (/^\+?244\d{9}$/.test(digits)) digits = digits.slice(-9);
    return digits;
  }

  function render(intent) {
    if (!intent || intent.object !== 'payment_intent') return;
    if (current && current.id === intent.id && FINAL.indexOf(current.status) >= 0) return;
    current = { id: intent.id, payment_method: intent.payment_method, status: intent.status, reference: intent.reference };
    var key = intent.status === 'PENDING' ? 'PENDING_' + intent.payment_method : intent.status;
    var text = STATUS_TEXT[key] || '';
    if (intent.status === 'FAILED' && intent.failure_code && FAILURE_TEXT[intent.failure_code]) {
      text += ' ' + FAILURE_TEXT[intent.failure_code];
    }
    if (RETRYABLE.indexOf(intent.status) >= 0) text += ' You can try again.';

    statusEl.setAttribute('data-status', intent.status);
    statusEl.textContent = '';
    var word = document.createElement('strong');
    word.className = 'status-word';
    word.textContent = intent.status;
    var detail = document.createElement('span');
    detail.className = 'status-text';
    detail.textContent = text;
    statusEl.appendChild(word);
    statusEl.appendChild(document.createTextNode(' '));
    statusEl.appendChild(detail);

    var ref = intent.reference;
    if (ref && intent.payment_method === 'multicaixa_reference' && intent.status === 'PENDING') {
      document.getElementById('reference-entity').textContent = ref.entity;
      // Exactly the 9 digits (no spaces), so what is copied from the page is what the ATM takes.
      document.getElementById('reference-number').textContent = ref.number;
      document.getElementById('reference-expires').textContent = formatDate(ref.expires_at);
      referenceBox.hidden = false;
    } else {
      referenceBox.hidden = true;
    }

    var final = FINAL.indexOf(intent.status) >= 0;
    form.hidden = !(final && RETRYABLE.indexOf(intent.status) >= 0);
    if (final) {
      stopStream();
      forget();
      setBusy(false);
      // Once paid, cancelling no longer makes sense.
      if (cancelLink && intent.status === 'SUCCEEDED') cancelLink.hidden = true;
      if (intent.status === 'SUCCEEDED' && kind === 'checkout' && successUrl) {
        if (successLink) successLink.hidden = false;
        detail.textContent += ' Taking you back to the shop…';
        setTimeout(function () {
          window.location.assign(successUrl);
        }, 1500);
      }
    } else {
      remember(intent);
    }
  }

  function remember(intent) {
    try {
      sessionStorage.setItem(storageKey, JSON.stringify({ id: intent.id }));
    } catch {
      /* private mode: the page still works, it just cannot resume after a reload */
    }
  }

  function forget() {
    try {
      sessionStorage.removeItem(storageKey);
    } catch {
      /* ignore */
    }
  }

  function stopStream() {
    if (retryTimer) clearTimeout(retryTimer);
    retryTimer = null;
    if (source) source.close();
    source = null;
  }

  function follow(id) {
    stopStream();
    var es = new EventSource('/v1/public/payments/' + encodeURIComponent(id) + '/events');
    source = es;
    STREAM_EVENTS.forEach(function (name) {
      es.addEventListener(name, function (ev) {
        retryDelay = 1000;
        try {
          render(JSON.parse(ev.data));
        } catch {
          /* a malformed message is skipped; the next one carries the whole intent again */
        }
      });
    });
    es.onerror = function () {
      // EventSource reconnects by itself after a dropped connection; after a refused one it gives up
      // (readyState CLOSED), and we try again with backoff until the payment is final.
      if (es.readyState !== EventSource.CLOSED || source !== es) return;
      if (current && FINAL.indexOf(current.status) >= 0) return;
      retryTimer = setTimeout(function () {
        follow(id);
      }, retryDelay);
      retryDelay = Math.min(retryDelay * 2, 30000);
    };
  }

  function submit(ev) {
    ev.preventDefault();
    clearErrors();
    var method = selectedMethod();
    if (!method) {
      showError(null, 'Choose a payment method.');
      return;
    }
    var body = { payment_method: method };
    if (method === 'multicaixa_express' && mobileInput) {
      body.customer = { mobile: normalizeMobile(mobileInput.value) };
    }
    setBusy(true);
    fetch(payUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify(body),
      credentials: 'same-origin',
    })
      .then(function (res) {
        return res
          .json()
          .catch(function () {
            return null;
          })
          .then(function (json) {
            return { ok: res.ok, json: json };
          });
      })
      .then(function (r) {
        if (!r.ok || !r.json || r.json.object !== 'payment_intent') {
          var err = (r.json && r.json.error) || {};
          setBusy(false);
          showError(err.code, err.message);
          return;
        }
        current = null;
        render(r.json);
        if (FINAL.indexOf(r.json.status) < 0) follow(r.json.id);
      })
      .catch(function () {
        setBusy(false);
        showError(null, 'Could not reach the payment service. Check your connection and try again.');
      });
  }

  form.addEventListener('submit', submit);
  form.addEventListener('change', function (ev) {
    if (ev.target && ev.target.name === 'payment_method') {
      clearErrors();
      syncMethodFields();
    }
  });
  syncMethodFields();

  // A reload while a payment is under way picks it up again instead of offering to pay twice.
  var saved = null;
  try {
    saved = JSON.parse(sessionStorage.getItem(storageKey) || 'null');
  } catch {
    saved = null;
  }
  if (saved && typeof saved.id === 'string') {
    form.hidden = true;
    statusEl.textContent = 'Resuming your payment…';
    follow(saved.id);
  }
})();
