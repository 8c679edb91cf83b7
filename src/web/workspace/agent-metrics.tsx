import { useState } from 'preact/hooks';
import { agentMetrics, METRIC_WINDOWS, type AgentMetrics, type MetricWindow } from './agents-api';
import { BarChart, type Bar } from './bar-chart';
import { humanize, Status, useLoad, when } from './ui';

const WINDOW_NAMES: Record<MetricWindow, string> = { '24h': 'Last 24 hours', '7d': 'Last 7 days', '30d': 'Last 30 days' };

const percent = (share: number | null): string => (share === null ? '—' : `${Math.round(share * 1000) / 10}%`);
const ms = (value: number | null): string => (value === null ? '—' : value < 10_000 ? `${value} ms` : `${Math.round(value / 1000)} s`);

/** The charts' figures: what each bar shows, from the API's answer as it is. */
function chartsOf(metrics: AgentMetrics): Array<{ id: string; title: string; bars: Bar[] }> {
  return [
    {
      id: 'runs',
      title: 'Runs',
      bars: [
        { label: 'Succeeded', value: metrics.runs - metrics.errors },
        { label: 'Errors', value: metrics.errors },
      ],
    },
    { id: 'actions', title: 'Actions by kind', bars: Object.entries(metrics.actionsByKind).map(([kind, count]) => ({ label: humanize(kind), value: count })) },
    {
      id: 'suggestions',
      title: 'Suggestions',
      bars: [
        { label: 'Pending', value: metrics.suggestions.pending },
        { label: 'Approved', value: metrics.suggestions.approved },
        { label: 'Rejected', value: metrics.suggestions.rejected },
        { label: 'Expired', value: metrics.suggestions.expired },
      ],
    },
  ];
}

/**
 * The agent's metrics over a window the person picks (agentMetrics: 24h, 7d or 30d): headline
 * figures, bar charts with their numbers in tables, outcomes and the model's use. `revision` reads
 * them again after a change on the page.
 */
export function AgentMetricsSection({ agentId, revision }: { agentId: string; revision: number }) {
  const [window, setWindow] = useState<MetricWindow>('7d');
  const metrics = useLoad(() => agentMetrics(agentId, window), [agentId, window, revision]);
  const data = metrics.data;

  return (
    <section class="card metrics" aria-labelledby="agent-metrics-title">
      <div class="section-head">
        <h2 id="agent-metrics-title">Metrics</h2>
        <label class="window">
          Window{' '}
          <select id="metrics-window" value={window} onChange={(e) => setWindow(e.currentTarget.value as MetricWindow)}>
            {METRIC_WINDOWS.map((option) => (
              <option key={option} value={option}>
                {WINDOW_NAMES[option]}
              </option>
            ))}
          </select>
        </label>
      </div>
      {!data ? (
        <Status error={metrics.error} label="Loading metrics…" />
      ) : (
        <div data-window={data.window} id="agent-metrics">
          <dl class="figures">
            <div>
              <dt>Runs</dt>
              <dd data-metric="runs">{data.runs}</dd>
            </div>
            <div>
              <dt>Success rate</dt>
              <dd data-metric="successRate">{percent(data.successRate)}</dd>
            </div>
            <div>
              <dt>Errors</dt>
              <dd data-metric="errors">{data.errors}</dd>
            </div>
            <div>
              <dt>Median run time</dt>
              <dd data-metric="p50LatencyMs">{ms(data.p50LatencyMs)}</dd>
            </div>
            <div>
              <dt>Last run</dt>
              <dd data-metric="lastRunAt">{when(data.lastRunAt)}</dd>
            </div>
          </dl>
          <div class="charts">
            {chartsOf(data).map((chart) => (
              <figure key={chart.id} class="chart-figure" data-chart={chart.id}>
                <figcaption>{chart.title}</figcaption>
                {chart.bars.length === 0 ? (
                  <p class="muted">None in this window.</p>
                ) : (
                  <>
                    <BarChart id={`chart-${chart.id}`} title={`${chart.title}, ${WINDOW_NAMES[data.window].toLowerCase()}`} bars={chart.bars} />
                    {/* Two narrow columns fit a phone as they are: this table does not stack. */}
                    <table class="figures-table" aria-label={`${chart.title} figures`}>
                      <thead>
                        <tr>
                          <th scope="col">{chart.id === 'actions' ? 'Kind' : 'Figure'}</th>
                          <th scope="col">Count</th>
                        </tr>
                      </thead>
                      <tbody>
                        {chart.bars.map((bar) => (
                          <tr key={bar.label}>
                            <td>{bar.label}</td>
                            <td>{bar.value}</td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
                  </>
                )}
              </figure>
            ))}
          </div>
          <div class="metric-details">
            <div>
              <h3>Outcomes</h3>
              <dl class="facts" id="agent-outcomes">
                {Object.entries(data.outcomes).map(([key, value]) => (
                  <Pair key={key} name={key} label={humanize(key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`))} value={String(value)} />
                ))}
              </dl>
            </div>
            <div>
              <h3>Model and approvals</h3>
              <dl class="facts" id="agent-model-usage">
                <Pair name="calls" label="Calls" value={String(data.modelUsage.calls)} />
                <Pair name="failures" label="Failures" value={String(data.modelUsage.failures)} />
                <Pair name="totalTokens" label="Tokens" value={data.modelUsage.totalTokens.toLocaleString('en-US')} />
                <Pair name="approvalRate" label="Approval rate" value={percent(data.suggestions.approvalRate)} />
                <Pair name="approvedAutomatically" label="Approved automatically" value={String(data.suggestions.approvedAutomatically)} />
              </dl>
            </div>
          </div>
        </div>
      )}
    </section>
  );
}

function Pair({ name, label, value }: { name: string; label: string; value: string }) {
  return (
    <>
      <dt>{label}</dt>
      <dd data-metric={name}>{value}</dd>
    </>
  );
}
