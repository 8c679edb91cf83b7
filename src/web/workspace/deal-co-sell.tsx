import { useState } from 'preact/hooks';
import { registerForCoSell, type DealDetail, type Eligibility } from './deal';
import { humanize, when } from './ui';

interface Props {
  deal: DealDetail;
  eligibility: Eligibility;
  onChanged(message: string): Promise<void>;
}

/**
 * Co-sell: the registration as the API holds it, or whether the deal may be registered now and,
 * when not, every rule it fails in the API's words (dealCoSellEligibility) before the button is
 * offered. After registering, the page reads the deal again and shows the status the API gives.
 */
export function DealCoSell({ deal, eligibility, onChanged }: Props) {
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const coSell = deal.coSell;

  const register = async () => {
    setBusy(true);
    try {
      await registerForCoSell(deal.id);
      setProblem(null);
      await onChanged(`Registered ${deal.name} for co-sell.`);
      document.getElementById('co-sell-title')?.focus();
    } catch (error) {
      setProblem((error as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="card" aria-labelledby="co-sell-title">
      <h2 id="co-sell-title" tabIndex={-1}>
        Co-sell
      </h2>
      {coSell ? (
        <dl class="facts" id="co-sell">
          <dt>Status</dt>
          <dd data-fact="co-sell-status">{humanize(coSell.status)}</dd>
          <dt>Status reason</dt>
          <dd data-fact="co-sell-reason">{coSell.statusReason ?? '—'}</dd>
          <dt>Referral id</dt>
          <dd data-fact="co-sell-referral">{coSell.referralId ?? '—'}</dd>
          <dt>Through</dt>
          <dd data-fact="co-sell-integration">
            <a href={`/integrations/${coSell.integrationId}`}>{coSell.integrationId}</a>
          </dd>
          <dt>Submitted</dt>
          <dd data-fact="co-sell-submitted">{when(coSell.submittedAt)}</dd>
          <dt>Decided</dt>
          <dd data-fact="co-sell-decided">{when(coSell.decidedAt)}</dd>
        </dl>
      ) : (
        <>
          <p>Not registered for co-sell with Microsoft.</p>
          {eligibility.eligible ? (
            <p id="co-sell-eligibility" class="eligible">
              This deal can be registered now.
            </p>
          ) : (
            <div id="co-sell-eligibility">
              <p>It cannot be registered yet:</p>
              <ul class="reasons">
                {eligibility.reasons.map((reason) => (
                  <li key={`${reason.rule}:${reason.message}`} data-rule={reason.rule}>
                    {reason.message}
                  </li>
                ))}
              </ul>
            </div>
          )}
          <button type="button" onClick={register} disabled={!eligibility.eligible || busy} aria-describedby="co-sell-eligibility">
            Register for co-sell
          </button>
          {problem && (
            <p class="field-error" role="alert">
              {problem}
            </p>
          )}
        </>
      )}
    </section>
  );
}
