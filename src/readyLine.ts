/**
 * The one human line `npm start` and `npm run dev` print once the gateway serves: where to click first.
 * The addresses are PUBLIC_BASE_URL's (or http://localhost:<the port served>), the ones a browser uses.
 *
 * Written on standard error, not standard output: stdout is the JSON log stream (pino), which log
 * shippers and `| jq` / `| pino-pretty` read line by line as JSON; stderr is where a terminal shows a
 * person what a program says about itself. Not written when LOG_LEVEL=silent (which the test runner
 * sets), so quiet runs stay quiet.
 */
export function readyLine(publicBaseUrl: string): string {
  const base = publicBaseUrl.replace(/\/+$/, '');
  return `Gateway ready: dashboard ${base}/dashboard · docs ${base}/docs · GraphQL ${base}/graphql`;
}

export function printReadyLine(publicBaseUrl: string, logLevel: string, write: (text: string) => void = (t) => process.stderr.write(t)): void {
  if (logLevel !== 'silent') write(`${readyLine(publicBaseUrl)}\n`);
}
