import type { Status } from './integrations-api';
import { humanize } from './ui';

/** An integration's status as a badge whose words say it (colour only repeats them). */
export function IntegrationStatus({ status }: { status: Status }) {
  return <span class={`integration-status status-${status}`}>{humanize(status)}</span>;
}
