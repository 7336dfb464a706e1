import type { mongo } from 'mongoose';
import { databaseCommand } from '../metrics/database';

/**
 * pgw_database_command_duration_seconds from the driver's command monitoring (the client must be made
 * with `monitorCommands: true`, CLIENT_OPTIONS): the driver's own timing, labelled by command name only.
 */
export function observeCommandDurations(client: mongo.MongoClient): void {
  const observe = (ev: { commandName: string; duration: number }) => databaseCommand(ev.commandName).observe(ev.duration / 1000);
  client.on('commandSucceeded', observe);
  client.on('commandFailed', observe);
}
