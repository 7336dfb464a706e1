import { useId, useState } from 'react';
import { BarChart } from './BarChart';
import { formatValue, type ChartSpec } from './charts';

/**
 * One chart with its heading, its legend, and "Show as table": a real table of the numbers the bars are
 * drawn from (the same spec), for whoever cannot see the chart, or wants the exact values.
 */
export function ChartCard({ spec }: { spec: ChartSpec }) {
  const [open, setOpen] = useState(false);
  const tableId = useId();
  const plotted = spec.series.filter((s) => s.plotted);
  return (
    <section className="card chart" aria-labelledby={`${spec.id}-title`} data-chart={spec.id}>
      <h2 id={`${spec.id}-title`}>{spec.title}</h2>
      <BarChart spec={spec} />
      {spec.note && <p className="chart-note muted">{spec.note}</p>}
      {plotted.length > 1 && (
        <ul className="legend" aria-label={`${spec.title}: legend`}>
          {plotted.map((s) => (
            <li key={s.key}>
              <span className={`swatch series-${s.key.toLowerCase()}`} aria-hidden="true" />
              {s.label}
            </li>
          ))}
        </ul>
      )}
      <button type="button" className="secondary" aria-expanded={open} aria-controls={tableId} onClick={() => setOpen((o) => !o)}>
        {open ? 'Hide table' : 'Show as table'}
      </button>
      {/* A wide table scrolls inside its own box (focusable, so a keyboard can scroll it), never the page. */}
      <div id={tableId} className="table-scroll" hidden={!open} tabIndex={open ? 0 : undefined} role="region" aria-label={`${spec.caption} (table)`}>
        <table className="data chart-table">
          <caption>{spec.caption}</caption>
          <thead>
            <tr>
              <th scope="col">{spec.categoryHeader}</th>
              {spec.series.map((s) => (
                <th scope="col" key={s.key}>
                  {s.label}
                </th>
              ))}
              {spec.total && <th scope="col">Total</th>}
            </tr>
          </thead>
          <tbody>
            {spec.categories.map((c, i) => (
              <tr key={c.label}>
                <th scope="row" className="nowrap">
                  {c.label}
                </th>
                {spec.series.map((s) => (
                  <td key={s.key} className="num">
                    {formatValue(s.values[i] ?? null, s.unit)}
                  </td>
                ))}
                {spec.total && <td className="num">{formatValue(spec.series.reduce((n, s) => n + (s.values[i] ?? 0), 0), 'count')}</td>}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
