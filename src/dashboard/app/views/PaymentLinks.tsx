import { useState, type FormEvent } from 'react';
import { ErrorAlert } from '../graphql';
import { formatAmount } from '../format';
import { useCreatePaymentLink, useDeactivatePaymentLink, usePaymentLinkQr, usePaymentLinks } from '../hooks/paymentLinks';
import { ConfirmButton } from '../components/ConfirmDialog';
import { CopyButton } from '../components/CopyButton';
import { EmptyState } from '../components/EmptyState';
import { Time } from '../components/Time';
import { AmountField, Loading, Page } from '../ui';

export function PaymentLinks() {
  const [result, refetch] = usePaymentLinks();
  const [createState, create] = useCreatePaymentLink();
  const [, deactivate] = useDeactivatePaymentLink();
  const [amount, setAmount] = useState('2500');
  const [description, setDescription] = useState('');
  const [qrFor, setQrFor] = useState<string | null>(null);
  const reload = () => refetch({ requestPolicy: 'network-only' });
  const links = result.data?.paymentLinks;

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const res = await create({ input: { amount: Number(amount), ...(description.trim() ? { description: description.trim() } : {}) } });
    if (res.data) {
      setQrFor(res.data.createPaymentLink.id);
      setDescription('');
      reload();
    }
  };
  const deactivateLink = async (id: string) => {
    const res = await deactivate({ id });
    if (res.error) throw new Error(res.error.message);
    reload();
  };

  return (
    <Page title="Payment links">
      <form className="card" aria-labelledby="new-link-title" onSubmit={submit}>
        <h2 id="new-link-title">New payment link</h2>
        <div className="fields">
          <AmountField value={amount} onChange={setAmount} />
          <label>
            Description
            <input value={description} maxLength={140} onChange={(e) => setDescription(e.target.value)} />
          </label>
        </div>
        <button type="submit" disabled={createState.fetching}>
          Create link
        </button>
        <ErrorAlert error={createState.error} />
      </form>
      {qrFor && <QrCode id={qrFor} />}
      <ErrorAlert error={result.error} />
      {!links && !result.error && <Loading what="payment links" />}
      {links?.length === 0 && (
        <EmptyState title="No payment links yet">A payment link is a page (and a QR code) where a customer pays a fixed amount. Create one above and share its URL.</EmptyState>
      )}
      {links && links.length > 0 && (
        // Cards rather than a table: a link's URL is long, and on a phone a table column cannot shorten it.
        <ul className="plain" aria-label="Payment links">
          {links.map((link) => (
            <li key={link.id} className="card link-card" aria-label={`Payment link ${link.code}`}>
              <span className="id-line">
                <a href={link.url} className="ellipsis" title={link.url}>
                  {link.url}
                </a>
                <CopyButton value={link.url} what={`URL of ${link.code}`} />
              </span>
              <p>
                <strong className="nowrap">{formatAmount(link.amount, link.currency)}</strong> · <span data-testid="link-state">{link.active ? 'Active' : 'Inactive'}</span>
                {link.description && <> · {link.description}</>}
              </p>
              <p className="muted">
                Created <Time iso={link.createdAt} clock="sandbox" />
              </p>
              <div className="actions">
                <button type="button" onClick={() => setQrFor(link.id)} aria-label={`Show QR code of ${link.code}`}>
                  QR code
                </button>
                {link.active && (
                  <ConfirmButton
                    label={`Deactivate ${link.code}`}
                    title="Deactivate this payment link?"
                    description={
                      <p>
                        Customers opening <span className="break">{link.url}</span> can no longer pay through it. Payments already made are kept. A link cannot be turned on again.
                      </p>
                    }
                    confirmLabel="Deactivate link"
                    action={() => deactivateLink(link.id)}
                  >
                    Deactivate
                  </ConfirmButton>
                )}
              </div>
            </li>
          ))}
        </ul>
      )}
    </Page>
  );
}

function QrCode({ id }: { id: string }) {
  const [result] = usePaymentLinkQr(id);
  if (result.error) return <ErrorAlert error={result.error} />;
  const link = result.data?.paymentLink;
  if (!link) return null;
  // As an image (data: URL): an SVG in <img> runs nothing, and the CSP allows data: images only.
  return (
    <figure className="card qr">
      <img src={`data:image/svg+xml;charset=utf-8,${encodeURIComponent(link.qrSvg)}`} alt={`QR code of ${link.url}`} width={256} height={256} />
      <figcaption className="break">{link.url}</figcaption>
    </figure>
  );
}
