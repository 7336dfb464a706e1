/**
 * What each hot request may cost (issue 60), held by `npm run bench`: bench/report.ts's evaluateTargets
 * gives every row and measure a PASS/FAIL line. What each measure is: bench/README.md, "Budgets per
 * request"; the figures behind them: its Targets.
 */
export interface Budget {
  /** Gateway CPU ms per request. */
  gatewayMs: number;
  /** Database process CPU ms per request. */
  dbMs: number;
  /** Database commands per request (serverStatus `metrics.commands`). */
  commands: number;
  /** Documents written per request (serverStatus `opcounters` insert + update + delete). */
  writes: number;
}

export type BudgetedRow = 'post' | 'get' | 'graphqlOne' | 'graphql';

// Set from this tree's alternated runs (bench/README.md, "Budgets per request"): about a tenth above the
// highest of three runs for CPU, which moves by that much from run to run, and the counts a little above
// what the design sends, so that a new write or command on the path fails its line. GET's CPU lowered
// after the prototype change (HISTORY.md, "Issue 60, second pass": 0.14–0.21 ms in five runs).
export const BUDGETS: Record<BudgetedRow, Budget> = {
  post: { gatewayMs: 0.8, dbMs: 0.55, commands: 0.9, writes: 6.5 },
  get: { gatewayMs: 0.25, dbMs: 0.1, commands: 0.12, writes: 0.05 },
  graphqlOne: { gatewayMs: 0.43, dbMs: 0.1, commands: 0.12, writes: 0.05 },
  graphql: { gatewayMs: 0.85, dbMs: 0.16, commands: 0.2, writes: 0.05 },
};
