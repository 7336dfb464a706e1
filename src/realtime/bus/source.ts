import type { EventChannel } from './eventChannel';
import type { StatusChannel, StatusWatch } from './statusChannel';

export type BusMode = 'change_stream' | 'poll';

/** Where other processes' events and status changes come from: one a process (docs/decisions/0004). */
export interface Source extends StatusWatch {
  mode: BusMode;
  stop(): Promise<void>;
  statusStreamOpen?(): boolean;
}

/** The channels a source publishes into. */
export interface Channels {
  events: EventChannel;
  statuses: StatusChannel;
}
