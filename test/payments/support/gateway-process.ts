/**
 * A gateway process for the multi-process tests: what src/main.ts does (config from the environment,
 * startGateway, which starts the payments core jobs), plus a
 * `test.count` timer kind. Prints one JSON line `{"ready": "<url>"}` when it serves requests.
 */
import mongoose from 'mongoose';
import { loadConfig } from '../../../src/config';
import type { TimerHandler } from '../../../src/platform/timers/timerService';
import { startGateway } from '../../../src/server';

// A timer kind for the tests only: every run leaves a row, so "fired exactly once" can be counted.
const countRuns: TimerHandler = async (timer) => {
  await mongoose.connection.collection('timer_test_runs').insertOne({ timer_id: timer.id, pid: process.pid, at: new Date() });
  const ms = Number(timer.payload.sleep_ms ?? 0);
  // A handler that stays busy this long is the behaviour under test (runs and clock advances that
  // overlap it), not a wait for something.
  if (ms > 0) await new Promise((r) => setTimeout(r, ms));
};

const config = loadConfig();
// Registered before the gateway's poller starts: a restarted process may find such timers due at once.
const gateway = await startGateway(config, { register: (runtime) => runtime.timers.register('test.count', countRuns) });
process.stdout.write(JSON.stringify({ ready: gateway.url }) + '\n');

const shutdown = () => {
  void gateway.close().finally(() => process.exit(0));
};
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
