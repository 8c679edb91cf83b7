/**
 * A horizontal bar chart as SVG: one bar per figure, labels left, values right. It is drawn in a
 * viewBox and scales to its box's width, so it fits a 390 px phone without scrolling. To assistive
 * technology it is one image whose name says every figure; the caller shows the same numbers in a
 * table beside it.
 */
export interface Bar {
  label: string;
  value: number;
}

const WIDTH = 400;
const ROW = 28;
const LABEL = 140;
const VALUE = 50;

export function BarChart({ title, bars, id }: { title: string; bars: Bar[]; id: string }) {
  const max = Math.max(1, ...bars.map((bar) => bar.value));
  const height = Math.max(1, bars.length) * ROW + 8;
  const summary = `${title}: ${bars.length ? bars.map((bar) => `${bar.label} ${bar.value}`).join(', ') : 'nothing yet'}.`;
  const track = WIDTH - LABEL - VALUE;
  return (
    <div class="chart-box">
      <svg id={id} role="img" aria-label={summary} viewBox={`0 0 ${WIDTH} ${height}`} width={WIDTH} height={height} class="bar-chart">
        {bars.map((bar, index) => {
          const y = index * ROW + 4;
          const length = bar.value > 0 ? Math.max(3, (bar.value / max) * track) : 0;
          return (
            <g key={bar.label}>
              <text x={LABEL - 10} y={y + ROW / 2} text-anchor="end" dominant-baseline="middle" class="bar-label">
                {bar.label}
              </text>
              <rect x={LABEL} y={y + 5} width={track} height={ROW - 12} class="bar-track" rx="3" />
              <rect x={LABEL} y={y + 5} width={length} height={ROW - 12} class={`bar bar-${index % 4}`} rx="3" />
              <text x={LABEL + track + 10} y={y + ROW / 2} dominant-baseline="middle" class="bar-value">
                {bar.value}
              </text>
            </g>
          );
        })}
      </svg>
    </div>
  );
}
