import { useState, type FormEvent } from 'react';
import { ErrorAlert, throwIfError } from '../graphql';
import { formatAmount } from '../format';
import { useCreatePaymentLink, useDeactivatePaymentLink, usePaymentLinkQr, usePaymentLinks, type PaymentLink } from '../hooks/paymentLinks';
import { ConfirmButton } from '../components/ConfirmDialog';
import { CopyButton } from '../components/CopyButton';
import { CreateButton, SidePanel } from '../components/SidePanel';
import { ClockNamed, ClockNote, Time } from '../components/Time';
import { AmountField, Page } from '../ui';
import { ListStatus } from './lists/ListParts';

/** The account's last 100 payment links (the API's list), newest first; a link's QR code opens beside the list. */
export function PaymentLinks() {
  const [result, refetch] = usePaymentLinks();
  const [, deactivate] = useDeactivatePaymentLink();
  const [qrFor, setQrFor] = useState<PaymentLink | null>(null);
  const reload = () => refetch({ requestPolicy: 'network-only' });
  const links = result.data?.paymentLinks;

  const deactivateLink = async (id: string) => {
    const res = await deactivate({ id });
    throwIfError(res);
    reload();
  };

  return (
    <Page title="Payment links">
      <div className="list-head">
        <p className="muted">A payment link is a page (and a QR code) where a customer pays a fixed amount. Newest first.</p>
        <CreateButton label="New payment link">
          {(close) => (
            <NewLink
              onCreated={(link) => {
                close();
                reload();
                setQrFor(link);
              }}
            />
          )}
        </CreateButton>
      </div>
      <ListStatus what="payment links" error={result.error} loaded={Boolean(links)} empty={links?.length === 0} emptyTitle="No payment links yet">
        Make one with “New payment link” and share its URL or QR code.
      </ListStatus>
      {!result.error && links && links.length > 0 && (
        <ClockNamed>
          {/* The clock is named once, in the time column's header, not on every row. */}
          <table className="data compact links-table" aria-label="Payment links">
            <thead>
              <tr>
                <th scope="col">Link</th>
                <th scope="col" className="col-amount">
                  Amount
                </th>
                <th scope="col" className="wide-only">
                  Description
                </th>
                <th scope="col" className="wide-only col-time">
                  Created
                  <ClockNote clock="sandbox" />
                </th>
                <th scope="col" className="col-state">
                  State
                </th>
              </tr>
            </thead>
            <tbody>
              {links.map((link) => (
                <tr key={link.id} aria-label={`Payment link ${link.code}`}>
                  <th scope="row">
                    {/* The code opens the link's URL, copy button and QR code beside the list. */}
                    <button type="button" className="row-open mono" title={link.url} onClick={() => setQrFor(link)}>
                      {link.code}
                    </button>
                    {link.description && <span className="cell-sub narrow-time">{link.description}</span>}
                  </th>
                  <td className="num">{formatAmount(link.amount, link.currency)}</td>
                  <td className="wide-only cell-clip">{link.description ?? '—'}</td>
                  <td className="wide-only">
                    <Time iso={link.createdAt} clock="sandbox" />
                  </td>
                  {/* The state, and under it what can change it: only an active link can be deactivated. */}
                  <td className="state-cell">
                    <span data-testid="link-state">{link.active ? 'Active' : 'Inactive'}</span>
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
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </ClockNamed>
      )}
      {qrFor && (
        <SidePanel title={`Payment link ${qrFor.code}`} onClose={() => setQrFor(null)}>
          <QrCode link={qrFor} />
        </SidePanel>
      )}
    </Page>
  );
}

function NewLink({ onCreated }: { onCreated: (link: PaymentLink) => void }) {
  const [state, create] = useCreatePaymentLink();
  const [amount, setAmount] = useState('2500');
  const [description, setDescription] = useState('');
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const res = await create({ input: { amount: Number(amount), ...(description.trim() ? { description: description.trim() } : {}) } });
    if (res.data) onCreated(res.data.createPaymentLink);
  };
  return (
    <form onSubmit={submit}>
      <AmountField value={amount} onChange={setAmount} />
      <label>
        Description
        <input value={description} maxLength={140} onChange={(e) => setDescription(e.target.value)} />
      </label>
      <button type="submit" disabled={state.fetching}>
        Create link
      </button>
      <ErrorAlert error={state.error} />
    </form>
  );
}

function QrCode({ link }: { link: PaymentLink }) {
  const [result] = usePaymentLinkQr(link.id);
  const qr = result.data?.paymentLink;
  return (
    <>
      <dl className="facts">
        <dt>Amount</dt>
        <dd>{formatAmount(link.amount, link.currency)}</dd>
        <dt>State</dt>
        <dd>{link.active ? 'Active' : 'Inactive'}</dd>
        {link.description && (
          <>
            <dt>Description</dt>
            <dd>{link.description}</dd>
          </>
        )}
        <dt>URL</dt>
        <dd>
          <span className="id-line">
            <a href={link.url} className="ellipsis" title={link.url}>
              {link.url}
            </a>
            <CopyButton value={link.url} what={`URL of ${link.code}`} />
          </span>
        </dd>
      </dl>
      <ErrorAlert error={result.error} />
      {/* As an image (data: URL): an SVG in <img> runs nothing, and the CSP allows data: images only. */}
      {qr && (
        <figure className="qr">
          <img src={`data:image/svg+xml;charset=utf-8,${encodeURIComponent(qr.qrSvg)}`} alt={`QR code of ${qr.url}`} width={256} height={256} />
        </figure>
      )}
    </>
  );
}
