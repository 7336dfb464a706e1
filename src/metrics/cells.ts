
/**
 * Counters and histograms whose children are plain numbers: prom-client's own build a labels object and a
 * hash on every observation, while here a child is made once per label set and an observation is an index and
 * two additions. prom-client still formats, serves and aggregates them. More: docs/decisions/notes/edge.md,
 * "Metric cells".
 */

type Labels = Record<string, string>;

/** What prom-client's Registry reads from a metric's `get()` (its typings name an enum it never uses). */
export interface MetricJson {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  values: Array<{ metricName?: string; labels: Labels; value: number }>;
}

export interface CounterChild {
  inc(by?: number): void;
}

export class CounterCells<L extends string> {
  readonly type = 'counter';
  readonly aggregator = 'sum';
  private readonly children: Array<{ labels: Labels; value: number }> = [];

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly L[],
  ) {}

  /** A new child for this label set: call once per set and keep it. */
  child(labels: Record<L, string>): CounterChild {
    const cell = { labels: pick(labels, this.labelNames), value: 0 };
    this.children.push(cell);
    return { inc: (by = 1) => void (cell.value += by) };
  }

  get(): Promise<MetricJson> {
    return Promise.resolve({
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values: this.children.map((c) => ({ labels: { ...c.labels }, value: c.value })),
    });
  }

  reset(): void {
    for (const c of this.children) c.value = 0;
  }
}

export interface HistogramChild {
  observe(seconds: number): void;
}

export class HistogramCells<L extends string> {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly children: Array<{ labels: Labels; counts: Float64Array; sum: number; count: number }> = [];

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly L[],
    /** Upper bounds, ascending; +Inf is added. */
    private readonly buckets: readonly number[],
  ) {}

  child(labels: Record<L, string>): HistogramChild {
    const cell = { labels: pick(labels, this.labelNames), counts: new Float64Array(this.buckets.length + 1), sum: 0, count: 0 };
    this.children.push(cell);
    const bounds = this.buckets;
    return {
      observe: (value) => {
        let i = 0;
        while (i < bounds.length && value > bounds[i]!) i++;
        cell.counts[i]! += 1;
        cell.sum += value;
        cell.count += 1;
      },
    };
  }

  get(): Promise<MetricJson> {
    const values: MetricJson['values'] = [];
    for (const c of this.children) {
      let cumulative = 0;
      for (let i = 0; i <= this.buckets.length; i++) {
        cumulative += c.counts[i]!;
        const le = i < this.buckets.length ? String(this.buckets[i]) : '+Inf';
        values.push({ metricName: `${this.name}_bucket`, labels: { ...c.labels, le }, value: cumulative });
      }
      values.push({ metricName: `${this.name}_sum`, labels: { ...c.labels }, value: c.sum });
      values.push({ metricName: `${this.name}_count`, labels: { ...c.labels }, value: c.count });
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values });
  }

  reset(): void {
    for (const c of this.children) {
      c.counts.fill(0);
      c.sum = 0;
      c.count = 0;
    }
  }
}

function pick<L extends string>(labels: Record<L, string>, names: readonly L[]): Labels {
  return Object.fromEntries(names.map((n) => [n, labels[n]]));
}

/** One child per key, made on first use (a bounded set of keys: operationIds, statuses, command names). */
export function childCache<K, C>(make: (key: K) => C): (key: K) => C {
  const cache = new Map<K, C>();
  return (key) => {
    let c = cache.get(key);
    if (c === undefined) cache.set(key, (c = make(key)));
    return c;
  };
}
