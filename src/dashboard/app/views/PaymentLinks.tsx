import { useState, type FormEvent } from 'react';
import { gql, useMutation, useQuery } from 'urql';
import { ErrorAlert, useLiveQuery } from '../graphql';
import { formatAmount, formatTime } from '../format';
import { AmountField, Page } from '../ui';

interface Link {
  id: string;
  code: string;
  url: string;
  amount: number;
  currency: string;
  description: string | null;
  active: boolean;
  createdAt: string;
}

const LINKS = gql`
  query DashboardLinks {
    paymentLinks {
      id
      code
      url
      amount
      currency
      description
      active
      createdAt
    }
  }
`;

/** The QR code is rendered on demand, one link at a time: rendering costs more than reading fields. */
const QR = gql`
  query DashboardLinkQr($id: ID!) {
    paymentLink(id: $id) {
      id
      url
      qrSvg
    }
  }
`;

const CREATE = gql`
  mutation DashboardCreateLink($input: CreatePaymentLinkInput!) {
    createPaymentLink(input: $input) {
      id
    }
  }
`;

const DEACTIVATE = gql`
  mutation DashboardDeactivateLink($id: ID!) {
    deactivatePaymentLink(id: $id) {
      id
      active
    }
  }
`;

export function PaymentLinks() {
  const [result, refetch] = useLiveQuery<{ paymentLinks: Link[] }>({ query: LINKS });
  const [createState, create] = useMutation(CREATE);
  const [deactivateState, deactivate] = useMutation(DEACTIVATE);
  const [amount, setAmount] = useState('2500');
  const [description, setDescription] = useState('');
  const [qrFor, setQrFor] = useState<string | null>(null);
  const reload = () => refetch({ requestPolicy: 'network-only' });

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const res = await create({ input: { amount: Number(amount), ...(description.trim() ? { description: description.trim() } : {}) } });
    if (res.data) {
      setQrFor(res.data.createPaymentLink.id);
      setDescription('');
      reload();
    }
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
      <ErrorAlert error={result.error ?? deactivateState.error} />
      <table className="data">
        <caption>Payment links</caption>
        <thead>
          <tr>
            <th scope="col">Link</th>
            <th scope="col">Amount</th>
            <th scope="col">Active</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {result.data?.paymentLinks.map((link) => (
            <tr key={link.id}>
              <th scope="row">
                <a href={link.url} className="break">
                  {link.url}
                </a>
                <div className="muted">
                  {link.description ?? ''} {formatTime(link.createdAt)}
                </div>
              </th>
              <td>{formatAmount(link.amount, link.currency)}</td>
              <td>{link.active ? 'Active' : 'Inactive'}</td>
              <td className="actions">
                <button type="button" onClick={() => setQrFor(link.id)} aria-label={`Show QR code of ${link.code}`}>
                  QR code
                </button>
                {link.active && (
                  <button type="button" className="danger" onClick={() => deactivate({ id: link.id }).then((r) => !r.error && reload())} aria-label={`Deactivate ${link.code}`}>
                    Deactivate
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </Page>
  );
}

function QrCode({ id }: { id: string }) {
  const [result] = useQuery<{ paymentLink: { url: string; qrSvg: string } | null }>({ query: QR, variables: { id } });
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
