import { Command, CommanderError, Option } from 'commander';
import { CLI_VERSION } from './api';
import { clockAdvance, clockShow } from './commands/clock';
import { documentsPush } from './commands/documents';
import { eventsTail } from './commands/eventsTail';
import { listen } from './commands/listen';
import { login } from './commands/login';
import { logsTail } from './commands/logsTail';
import { resend } from './commands/resend';
import { reset } from './commands/reset';
import { trigger } from './commands/trigger';
import { EXIT, reportFailure } from './errors';
import { EVENT_TYPES } from './eventTypes';
import { DEFAULT_FORWARD_RETRIES, MAX_FORWARD_RETRIES } from './listen/forwarder';
import { collect } from './overrides';
import { SCENARIO_AMOUNT, SCENARIOS } from './scenarios';

/** The options every command that talks to the gateway takes (resolution order in connection.ts). */
function withConnection(cmd: Command, json = true): Command {
  cmd
    .addOption(new Option('--api-key <key>', 'secret key (else PGW_API_KEY, else the one `pgw login` saved)'))
    .addOption(new Option('--base-url <url>', 'gateway root URL (else PGW_BASE_URL, else the last login, else http://localhost:3000)'));
  if (json) cmd.option('--json', 'JSON output for scripts (one object per line for streams)');
  return cmd;
}

/** Long-running commands stop cleanly on Ctrl-C or a TERM: exit 0 (contract decisions). */
function untilInterrupted(): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(EXIT.ok));
}

export function buildProgram(): Command {
  const program = new Command('pgw')
    .description('Command-line tool of the Angola payment gateway sandbox')
    .version(CLI_VERSION)
    .exitOverride()
    .showHelpAfterError('(run `pgw --help` for usage)');

  withConnection(program.command('login').description('check a secret key and save it for this server (config dir, mode 0600)')).action(login);

  withConnection(
    program
      .command('listen')
      .description("forward the account's events to a local URL, signed with a local secret printed first")
      .requiredOption('--forward-to <url>', 'where to POST each event, e.g. http://127.0.0.1:4242/webhooks')
      .option('--events <types>', `comma-separated event types (default all): ${Object.keys(EVENT_TYPES).join(', ')}`)
      .option('--retries <n>', `more attempts for a forward without a 2xx, waiting 1 s, 2 s, 4 s… (default ${DEFAULT_FORWARD_RETRIES}, at most ${MAX_FORWARD_RETRIES})`)
      .option('--chaos <settings>', 'test the receiver: duplicate=P,reorder=P,bad_signature=P,stale_timestamp=P (0 to 1),delay_ms=MIN-MAX,seed=N'),
  ).action((opts) => {
    untilInterrupted();
    return listen(opts);
  });

  withConnection(
    program
      .command('trigger')
      .description('run a sandbox scenario to its final state')
      .argument('<scenario>', Object.keys(SCENARIOS).join(', '))
      .option('--amount <aoa>', `amount in AOA, a whole number (default ${SCENARIO_AMOUNT})`)
      .option('--mobile <number>', "express customer's mobile, 9 and 8 digits (default: the scenario's sandbox number)")
      .option('--metadata <key=value>', 'metadata of the payment intent; repeat for more keys', collect, []),
  ).action(trigger);

  withConnection(
    program
      .command('resend')
      .description('send an event again: to every running `pgw listen` of this account, and to the endpoints that had a delivery of it')
      .argument('<event_id>', 'evt_…')
      .option('--endpoint <id>', 'only this webhook endpoint (whe_…), no listener')
      .option('--listeners-only', 'only the running `pgw listen` processes, no endpoint'),
  ).action(resend);

  // `pgw tail` is `pgw events tail` (what integrators type first).
  const events = program.command('events').description("the account's events");
  for (const [parent, name, description] of [
    [events, 'tail', 'print events as they happen'],
    [program, 'tail', 'print events as they happen (the same as `pgw events tail`)'],
  ] as const) {
    withConnection(parent.command(name).description(description).option('--events <types>', 'comma-separated event types (default all)')).action((opts) => {
      untilInterrupted();
      return eventsTail(opts);
    });
  }

  const logs = program.command('logs').description('request logs of this key');
  withConnection(logs.command('tail').description('print requests made with this key as they are logged')).action((opts) => {
    untilInterrupted();
    return logsTail(opts);
  });

  // `pgw clock` alone shows the clock (its default subcommand).
  const clock = program.command('clock').description("the account's sandbox clock: `pgw clock` shows it, `pgw clock advance <duration>` moves it");
  withConnection(clock.command('show', { isDefault: true }).description("show the account's sandbox clock and how far ahead of real time it is")).action(clockShow);
  withConnection(
    clock.command('advance').description('move the clock forward; due timers fire').argument('<duration>', '90s, 30m, 72h, 2d, 1h30m or seconds'),
  ).action(clockAdvance);

  const documents = program.command('documents').description("the account's trusted GraphQL documents");
  withConnection(
    documents
      .command('push')
      .description("register a manifest's operations as trusted documents (Apollo's persisted query manifest or graphql-codegen's persisted-documents.json)")
      .argument('<file>', 'the manifest file'),
  ).action(documentsPush);

  withConnection(
    program
      .command('reset')
      .description("delete the account's test data and set its clock back (keys and webhook endpoints stay); asks first")
      .option('-y, --yes', 'do not ask for confirmation'),
  ).action(reset);

  return program;
}

/** Runs pgw and returns its exit code: 0 success, 1 an API error (code on stderr), 2 a usage error. */
export async function run(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version asked for are successes; every other complaint of the parser is a usage error
      // (it has already printed its message).
      return err.code === 'commander.helpDisplayed' || err.code === 'commander.version' ? EXIT.ok : EXIT.usage;
    }
    return reportFailure(err, (line) => process.stderr.write(`${line}\n`));
  }
}

process.exitCode = await run(process.argv);
