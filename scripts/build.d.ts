// Types of scripts/build.js (plain JavaScript because it runs before anything is compiled).
export const ROOT: string;
/** Why dist/ must be compiled again for the tsconfig `project`, or undefined when it is up to date. */
export function staleReason(project?: string, root?: string): string | undefined;
/** Outputs in dist/ (paths from the root) whose source was removed or moved; build() deletes them. */
export function orphanedOutputs(project?: string, root?: string): string[];
/** Compiles `project` (always, or only when stale). Returns whether it compiled. */
export function build(project?: string, options?: { always?: boolean; quiet?: boolean; root?: string }): boolean;
