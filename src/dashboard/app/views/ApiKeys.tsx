import { useState, type FormEvent } from 'react';
import { ErrorAlert, throwIfError } from '../graphql';
import { formatEnum, formatTime } from '../format';
import { useApiKeys, useCreateApiKey, useRevokeApiKey, type ApiKey, type ApiKeyPermission } from '../hooks/apiKeys';
import { ConfirmButton } from '../components/ConfirmDialog';
import { CopyButton } from '../components/CopyButton';
import { EllipsizedId } from '../components/EllipsizedId';
import { CreateButton } from '../components/SidePanel';
import { Time } from '../components/Time';
import { Page } from '../ui';
import { ListStatus } from './lists/ListParts';

/**
 * What each resource's permissions allow, from the operations openapi.yaml gives each `x-permission`
 * (`write` implies `read`). A permission that no operation needs says so: a key is given only what it uses.
 */
const RESOURCES: ReadonlyArray<readonly [resource: string, read: string, write: string]> = [
  ['PAYMENT_INTENTS', 'List and read payments, follow them (client tokens)', 'Create and cancel payments'],
  ['REFUNDS', 'Read refunds', 'Refund payments'],
  ['PAYMENT_LINKS', 'List and read payment links and their QR codes', 'Create and deactivate links, make QR codes'],
  ['CHECKOUT_SESSIONS', 'Read checkout sessions', 'Create checkout sessions'],
  ['WEBHOOK_ENDPOINTS', 'List endpoints, deliveries, chaos and pending events', 'Create, delete and test endpoints; resend, chaos, ack'],
  ['EVENTS', 'List events', 'Nothing more than read (no operation needs it)'],
  ['LOGS', 'Read this key’s request log', 'Nothing more than read (no operation needs it)'],
  ['ACCOUNT', 'Read the account', 'Nothing more than read (no operation needs it)'],
  ['SANDBOX', 'Read the sandbox clock', 'Advance the clock, simulate a reference paid'],
];
const PERMISSIONS = RESOURCES.flatMap(([r]) => [`${r}_READ`, `${r}_WRITE`]) as ApiKeyPermission[];

/** REST spelling, the one integrators configure: PAYMENT_INTENTS_READ → payment_intents:read. */
const permissionName = (p: string) => p.toLowerCase().replace(/_(read|write)$/, ':$1');

export function ApiKeys() {
  const [result, refetch] = useApiKeys();
  const [, revoke] = useRevokeApiKey();
  const reload = () => refetch({ requestPolicy: 'network-only' });
  const keys = result.data?.apiKeys;

  const revokeKey = async (id: string) => {
    const res = await revoke({ id });
    throwIfError(res);
    reload();
  };

  return (
    <Page title="API keys">
      <div className="list-head">
        <p className="muted">The account’s keys, active first. “Last used” is to the minute.</p>
        <CreateButton label="New restricted key">{(close) => <NewKey onCreated={reload} onDone={close} />}</CreateButton>
      </div>
      <ListStatus what="API keys" error={result.error} loaded={Boolean(keys)} empty={keys?.length === 0} emptyTitle="No keys to show">
        The account’s keys appear here; only its full secret key may list them.
      </ListStatus>
      {!result.error && keys && keys.length > 0 && (
        <table className="data compact keys-table" aria-label="API keys">
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col" className="wide-only col-id">
                Id
              </th>
              <th scope="col" className="wide-only col-type">
                Type
              </th>
              <th scope="col" className="wide-only">
                Permissions
              </th>
              <th scope="col" className="col-used">
                Last used
              </th>
              <th scope="col" className="col-state">
                State
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.map((k) => (
              <KeyRow key={k.id} apiKey={k} revoke={revokeKey} />
            ))}
          </tbody>
        </table>
      )}
    </Page>
  );
}

function KeyRow({ apiKey: k, revoke }: { apiKey: ApiKey; revoke: (id: string) => Promise<void> }) {
  const name = k.name ?? formatEnum(k.type);
  const permissions = k.permissions.length ? k.permissions.map(permissionName).join(', ') : k.type === 'SECRET' ? 'all' : k.type === 'PUBLISHABLE' ? 'payment methods only' : 'none';
  return (
    <tr aria-label={name}>
      <th scope="row">
        <span className="cell-clip key-name">
          {name} <span className="muted">…{k.last4}</span>
        </span>
        {/* On a phone the type and id go under the name; on a wide screen they have columns. */}
        <span className="cell-sub narrow-time">
          {formatEnum(k.type)} · created <Time iso={k.createdAt} clock="real" />
        </span>
        <span className="narrow-time">
          <EllipsizedId id={k.id} what={`id of ${name}`} />
        </span>
      </th>
      <td className="wide-only">
        <EllipsizedId id={k.id} what={`id of ${name}`} />
      </td>
      <td className="wide-only">{formatEnum(k.type)}</td>
      <td className="wide-only break">{permissions}</td>
      <td data-testid="key-last-used">
        <LastUsed iso={k.lastUsedAt} />
      </td>
      <td data-testid="key-state">
        {k.revokedAt ? (
          <>
            Revoked <Time iso={k.revokedAt} clock="real" />
          </>
        ) : k.type === 'RESTRICTED' ? (
          <ConfirmButton
            label={`Revoke ${k.name ?? k.id}`}
            title={`Revoke ${name}?`}
            description={
              <p>
                Requests made with this key fail at once (401), and dashboard sessions signed in with it end. A revoked key cannot be restored; make a new one instead.
              </p>
            }
            confirmLabel="Revoke key"
            action={() => revoke(k.id)}
          >
            Revoke
          </ConfirmButton>
        ) : (
          'Active'
        )}
      </td>
    </tr>
  );
}

/**
 * When the key was last used: `lastUsedAt` is the start of the minute its last request fell in, so a
 * time under a minute old says no more than that (not "23 s ago").
 */
function LastUsed({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <>Never</>;
  if (Date.now() - Date.parse(iso) < 60_000)
    return (
      <time dateTime={iso} title={formatTime(iso)}>
        In the last minute
      </time>
    );
  return <Time iso={iso} clock="real" relative />;
}

/** The form, then the new key's secret (shown once, in the panel, gone when the panel closes). */
function NewKey({ onCreated, onDone }: { onCreated: () => void; onDone: () => void }) {
  const [state, create] = useCreateApiKey();
  const [name, setName] = useState('');
  const [chosen, setChosen] = useState<Set<ApiKeyPermission>>(() => new Set<ApiKeyPermission>(['PAYMENT_INTENTS_READ']));
  const [secret, setSecret] = useState<string | null>(null);
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
      onCreated();
    }
  };
  if (secret)
    return (
      <div className="notice">
        <p>
          New key (shown once; keep it on your servers): <code className="break">{secret}</code>
        </p>
        <CopyButton value={secret} what="new key" />
        <p>
          <button type="button" onClick={onDone}>
            Done
          </button>
        </p>
      </div>
    );
  return (
    <form onSubmit={submit}>
      <label>
        Key name
        <input value={name} maxLength={80} onChange={(e) => setName(e.target.value)} required />
      </label>
      <fieldset>
        <legend>Permissions (write includes read)</legend>
        <div className="perm-grid">
          {RESOURCES.flatMap(([resource, read, write]) =>
            (['READ', 'WRITE'] as const).map((level) => {
              const p = `${resource}_${level}` as ApiKeyPermission;
              return (
                <label key={p} className="check">
                  <input type="checkbox" checked={chosen.has(p)} onChange={() => toggle(p)} aria-describedby={`what-${p}`} />
                  <span>{permissionName(p)}</span>
                  <span id={`what-${p}`} className="perm-what">
                    {level === 'READ' ? read : write}
                  </span>
                </label>
              );
            }),
          )}
        </div>
      </fieldset>
      <button type="submit" disabled={state.fetching}>
        Create restricted key
      </button>
      <ErrorAlert error={state.error} />
    </form>
  );
}
