/**
 * Tests wait for conditions, never for a length of time. These bounds only stop a test that would
 * otherwise hang: on an idle machine the conditions hold in milliseconds, and the bounds are wide
 * enough that a machine busy with other work (CI beside two CPU-bound processes) makes a test
 * slower, never red. None of them measures speed: that is the benchmark's job (docs/TESTING.md).
 */

/** How long `eventually` and the other waits poll a condition before they fail with its last error. */
export const CONDITION_TIMEOUT_MS = 60_000;

/** How long one browser step (a navigation, a click, an element to appear) may take. */
export const BROWSER_STEP_TIMEOUT_MS = 60_000;

/**
 * Jest's bound on a whole test (jest.config.js sets the same number): above the others, so a test
 * that waits in vain fails with the condition it waited for, not with "Exceeded timeout".
 */
export const TEST_TIMEOUT_MS = 300_000;
