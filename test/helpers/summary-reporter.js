/**
 * Prints jest's totals as a plain `jest: N passed, N failed` line (the form CI tools read), and
 * writes them to $JEST_SUMMARY_FILE when set so .ci/run can add the smoke test's count.
 */
const { writeFileSync } = require('node:fs');

class SummaryReporter {
  onRunComplete(_contexts, results) {
    const line =
      `jest: ${results.numPassedTests} passed, ${results.numFailedTests} failed` + (results.numPendingTests ? `, ${results.numPendingTests} skipped` : '');
    process.stdout.write(`${line}\n`);
    if (process.env.JEST_SUMMARY_FILE) {
      writeFileSync(process.env.JEST_SUMMARY_FILE, JSON.stringify({ passed: results.numPassedTests, failed: results.numFailedTests }));
    }
  }
}

module.exports = SummaryReporter;
