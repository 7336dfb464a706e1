import { useState, type FormEvent } from 'react';
import { gql, useMutation } from 'urql';
import { ErrorAlert, useLiveQuery } from '../graphql';
import { formatEnum, formatTime } from '../format';
import { Page } from '../ui';

interface ApiKey {
  id: string;
  type: string;
  name: string | null;
  permissions: string[];
  last4: string;
  createdAt: string;
  revokedAt: string | null;
}

const KEYS = gql`
  query DashboardKeys {
    apiKeys {
      id
      type
      name
      permissions
      last4
      createdAt
      revokedAt
    }
  }
`;

const CREATE = gql`
  mutation DashboardCreateKey($input: CreateApiKeyInput!) {
    createApiKey(input: $input) {
      id
      secret
    }
  }
`;

const REVOKE = gql`
  mutation DashboardRevokeKey($id: ID!) {
    revokeApiKey(id: $id) {
      id
      revokedAt
    }
  }
`;

const PERMISSIONS = [
  'PAYMENT_INTENTS_READ',
  'PAYMENT_INTENTS_WRITE',
  'REFUNDS_READ',
  'REFUNDS_WRITE',
  'PAYMENT_LINKS_READ',
  'PAYMENT_LINKS_WRITE',
  'CHECKOUT_SESSIONS_READ',
  'CHECKOUT_SESSIONS_WRITE',
  'WEBHOOK_ENDPOINTS_READ',
  'WEBHOOK_ENDPOINTS_WRITE',
  'EVENTS_READ',
  'EVENTS_WRITE',
  'LOGS_READ',
  'LOGS_WRITE',
  'ACCOUNT_READ',
  'ACCOUNT_WRITE',
  'SANDBOX_READ',
  'SANDBOX_WRITE',
];

/** REST spelling, the one integrators configure: PAYMENT_INTENTS_READ → payment_intents:read. */
const permissionName = (p: string) => p.toLowerCase().replace(/_(read|write)$/, ':$1');

export function ApiKeys() {
  const [result, refetch] = useLiveQuery<{ apiKeys: ApiKey[] }>({ query: KEYS });
  const [createState, create] = useMutation(CREATE);
  const [revokeState, revoke] = useMutation(REVOKE);
  const [name, setName] = useState('');
  const [chosen, setChosen] = useState<Set<string>>(() => new Set(['PAYMENT_INTENTS_READ']));
  const [secret, setSecret] = useState<string | null>(null);
  const reload = () => refetch({ requestPolicy: 'network-only' });

  const toggle = (p: string) =>
    setChosen((c) => {
      const next = new Set(c);
      if (!next.delete(p)) next.add(p);
      return next;
    });

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const res = await create({ input: { name: name.trim(), permissions: PERMISSIONS.filter((p) => chosen.has(p)) } });
    if (res.data) {
      setSecret(res.data.createApiKey.secret);
      setName('');
      reload();
    }
  };

  return (
    <Page title="API keys">
      <form className="card" aria-labelledby="new-key-title" onSubmit={submit}>
        <h2 id="new-key-title">New restricted key</h2>
        <label>
          Key name
          <input value={name} maxLength={80} onChange={(e) => setName(e.target.value)} required />
        </label>
        <fieldset>
          <legend>Permissions</legend>
          <div className="checks">
            {PERMISSIONS.map((p) => (
              <label key={p} className="check">
                <input type="checkbox" checked={chosen.has(p)} onChange={() => toggle(p)} /> {permissionName(p)}
              </label>
            ))}
          </div>
        </fieldset>
        <button type="submit" disabled={createState.fetching}>
          Create restricted key
        </button>
        <ErrorAlert error={createState.error} />
      </form>
      {secret && (
        <p className="notice">
          New key (shown once; keep it on your servers): <code className="break">{secret}</code>
        </p>
      )}
      <ErrorAlert error={result.error ?? revokeState.error} />
      <table className="data">
        <caption>API keys</caption>
        <thead>
          <tr>
            <th scope="col">Key</th>
            <th scope="col">Permissions</th>
            <th scope="col">State</th>
          </tr>
        </thead>
        <tbody>
          {result.data?.apiKeys.map((k) => (
            <tr key={k.id}>
              <th scope="row">
                {k.name ?? formatEnum(k.type)} <span className="muted">…{k.last4}</span>
                <div className="muted">
                  {k.id} · {formatEnum(k.type)} · {formatTime(k.createdAt)}
                </div>
              </th>
              <td className="break">{k.permissions.length ? k.permissions.map(permissionName).join(', ') : k.type === 'SECRET' ? 'all' : '—'}</td>
              <td>
                {k.revokedAt ? (
                  `Revoked ${formatTime(k.revokedAt)}`
                ) : k.type === 'RESTRICTED' ? (
                  <button type="button" className="danger" aria-label={`Revoke ${k.name ?? k.id}`} onClick={() => revoke({ id: k.id }).then((r) => !r.error && reload())}>
                    Revoke
                  </button>
                ) : (
                  'Active'
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </Page>
  );
}
