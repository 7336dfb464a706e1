import { CopyButton } from '../../components/CopyButton';

/**
 * A signing secret, shown once where it was made (creation or rotation): the gateway keeps it encrypted.
 * It names the endpoint it belongs to; the views drop it when that endpoint goes or the view is left.
 */
export function SecretOnce({ secret, title }: { secret: string; title: string }) {
  return (
    <div className="notice" data-testid="secret-once">
      <p>
        Signing secret of <strong className="break">{title}</strong> (shown once, copy it now): <code className="break">{secret}</code>
      </p>
      <CopyButton value={secret} what="signing secret" />
    </div>
  );
}
