import { UsageError } from './errors';
// The contract's Metadata limits and mobile pattern (openapi.yaml, generated), checked before any call.
import { METADATA_LIMITS, MOBILE_PATTERN } from './generated/requestLimits';
import { SCENARIO_AMOUNT, SCENARIOS, SUCCEEDING_MOBILE, type Scenario } from './scenarios';

/** What `pgw trigger` may change in the payment it makes: `--amount`, `--mobile`, `--metadata k=v`. */
export interface TriggerOverrides {
  amount: number;
  /** The express customer's mobile (null: the scenario's own, or none for a reference). */
  mobile: string | null;
  metadata: Record<string, string> | null;
}

/** The sandbox numbers that pick an outcome (spec, "Sandbox scenarios"), by the scenario they make. */
function scenarioOfMobile(mobile: string): string | null {
  for (const [name, s] of Object.entries(SCENARIOS)) {
    if ('express' in s.pay && s.pay.express === mobile && s.pay.express !== SUCCEEDING_MOBILE) return name;
  }
  return null;
}

/**
 * Checks the override flags against the scenario and the contract, before anything is created, so that a
 * mistake is a usage error (exit 2) naming the flag, not a half-made scenario.
 */
export function parseOverrides(name: string, scenario: Scenario, opts: { amount?: string; mobile?: string; metadata?: string[] }): TriggerOverrides {
  let amount = SCENARIO_AMOUNT;
  if (opts.amount !== undefined) {
    if (!/^\d+$/.test(opts.amount.trim()) || Number(opts.amount) < 1 || !Number.isSafeInteger(Number(opts.amount))) {
      throw new UsageError(`--amount must be a whole number of AOA (no decimals, no separators), got '${opts.amount}'`);
    }
    amount = Number(opts.amount);
  }

  let mobile: string | null = null;
  if (opts.mobile !== undefined) {
    mobile = opts.mobile.trim();
    if (!MOBILE_PATTERN.test(mobile)) throw new UsageError(`--mobile must be 9 followed by 8 digits (e.g. 923000000), got '${opts.mobile}'`);
    const pay = scenario.pay;
    if ('reference' in pay) throw new UsageError(`--mobile is for express payments; ${name} makes a reference payment`);
    const own = 'express' in pay ? pay.express : pay.checkout;
    const picks = scenarioOfMobile(mobile);
    if (own !== SUCCEEDING_MOBILE && mobile !== own) {
      throw new UsageError(`${name} is the outcome of the sandbox number ${own}: --mobile cannot change it (any other number succeeds)`);
    }
    if (picks && picks !== name) {
      throw new UsageError(`--mobile ${mobile} is the sandbox number of ${picks} (${SCENARIOS[picks]!.description}); run \`pgw trigger ${picks}\` or give another number`);
    }
  }

  let metadata: Record<string, string> | null = null;
  if (opts.metadata && opts.metadata.length > 0) {
    if ('checkout' in scenario.pay) throw new UsageError(`--metadata: ${name} pays a checkout session, whose payment takes no metadata`);
    metadata = {};
    for (const pair of opts.metadata) {
      const eq = pair.indexOf('=');
      if (eq <= 0) throw new UsageError(`--metadata must be key=value, got '${pair}'`);
      const key = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      if (key.length > METADATA_LIMITS.maxKeyLength) throw new UsageError(`--metadata key '${key}' is longer than ${METADATA_LIMITS.maxKeyLength} characters`);
      if (/[$.]/.test(key)) throw new UsageError(`--metadata key '${key}' must not contain '$' or '.'`);
      if ((METADATA_LIMITS.reservedKeys as readonly string[]).includes(key)) throw new UsageError(`--metadata key '${key}' is reserved for the gateway`);
      if (value.length > METADATA_LIMITS.maxValueLength) throw new UsageError(`--metadata value of '${key}' is longer than ${METADATA_LIMITS.maxValueLength} characters`);
      if (key in metadata) throw new UsageError(`--metadata key '${key}' is given twice`);
      metadata[key] = value;
    }
    if (Object.keys(metadata).length > METADATA_LIMITS.maxKeys) throw new UsageError(`--metadata: at most ${METADATA_LIMITS.maxKeys} keys`);
  }
  return { amount, mobile, metadata };
}

/** Commander's collector for a repeated flag. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}
