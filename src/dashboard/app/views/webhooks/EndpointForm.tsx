import { useState, type FormEvent } from 'react';
import { ErrorAlert } from '../../graphql';
import { useCreateEndpoint, type WebhookEndpointMode } from '../../hooks/webhooks';
import { MODE_WORDS } from './endpointWords';

export interface MadeEndpoint {
  id: string;
  title: string;
  secret: string | null;
}

/** The "New endpoint" form of the side panel: push (a URL) or pull (none), a name, a description, events. */
export function EndpointForm({ onMade }: { onMade: (made: MadeEndpoint) => void }) {
  const [state, create] = useCreateEndpoint();
  const [mode, setMode] = useState<WebhookEndpointMode>('PUSH');
  const [url, setUrl] = useState('');
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState('*');

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const list = events.split(',').map((s) => s.trim()).filter(Boolean);
    const res = await create({
      input: {
        mode,
        ...(mode === 'PUSH' && { url: url.trim() }),
        ...(name.trim() && { name: name.trim() }),
        ...(description.trim() && { description: description.trim() }),
        events: list.length ? list : ['*'],
      },
    });
    const made = res.data?.createWebhookEndpoint;
    if (made) onMade({ id: made.id, title: made.name || made.url || made.id, secret: made.secret ?? null });
  };

  return (
    <form onSubmit={submit}>
      <fieldset>
        <legend>Mode</legend>
        {(['PUSH', 'PULL'] as const).map((m) => (
          <label key={m} className="check">
            <input type="radio" name="endpoint-mode" value={m} checked={mode === m} onChange={() => setMode(m)} /> {MODE_WORDS[m].word}: {MODE_WORDS[m].how}
          </label>
        ))}
      </fieldset>
      {/* A pull endpoint has no URL: the gateway refuses one (its server makes no inbound request). */}
      {mode === 'PUSH' && (
        <label>
          Endpoint URL
          <input type="url" value={url} onChange={(e) => setUrl(e.target.value)} required placeholder="https://shop.example/webhooks" />
        </label>
      )}
      <label>
        Name (optional)
        <input value={name} maxLength={80} onChange={(e) => setName(e.target.value)} />
      </label>
      <label>
        Description (optional)
        <input value={description} maxLength={200} onChange={(e) => setDescription(e.target.value)} />
      </label>
      <label>
        Events (comma separated, * for all)
        <input value={events} onChange={(e) => setEvents(e.target.value)} />
      </label>
      <button type="submit" disabled={state.fetching}>
        Create endpoint
      </button>
      <ErrorAlert error={state.error} />
    </form>
  );
}
