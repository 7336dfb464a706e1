import { constructEvent } from '@pgw/client';
import { describe, expect, it } from 'vitest';
import { readmeBlock } from '../../../test/examples/readmeSnippets';
import { createAccount } from '../../../test/support/accounts';
import { usePgwGateway, useReceiver } from './support/gateway';
import { runPgw } from './support/pgw';

const gw = usePgwGateway();
const receiverOf = useReceiver();

/**
 * The README's `pgw (CLI)` block, command by command, through `npx pgw` from the repository root. Only
 * the placeholders change: the key, the receiver's URL, and the server (PGW_BASE_URL, as `npm start`
 * would serve on http://localhost:3000).
 */
describe('README "pgw (CLI)": the first run works as written', () => {
  it('login, listen --forward-to, trigger express.succeeded: the receiver gets both events, verifiable', async () => {
    const receiver = receiverOf();
    const account = await createAccount(gw.baseUrl);
    const env = { PGW_BASE_URL: gw.baseUrl };
    const commands = readmeBlock('### pgw (CLI)', 'sh')
      .split('\n')
      .filter((l) => l.trim() !== '' && !l.trim().startsWith('#'))
      .map((l) => l.replace('sk_test_…', account.sk).replace('http://127.0.0.1:4242/webhooks', receiver.url));
    expect(commands.map((c) => c.split(' ').slice(0, 3).join(' '))).toEqual(['npx pgw login', 'npx pgw listen', 'npx pgw trigger']);

    let secret = '';
    let intentLine = '';
    for (const command of commands) {
      const args = command.split(/\s+/).slice(2);
      if (args[0] === 'listen') {
        const p = gw.start(args, env, { npx: true });
        secret = /whsec_[0-9a-f]+/.exec(await p.line(() => true))![0];
      } else {
        const res = await runPgw(args, { ...gw.config.env, ...env }, { npx: true });
        expect(res.code, `${command}\n${res.stderr}`).toBe(0);
        expect(res.stdout + res.stderr).not.toContain(account.sk);
        intentLine = res.stdout;
      }
    }
    const payment = /pay_\w+/.exec(intentLine)![0];
    await receiver.until((r) => r.some((d) => d.event.type === 'payment.succeeded'));
    expect(receiver.received.map((d) => [d.event.type, d.event.data.id])).toEqual([
      ['payment.created', payment],
      ['payment.succeeded', payment],
    ]);
    for (const d of receiver.received) constructEvent(d.body, d.headers['service-signature'] as string, secret);
  }, 120_000); // several spawned CLIs on a loaded 2-core machine: a bound on a hang, not a timing check
});
