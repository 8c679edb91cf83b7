import type { PsaProvider } from '../providers/crm-client';

/**
 * The delivery record a PSA makes from a won deal's latest proposal, by PSA: the first is the
 * default. ConnectWise: a project or an agreement; Autotask: a contract or a project; HaloPSA: a
 * contract or a ticket. Free of server code: the workspace's settings form
 * (src/web/workspace/integration-settings.tsx) offers exactly these; stage-map.ts validates with them.
 */
export const DELIVERY_RECORDS: Record<PsaProvider, readonly [string, ...string[]]> = {
  connectwise: ['project', 'agreement'],
  autotask: ['contract', 'project'],
  halopsa: ['contract', 'ticket'],
};
