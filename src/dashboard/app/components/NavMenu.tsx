import { useEffect, useRef, useState, type KeyboardEvent } from 'react';
import { Link } from '../router';

/**
 * The dashboard's navigation. Below 700 px the links fold behind a "Menu" button (aria-expanded,
 * aria-controls), so a phone shows the page rather than nine links; the CSS decides which form shows,
 * the state only whether the folded list is open. A navigation closes it, and so does Escape (focus
 * goes back to the button).
 */
export function NavMenu({ items, path, onSignOut }: { items: Array<[label: string, href: string]>; path: string; onSignOut: () => void }) {
  const [open, setOpen] = useState(false);
  const button = useRef<HTMLButtonElement>(null);
  useEffect(() => setOpen(false), [path]);
  const escape = (e: KeyboardEvent) => {
    if (e.key !== 'Escape' || !open) return;
    setOpen(false);
    button.current?.focus();
  };
  return (
    <nav aria-label="Dashboard" onKeyDown={escape}>
      <button ref={button} type="button" className="menu-button" aria-expanded={open} aria-controls="dashboard-nav" onClick={() => setOpen((o) => !o)}>
        Menu
      </button>
      <ul id="dashboard-nav" className={open ? 'open' : undefined}>
        {items.map(([label, href]) => (
          <li key={href}>
            <Link href={href} aria-current={isCurrent(path, href) ? 'page' : undefined}>
              {label}
            </Link>
          </li>
        ))}
        <li>
          <button type="button" className="link-button" onClick={onSignOut}>
            Sign out
          </button>
        </li>
      </ul>
    </nav>
  );
}

/** The link of the page shown, or of the list a detail page belongs to; the bare base only for itself (Overview lives there). */
function isCurrent(path: string, href: string): boolean {
  return path === href || (path.startsWith(`${href}/`) && href.split('/').length > 2);
}
