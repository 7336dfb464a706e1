import { useEffect, useId, useRef, useState, type ReactNode } from 'react';

/**
 * A create form (or any secondary task) in a modal side panel, so that a list view opens on its rows and
 * creating is one button away. A native modal <dialog> (showModal) keeps focus inside it and the page
 * behind inert; Escape and the close button close it; focus goes back to what opened it. On a phone the
 * panel takes the whole screen.
 */
export function SidePanel({ title, onClose, children }: { title: string; onClose: () => void; children: ReactNode }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const id = useId();
  useEffect(() => {
    const opener = document.activeElement as HTMLElement | null;
    dialog.current?.showModal();
    // The first field, not the close button: the panel was opened to fill it in.
    dialog.current?.querySelector<HTMLElement>('input, select, textarea')?.focus();
    return () => opener?.focus();
  }, []);
  return (
    <dialog
      ref={dialog}
      className="side-panel"
      aria-labelledby={`${id}-title`}
      onCancel={(e) => {
        // Escape: React decides when the panel goes (it is unmounted), not the browser.
        e.preventDefault();
        onClose();
      }}
    >
      <div className="side-panel-head">
        <h2 id={`${id}-title`}>{title}</h2>
        <button type="button" className="secondary" onClick={onClose}>
          Close
        </button>
      </div>
      {children}
    </dialog>
  );
}

/**
 * The button of a list view's create action and the panel it opens. `children` gets `close`, for the
 * form to call once it has created what it made (the list shows the new row).
 */
export function CreateButton({ label, title = label, children }: { label: string; title?: string; children: (close: () => void) => ReactNode }) {
  const [open, setOpen] = useState(false);
  const close = () => setOpen(false);
  return (
    <>
      <button type="button" className="create-button" onClick={() => setOpen(true)}>
        {label}
      </button>
      {open && (
        <SidePanel title={title} onClose={close}>
          {children(close)}
        </SidePanel>
      )}
    </>
  );
}
