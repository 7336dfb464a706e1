import type { PgwClient } from '@pgw/client';
import { apiClient } from '../api';
import { resolveConnection, type ConnectionFlags } from '../connection';
import { parseDuration } from '../duration';
import { createOutput } from '../output';

export async function advanceClock(api: PgwClient, seconds: number) {
  const { data } = await api.POST('/sandbox/clock/advance', { body: { seconds } });
  return data;
}

/** `pgw clock advance <duration>`: every timer due in the span fires before the answer (contract decisions). */
export async function clockAdvance(duration: string, opts: ConnectionFlags & { json?: boolean }): Promise<void> {
  const seconds = parseDuration(duration);
  const conn = resolveConnection(opts);
  const out = createOutput(opts);
  out.progress(`advancing the sandbox clock ${seconds} s`);
  const clock = await advanceClock(apiClient(conn), seconds);
  if (out.json) return out.object(clock);
  out.line(`sandbox clock advanced ${seconds} s: now ${clock.now} (offset ${clock.offset_seconds} s)`);
}
