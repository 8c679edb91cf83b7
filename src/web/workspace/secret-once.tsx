import { useEffect, useRef } from 'preact/hooks';
import { CopyButton } from './ui';

/**
 * A signing secret the API showed this once (create, roll): it is kept only in this page's memory,
 * so it is gone on reload. Focus moves to it, so a screen reader reads it with the warning.
 */
export function SecretOnce({ secret, heading, onDone }: { secret: string; heading: string; onDone(): void }) {
  const box = useRef<HTMLElement>(null);
  useEffect(() => box.current?.focus(), [secret]);
  return (
    <section class="card notice secret-once" tabIndex={-1} ref={box} aria-labelledby="secret-heading" aria-describedby="secret-warning">
      <h2 id="secret-heading">{heading}</h2>
      <p id="secret-warning">
        This is the only time the signing secret is shown: copy it now and keep it with your endpoint. It verifies the <code>webhook-signature</code> header of
        every delivery.
      </p>
      <p class="secret" id="webhook-secret">
        {secret}
      </p>
      <div class="actions-row">
        <CopyButton target="webhook-secret" label="Copy secret" />
        <button type="button" class="secondary" onClick={onDone}>
          I have saved it
        </button>
      </div>
    </section>
  );
}
