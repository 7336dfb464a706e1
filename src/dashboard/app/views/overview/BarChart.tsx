import { useEffect, useState } from 'react';
import { scaleBand, scaleLinear } from '@visx/scale';
import { formatAmount } from '../../format';
import { formatValue, NO_DATA, type ChartSpec, type Unit } from './charts';

const HEIGHT = 200;
const MARGIN = { top: 10, right: 8, bottom: 26, left: 52 };
/** Room one axis label needs ("14:00", "Nov 25"): fewer labels on a phone than on a desk. */
const TICK_ROOM_PX = 46;
/** Room "no data" needs across a bar's band: on charts with few, wide bars (the methods) it is written there. */
const NO_DATA_ROOM_PX = 44;

/** Axis labels: short ("1.2M AOA" would not fit), the table has the exact numbers. */
function axisLabel(value: number, unit: Unit): string {
  if (unit === 'aoa') return value >= 1000 ? new Intl.NumberFormat('en-US', { notation: 'compact' }).format(value) : formatAmount(value, '').trim();
  if (unit === 'percent') return `${Math.round(value * 100)}\u00a0%`;
  return formatValue(value, unit);
}

/**
 * The width of the element the returned ref is set on, followed as it changes (a phone turned, a window
 * resized, the grid going from two columns to one). Read at each change, not debounced: the chart is cheap.
 */
function useWidth(): [(node: HTMLDivElement | null) => void, number] {
  const [node, setNode] = useState<HTMLDivElement | null>(null);
  const [width, setWidth] = useState(0);
  useEffect(() => {
    if (!node) return;
    const observer = new ResizeObserver(([entry]) => setWidth(Math.floor(entry?.contentRect.width ?? 0)));
    observer.observe(node);
    return () => observer.disconnect();
  }, [node]);
  return [setNode, width];
}

/**
 * The chart's SVG: bars per category, stacked when the spec says so, drawn at the width of its container
 * (a phone's 390 px as well as a desk's screen). Colours come from CSS (.series-<key>), so dark mode and
 * the palette live in the stylesheet. role="img" named by the caption and headline: a screen reader hears one sentence
 * with the headline numbers and can open the table for the rest.
 */
export function BarChart({ spec }: { spec: ChartSpec }) {
  const [parentRef, width] = useWidth();
  const plotted = spec.series.filter((s) => s.plotted);
  const innerWidth = Math.max(0, width - MARGIN.left - MARGIN.right);
  const innerHeight = HEIGHT - MARGIN.top - MARGIN.bottom;

  const indices = spec.categories.map((_c, i) => i);
  const x = scaleBand<number>({ domain: indices, range: [0, innerWidth], padding: 0.25 });
  const totals = indices.map((i) =>
    spec.stacked ? plotted.reduce((n, s) => n + (s.values[i] ?? 0), 0) : Math.max(0, ...plotted.map((s) => s.values[i] ?? 0)),
  );
  const max = spec.unit === 'percent' ? 1 : Math.max(1, ...totals);
  const y = scaleLinear<number>({ domain: [0, max], range: [innerHeight, 0], nice: spec.unit !== 'percent' });
  const every = Math.max(1, Math.ceil(spec.categories.length / Math.max(1, Math.floor(innerWidth / TICK_ROOM_PX))));

  return (
    <div ref={parentRef} className="chart-canvas">
      <svg role="img" aria-label={`${spec.caption}: ${spec.headline}`} width={width} height={HEIGHT} className="chart-svg">
        <g transform={`translate(${MARGIN.left},${MARGIN.top})`}>
          {y.ticks(4).map((t) => (
            <line key={t} className="chart-grid" x1={0} x2={innerWidth} y1={y(t)} y2={y(t)} />
          ))}
          {indices.map((i) => {
            let base = 0;
            return plotted.map((s) => {
              const value = s.values[i];
              if (value == null || value <= 0) return null;
              const from = spec.stacked ? base : 0;
              base = from + value;
              const top = y(from + value);
              return (
                <rect
                  key={`${i}-${s.key}`}
                  className={`chart-bar series-${s.key.toLowerCase()}`}
                  x={x(i)}
                  width={x.bandwidth()}
                  y={top}
                  // At least 1 px: a bucket with one payment among hundreds still shows.
                  height={Math.max(1, y(from) - top)}
                />
              );
            });
          })}
          {/* A category with nothing to measure says so: an empty band would read as 0 %. */}
          {x.bandwidth() >= NO_DATA_ROOM_PX &&
            indices
              .filter((i) => plotted.every((s) => s.values[i] == null))
              .map((i) => (
                <text key={`none-${i}`} className="chart-no-data" x={(x(i) ?? 0) + x.bandwidth() / 2} y={innerHeight - 8} textAnchor="middle">
                  {NO_DATA}
                </text>
              ))}
          {/* The axes: drawn here rather than by @visx/axis, whose text layout pulls in a CSS calc() evaluator (~20 kB). */}
          <line className="chart-axis" x1={0} x2={0} y1={0} y2={innerHeight} />
          {y.ticks(4).map((t) => (
            <text key={t} className="chart-tick" x={-6} y={y(t)} dy="0.32em" textAnchor="end">
              {axisLabel(t, spec.unit)}
            </text>
          ))}
          <line className="chart-axis" x1={0} x2={innerWidth} y1={innerHeight} y2={innerHeight} />
          {indices
            .filter((i) => i % every === 0)
            .map((i) => (
              <text key={i} className="chart-tick" x={(x(i) ?? 0) + x.bandwidth() / 2} y={innerHeight + 16} textAnchor="middle">
                {spec.categories[i]?.tick}
              </text>
            ))}
        </g>
      </svg>
    </div>
  );
}
