import { useEffect, useState } from 'react';

/**
 * Copies an id or a secret. The button's accessible name says what it copies ("Copy payment id"); the
 * result is announced through a polite live region that is always in the page, so that a screen reader
 * hears "Copied" (a region added together with its text is often not read).
 */
export function CopyButton({ value, what }: { value: string; what: string }) {
  const [said, setSaid] = useState('');
  useEffect(() => {
    if (!said) return;
    const timer = setTimeout(() => setSaid(''), 2500);
    return () => clearTimeout(timer);
  }, [said]);
  const copy = async () => setSaid((await writeClipboard(value)) ? 'Copied' : 'Could not copy: select the text instead');
  return (
    <span className="copy">
      <button type="button" className="copy-button" aria-label={`Copy ${what}`} onClick={copy}>
        Copy
      </button>
      <span className="copy-said" aria-live="polite">
        {said}
      </span>
    </span>
  );
}

/**
 * navigator.clipboard exists only in secure contexts (https, localhost); a sandbox reached over a LAN
 * address on plain http falls back to the older selection-and-execCommand way.
 */
async function writeClipboard(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // Permission refused: try the fallback.
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  document.body.append(area);
  area.select();
  try {
    return document.execCommand('copy');
  } finally {
    area.remove();
  }
}
