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

export const BUDGETS: Record<BudgetedRow, Budget> = {
  post: { gatewayMs: 0.75, dbMs: 0.6, commands: 1.2, writes: 9 },
  get: { gatewayMs: 0.3, dbMs: 0.13, commands: 0.2, writes: 0.1 },
  graphqlOne: { gatewayMs: 0.45, dbMs: 0.13, commands: 0.2, writes: 0.1 },
  graphql: { gatewayMs: 1.0, dbMs: 0.2, commands: 0.4, writes: 0.1 },
};
