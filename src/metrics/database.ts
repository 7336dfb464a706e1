import { childCache, HistogramCells } from './cells';
import { COMMAND_BUCKETS, register } from './registry';

const commandDurations = register(
  new HistogramCells('pgw_database_command_duration_seconds', 'Database commands as the driver timed them (sent to reply), by command name; failures included.', ['command'], COMMAND_BUCKETS),
);

/** By the driver's command name only (find, insert, update, aggregate, …): never a collection or a filter. */
export const databaseCommand = childCache((command: string) => commandDurations.child({ command }));
