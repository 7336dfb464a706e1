import type { BackgroundService } from '../../platform/lifecycle';
import { flushRequestLogs } from './requestLogService';

/** Writes the request log entries still queued before the database closes. */
export const requestLogService: BackgroundService = {
  name: 'request-log',
  start() {},
  async stop() {
    await flushRequestLogs();
  },
};
