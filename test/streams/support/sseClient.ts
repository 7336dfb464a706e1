/** A minimal server-sent-events client over fetch, recording every message and comment. */
export interface SseMessage {
  id?: string;
  event?: string;
  data: string;
}

export interface SseClient {
  status: number;
  headers: Headers;
  /** Non-stream answers (errors): the body text. */
  text?: string;
  messages: SseMessage[];
  comments: string[];
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  isEnded(): boolean;
  close(): void;
  waitFor(match: (m: SseMessage[]) => boolean, timeoutMs?: number): Promise<SseMessage[]>;
}

export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
  const abort = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
  const messages: SseMessage[] = [];
  const comments: string[] = [];
  let ended = false;
  const client: SseClient = {
    status: res.status,
    headers: res.headers,
    messages,
    comments,
    ended: Promise.resolve(),
    isEnded: () => ended,
    close: () => abort.abort(),
    async waitFor(match, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (!match(messages)) {
        if (Date.now() > deadline) throw new Error(`SSE: condition not met within ${timeoutMs} ms; got ${JSON.stringify(messages.map((m) => m.event))}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return messages;
    },
  };
  if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    client.text = await res.text();
    ended = true;
    return client;
  }
  client.ended = (async () => {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buf = '';
    let current: SseMessage = { data: '' };
    let hasData = false;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buf += decoder.decode(value, { stream: true });
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl).replace(/\r$/, '');
          buf = buf.slice(nl + 1);
          if (line === '') {
            if (hasData) messages.push(current);
            current = { data: '' };
            hasData = false;
          } else if (line.startsWith(':')) {
            comments.push(line.slice(1).trim());
          } else {
            const colon = line.indexOf(':');
            const field = colon < 0 ? line : line.slice(0, colon);
            const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
            if (field === 'data') {
              current.data = hasData ? `${current.data}\n${value}` : value;
              hasData = true;
            } else if (field === 'id') current.id = value;
            else if (field === 'event') current.event = value;
          }
        }
      }
    } catch {
      // Aborted by close().
    } finally {
      ended = true;
    }
  })();
  return client;
}
