import { escapeXml } from '../domain/qr/escapeXml';

/**
 * Everything a page interpolates goes through `esc`: descriptions and account names are typed by
 * merchants and must never become markup on the gateway's own origin.
 */
export const esc = escapeXml;

/** "7 500 AOA": integer kwanzas grouped by thousands (AOA amounts carry no decimals here). */
export function formatAoa(amount: number): string {
  const digits = String(Math.trunc(Math.abs(amount)));
  const grouped = digits.replace(/\B(?=(\d{3})+(?!\d))/g, ' ');
  return `${amount < 0 ? '-' : ''}${grouped} AOA`;
}

/** Only absolute http(s) URLs become links or redirects; anything else is dropped. */
export function safeWebUrl(value: string | null | undefined): string | null {
  if (!value) return null;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.toString() : null;
  } catch {
    return null;
  }
}

/**
 * The shell of every public page: phone-first viewport, the same-origin stylesheet and script (the
 * Content-Security-Policy allows nothing else), and no inline code or styles.
 */
export function layout(opts: { title: string; body: string; script?: boolean }): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<meta name="referrer" content="no-referrer">
<title>${esc(opts.title)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/pay-assets/pay.css">
${opts.script ? '<script src="/pay-assets/pay.js" defer></script>\n' : ''}</head>
<body>
<main class="card">
${opts.body}
</main>
<footer class="footer"><p>Sandbox payment gateway: no real money moves.</p></footer>
</body>
</html>
`;
}
