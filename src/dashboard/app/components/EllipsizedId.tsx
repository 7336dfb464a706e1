import { Link } from '../router';
import { CopyButton } from './CopyButton';

/**
 * An id on one line: shortened with an ellipsis by CSS when the column is narrow (the text itself stays
 * whole, so search, selection and screen readers get all of it), the full value in `title`, and a copy
 * button beside it. `what` names it for the copy button ("payment id").
 */
export function EllipsizedId({ id, what, href }: { id: string; what: string; href?: string }) {
  return (
    <span className="id-line">
      {href ? (
        <Link href={href} className="ellipsis mono" title={id}>
          {id}
        </Link>
      ) : (
        <code className="ellipsis" title={id}>
          {id}
        </code>
      )}
      <CopyButton value={id} what={what} />
    </span>
  );
}
