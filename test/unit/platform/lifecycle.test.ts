import { describe, expect, it } from 'vitest';
import { startServices, type BackgroundService } from '../../../src/platform/lifecycle';
import { loadConfig } from '../../../src/config';

/** A failed start leaves nothing running: the services that started are stopped again, in reverse. */
describe('startServices', () => {
  const calls: string[] = [];
  const service = (name: string, fails = false): BackgroundService => ({
    name,
    start: async () => {
      calls.push(`start ${name}`);
      if (fails) throw new Error(`${name} cannot start`);
    },
    stop: async () => {
      calls.push(`stop ${name}`);
    },
  });

  it('stops those that started, in reverse, and throws the failure; the rest never start', async () => {
    calls.length = 0;
    const run = startServices([service('a'), service('b'), service('c', true), service('d')], { config: loadConfig({}) });
    await expect(run).rejects.toThrow('c cannot start');
    expect(calls).toEqual(['start a', 'start b', 'start c', 'stop b', 'stop a']);
  });

  it('starts every one in order when none fails, and stops none', async () => {
    calls.length = 0;
    await startServices([service('a'), service('b')], { config: loadConfig({}) });
    expect(calls).toEqual(['start a', 'start b']);
  });
});
