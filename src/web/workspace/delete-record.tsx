import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { AskFirst } from './ask-first';
import { useFocusWhenShown } from './ui';

interface DeleteProps {
  /** What is deleted, in the buttons' words: "lead", "deal". */
  noun: string;
  /** The record's name: the list announces it once it is gone. */
  name: string;
  /** What deleting does, asked before anything is deleted. */
  children: ComponentChildren;
  /** The list the page goes to after the deletion (/leads, /pipeline). */
  listPath: string;
  remove(): Promise<unknown>;
}

/**
 * "Delete <noun>" on a record's page: it first asks in the page, with Cancel focused (the safe
 * choice, as Disconnect does on an integration), then deletes over /graphql and goes to the list
 * with `?deleted=<name>`, which the list says once (`DeletedNotice`). The API's refusal (a deal
 * with proposals) is shown under the button, which is described by it.
 */
export function DeleteRecord({ noun, name, children, listPath, remove }: DeleteProps) {
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const setFocus = useFocusWhenShown();
  const base = `delete-${noun}`;

  const confirm = async () => {
    setBusy(true);
    try {
      await remove();
      window.location.assign(`${listPath}?deleted=${encodeURIComponent(name)}`);
    } catch (error) {
      setProblem((error as Error).message);
      setConfirming(false);
      setBusy(false);
      setFocus(base);
    }
  };

  return (
    <AskFirst
      base={base}
      className="delete-record"
      label={`Delete ${noun}`}
      yes={`Yes, delete ${noun}`}
      question={children}
      problem={problem}
      problemClass="error"
      busy={busy}
      asking={confirming}
      setAsking={(asking) => {
        if (asking) setProblem(null);
        setConfirming(asking);
      }}
      onYes={() => void confirm()}
    />
  );
}

/**
 * A list's line saying what was just deleted (`?deleted=<name>` from `DeleteRecord`). The name is
 * read once and dropped from the URL, so a reload or a bookmark does not say it again; the line is
 * filled after the first render so that screen readers hear it in the live region.
 */
export function DeletedNotice() {
  const [deleted, setDeleted] = useState('');
  useEffect(() => {
    const params = new URLSearchParams(location.search);
    const name = params.get('deleted');
    if (name === null) return;
    params.delete('deleted');
    const rest = params.toString();
    history.replaceState(history.state, '', `${location.pathname}${rest ? `?${rest}` : ''}`);
    setDeleted(name);
  }, []);
  return (
    <p class={deleted ? 'success deleted-notice' : 'visually-hidden'} role="status" id="deleted-notice">
      {deleted && `Deleted ${deleted}.`}
    </p>
  );
}
