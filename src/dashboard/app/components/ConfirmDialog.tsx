import { useEffect, useId, useRef, useState, type ReactNode } from 'react';

export interface ConfirmOptions {
  /** The question, as the dialog's name: "Delete this endpoint?". */
  title: string;
  /** What happens, as the dialog's description: what is lost and what is kept. */
  description: ReactNode;
  /** The destructive button's words: "Delete endpoint". */
  confirmLabel: string;
}

/**
 * Asks before a destructive action. A native modal <dialog> (showModal) makes the rest of the page inert,
 * so focus stays inside it; role="alertdialog" tells assistive technology that it interrupts. Focus
 * starts on Cancel (the safe choice) and goes back to what opened the dialog when it closes. Escape
 * cancels. While `onConfirm` runs, both buttons wait; its error is shown in the dialog, which stays open.
 */
export function ConfirmDialog({ title, description, confirmLabel, onConfirm, onClose }: ConfirmOptions & { onConfirm: () => Promise<unknown>; onClose: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const cancel = useRef<HTMLButtonElement>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const id = useId();

  useEffect(() => {
    const opener = document.activeElement as HTMLElement | null;
    dialog.current?.showModal();
    cancel.current?.focus();
    return () => opener?.focus();
  }, []);

  const confirm = async () => {
    setBusy(true);
    setError(null);
    try {
      await onConfirm();
      onClose();
    } catch (err) {
      setError((err as Error).message);
      setBusy(false);
    }
  };

  return (
    <dialog
      ref={dialog}
      className="confirm"
      role="alertdialog"
      aria-labelledby={`${id}-title`}
      aria-describedby={`${id}-description`}
      onCancel={(e) => {
        // Escape: React decides when the dialog goes (it is unmounted), not the browser.
        e.preventDefault();
        if (!busy) onClose();
      }}
    >
      <h2 id={`${id}-title`}>{title}</h2>
      <div id={`${id}-description`}>{description}</div>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <div className="actions">
        <button ref={cancel} type="button" className="secondary" disabled={busy} onClick={onClose}>
          Cancel
        </button>
        <button type="button" className="destructive" disabled={busy} onClick={confirm}>
          {confirmLabel}
        </button>
      </div>
    </dialog>
  );
}

/**
 * A destructive button that asks first: the dialog opens on click, and `action` runs only on confirm. A
 * thrown error (or a rejected promise) keeps the dialog open with the error.
 */
export function ConfirmButton({ children, label, action, ...options }: ConfirmOptions & { children: ReactNode; label?: string; action: () => Promise<unknown> }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" className="danger" aria-label={label} onClick={() => setOpen(true)}>
        {children}
      </button>
      {open && <ConfirmDialog {...options} onConfirm={action} onClose={() => setOpen(false)} />}
    </>
  );
}
