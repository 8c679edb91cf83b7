// Types of scripts/build-web.js (plain JavaScript because it runs before anything is compiled).
/** dist/web/manifest.json, from the root: the hashed names of the workspace's script and stylesheet. */
export const MANIFEST: string;
/** Why the workspace bundle must be made again, or undefined when it is up to date. */
export function webStaleReason(root?: string): string | undefined;
/** Bundles src/web/workspace into dist/web (always, or only when stale). Returns whether it bundled. */
export function buildWeb(options?: { always?: boolean; root?: string }): boolean;
