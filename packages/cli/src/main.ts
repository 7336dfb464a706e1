import { Command, CommanderError, Option } from 'commander';
import { CLI_VERSION } from './api';
import { clockAdvance } from './commands/clock';
import { eventsTail } from './commands/eventsTail';
import { listen } from './commands/listen';
import { login } from './commands/login';
import { logsTail } from './commands/logsTail';
import { reset } from './commands/reset';
import { trigger } from './commands/trigger';
import { EXIT, reportFailure } from './errors';
import { EVENT_TYPES } from './eventTypes';
import { SCENARIOS } from './scenarios';

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
      .option('--events <types>', `comma-separated event types (default all): ${Object.keys(EVENT_TYPES).join(', ')}`),
  ).action((opts) => {
    untilInterrupted();
    return listen(opts);
  });

  withConnection(
    program
      .command('trigger')
      .description('run a sandbox scenario to its final state')
      .argument('<scenario>', Object.keys(SCENARIOS).join(', ')),
  ).action(trigger);

  const events = program.command('events').description("the account's events");
  withConnection(
    events.command('tail').description('print events as they happen').option('--events <types>', 'comma-separated event types (default all)'),
  ).action((opts) => {
    untilInterrupted();
    return eventsTail(opts);
  });

  const logs = program.command('logs').description('request logs of this key');
  withConnection(logs.command('tail').description('print requests made with this key as they are logged')).action((opts) => {
    untilInterrupted();
    return logsTail(opts);
  });

  const clock = program.command('clock').description("the account's sandbox clock");
  withConnection(
    clock.command('advance').description('move the clock forward; due timers fire').argument('<duration>', '90s, 30m, 72h, 2d, 1h30m or seconds'),
  ).action(clockAdvance);

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
