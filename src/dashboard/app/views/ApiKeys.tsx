import { useState, type FormEvent } from 'react';
import { ErrorAlert } from '../graphql';
import { formatEnum } from '../format';
import { useApiKeys, useCreateApiKey, useRevokeApiKey, type ApiKey, type ApiKeyPermission } from '../hooks/apiKeys';
import { ConfirmButton } from '../components/ConfirmDialog';
import { CopyButton } from '../components/CopyButton';
import { EllipsizedId } from '../components/EllipsizedId';
import { EmptyState } from '../components/EmptyState';
import { Time } from '../components/Time';
import { Page } from '../ui';

const PERMISSIONS: ApiKeyPermission[] = [
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
  const [result, refetch] = useApiKeys();
  const [createState, create] = useCreateApiKey();
  const [, revoke] = useRevokeApiKey();
  const [name, setName] = useState('');
  const [chosen, setChosen] = useState<Set<ApiKeyPermission>>(() => new Set<ApiKeyPermission>(['PAYMENT_INTENTS_READ']));
  const [secret, setSecret] = useState<string | null>(null);
  const reload = () => refetch({ requestPolicy: 'network-only' });

  const revokeKey = async (id: string) => {
    const res = await revoke({ id });
    if (res.error) throw new Error(res.error.message);
    reload();
  };

  const toggle = (p: ApiKeyPermission) =>
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
        <div className="notice">
          <p>
            New key (shown once; keep it on your servers): <code className="break">{secret}</code>
          </p>
          <CopyButton value={secret} what="new key" />
        </div>
      )}
      <ErrorAlert error={result.error} />
      {result.data?.apiKeys.length === 0 && <EmptyState title="No keys to show">The account's keys appear here; only its full secret key may list them.</EmptyState>}
      {/* Cards rather than a table: a key's id, permissions and action do not fit three columns on a phone. */}
      {result.data && result.data.apiKeys.length > 0 && (
        <ul className="plain" aria-label="API keys">
          {result.data.apiKeys.map((k) => (
            <KeyCard key={k.id} apiKey={k} revoke={revokeKey} />
          ))}
        </ul>
      )}
    </Page>
  );
}

function KeyCard({ apiKey: k, revoke }: { apiKey: ApiKey; revoke: (id: string) => Promise<void> }) {
  const name = k.name ?? formatEnum(k.type);
  return (
    <li className="card key-card" aria-label={name}>
      <h3>
        {name} <span className="muted">…{k.last4}</span>
      </h3>
      <EllipsizedId id={k.id} what={`id of ${name}`} />
      <p className="muted">
        {formatEnum(k.type)} · created <Time iso={k.createdAt} clock="real" />
      </p>
      <p className="break">Permissions: {k.permissions.length ? k.permissions.map(permissionName).join(', ') : k.type === 'SECRET' ? 'all' : 'none (reads payment methods only)'}</p>
      <div data-testid="key-state">
        {k.revokedAt ? (
          <p>
            Revoked <Time iso={k.revokedAt} clock="real" />
          </p>
        ) : k.type === 'RESTRICTED' ? (
          <ConfirmButton
            label={`Revoke ${k.name ?? k.id}`}
            title={`Revoke ${name}?`}
            description={<p>Requests made with this key are refused from now on, and dashboard sessions signed in with it end. A revoked key cannot be restored; make a new one instead.</p>}
            confirmLabel="Revoke key"
            action={() => revoke(k.id)}
          >
            Revoke
          </ConfirmButton>
        ) : (
          <p>Active</p>
        )}
      </div>
    </li>
  );
}
