import type { ReactNode } from 'react';

/** What a list says when it has nothing yet: what would appear here, and how to make the first one. */
export function EmptyState({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="empty-state">
      <p className="empty-title">{title}</p>
      {children && <div className="muted">{children}</div>}
    </div>
  );
}
