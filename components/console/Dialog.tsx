'use client';

import { type ReactNode, useEffect, useRef } from 'react';

/** A modal dialog on the native <dialog> element (focus trap, Esc to close, labelled). */
export function Dialog({
  open,
  title,
  onClose,
  children,
  testId,
  wide,
}: {
  open: boolean;
  title: string;
  onClose(): void;
  children: ReactNode;
  testId?: string;
  /** For content that reads side by side (a list and its detail). */
  wide?: boolean;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog
      ref={ref}
      className={wide ? 'dialog dialog--wide' : 'dialog'}
      aria-label={title}
      onClose={onClose}
      data-testid={testId}
    >
      <header className="dialog__head">
        <h2>{title}</h2>
        <button type="button" onClick={onClose} aria-label="Close">
          ×
        </button>
      </header>
      {open ? children : null}
    </dialog>
  );
}
