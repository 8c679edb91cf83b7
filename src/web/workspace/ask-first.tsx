import type { ComponentChildren } from 'preact';
import { useFocusWhenShown } from './ui';

/**
 * A dangerous button that first asks in the page, with Cancel focused (the safe choice): Delete on
 * a record's page, Deactivate in a member's row. The caller holds whether it is `asking` and what
 * the API refused (`problem`, shown under the button, which it describes); ids are `base`,
 * `${base}-question`, `${base}-confirm`, `${base}-cancel` and `${base}-error`.
 */
export function AskFirst({
  base,
  className,
  label,
  yes,
  question,
  problem,
  problemClass,
  busy,
  asking,
  setAsking,
  onYes,
}: {
  base: string;
  className: string;
  /** The button's words (a part may be visually hidden). */
  label: ComponentChildren;
  yes: string;
  question: ComponentChildren;
  problem: string | null;
  problemClass: string;
  busy: boolean;
  asking: boolean;
  /** Asking (true: the caller clears an earlier problem) or cancelled (false). */
  setAsking(asking: boolean): void;
  onYes(): void;
}) {
  const setFocus = useFocusWhenShown();
  return (
    <div class={className}>
      {!asking && (
        <button
          type="button"
          class="danger"
          id={base}
          aria-describedby={problem ? `${base}-error` : undefined}
          onClick={() => {
            setAsking(true);
            setFocus(`${base}-cancel`);
          }}
        >
          {label}
        </button>
      )}
      {problem && (
        <p class={problemClass} id={`${base}-error`} role="alert">
          {problem}
        </p>
      )}
      {asking && (
        <div class="confirm notice" role="group" aria-labelledby={`${base}-question`}>
          <p id={`${base}-question`}>{question}</p>
          <div class="actions-row">
            <button type="button" class="danger" id={`${base}-confirm`} onClick={onYes} disabled={busy}>
              {yes}
            </button>
            <button
              type="button"
              class="secondary"
              id={`${base}-cancel`}
              onClick={() => {
                setAsking(false);
                setFocus(base);
              }}
            >
              Cancel
            </button>
          </div>
        </div>
      )}
    </div>
  );
}
