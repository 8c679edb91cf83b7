import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';

/**
 * What every workspace page shares: loading a query with its states, the record's name as the
 * page's title, announcements for screen readers, empty states, stacked tables, cursor paging,
 * copy buttons and formatting. Pages are thin: a query, and markup over its answer.
 */

/** The page's element (main.tsx renders into it), with `data-page`, `data-id`, `data-livemode`, `data-role`, `data-member-id` and `data-account-name`. */
export const workspaceRoot = (): HTMLElement => document.getElementById('workspace')!;
/** Whether the session shows live data (the header's mode switch). */
export const livemode = (): boolean => workspaceRoot().dataset.livemode === 'true';

export interface Loaded<T> {
  data: T | null;
  error: string | null;
  reload(): Promise<void>;
}

/** Runs `load` now and again whenever `deps` change; `reload` runs it again (after a change). */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[] = []): Loaded<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const reload = useCallback(async () => {
    try {
      setData(await load());
      setError(null);
    } catch (problem) {
      setError((problem as Error).message);
    }
  }, deps);
  useEffect(() => void reload(), [reload]);
  return { data, error, reload };
}

/**
 * Where focus goes once the page has drawn again (after an edit opens, a save, a refusal): call the
 * returned function with an element's id, and that element takes the focus as soon as it is on the
 * page and `ready` holds (a list that is read again). One mechanism for every page's focus moves.
 */
export function useFocusWhenShown(ready = true): (id: string) => void {
  const [target, setTarget] = useState<string | null>(null);
  useEffect(() => {
    if (!target || !ready) return;
    const element = document.getElementById(target);
    if (!element) return;
    element.focus();
    setTarget(null);
  });
  return setTarget;
}

/** Sets the page's heading and the tab's title (a record's page names the record once it is loaded). */
export function useTitle(title: string | null | undefined): void {
  useEffect(() => {
    if (!title) return;
    const heading = document.querySelector('main h1');
    if (heading) heading.textContent = title;
    document.title = `${title} · Sales Pipeline`;
  }, [title]);
}

/** "Loading…", or what went wrong while loading, before a page has its data. */
export function Status({ error, label = 'Loading…' }: { error: string | null; label?: string }) {
  return error ? (
    <p class="error" role="alert">
      {error}
    </p>
  ) : (
    <p class="muted" role="status">
      {label}
    </p>
  );
}

/** A polite live region: what just happened (saved, moved, deleted), read out by screen readers. */
export function Announcer({ text, id = 'announcer' }: { text: string; id?: string }) {
  return (
    <p class="visually-hidden" role="status" aria-live="polite" id={id}>
      {text}
    </p>
  );
}

/** What an empty list says: what it will hold and how to fill it. */
export function Empty({ children }: { children: ComponentChildren }) {
  return <div class="empty card">{children}</div>;
}

export interface Column<T> {
  label: string;
  cell(row: T): ComponentChildren;
  /** Visually hidden heading (an actions column). */
  hiddenLabel?: boolean;
}

/**
 * A table that stacks into labelled rows on narrow screens (`class="stack"` with `data-label`, as
 * the server-rendered pages do), so no page scrolls sideways on a phone.
 */
export function Table<T>({ label, columns, rows, rowKey }: { label: string; columns: Column<T>[]; rows: T[]; rowKey(row: T): string }) {
  return (
    <table class="stack" aria-label={label}>
      <thead>
        <tr>
          {columns.map((column) => (
            <th key={column.label} scope="col">
              {column.hiddenLabel ? <span class="visually-hidden">{column.label}</span> : column.label}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={rowKey(row)}>
            {columns.map((column) => (
              <td key={column.label} data-label={column.label}>
                {column.cell(row)}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * Cursor paging over the API's lists (`cursor` in, `nextCursor` out): the cursors of the pages
 * seen so far, so "Previous" goes back without the API having to page backwards.
 */
export function useCursorPages(resetOn: unknown[] = []) {
  const [trail, setTrail] = useState<Array<string | null>>([null]);
  useEffect(() => setTrail([null]), resetOn);
  return {
    cursor: trail[trail.length - 1],
    page: trail.length,
    next: (cursor: string) => setTrail([...trail, cursor]),
    previous: () => setTrail(trail.slice(0, -1)),
  };
}

export function Pager({
  label,
  page,
  nextCursor,
  onNext,
  onPrevious,
}: {
  label: string;
  page: number;
  nextCursor: string | null;
  onNext(cursor: string): void;
  onPrevious(): void;
}) {
  if (page === 1 && !nextCursor) return null;
  return (
    <nav class="pager" aria-label={label}>
      <button type="button" disabled={page === 1} onClick={onPrevious}>
        Previous
      </button>
      <span>Page {page}</span>
      <button type="button" disabled={!nextCursor} onClick={() => nextCursor && onNext(nextCursor)}>
        Next
      </button>
    </nav>
  );
}

/** Copies the text of the element `target` (an id) and says so. */
export function CopyButton({ target, label = 'Copy' }: { target: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    const text = document.getElementById(target)?.textContent ?? '';
    try {
      await navigator.clipboard.writeText(text);
      setCopied(true);
    } catch {
      // Without clipboard access (an insecure origin), select the text for the person to copy.
      const selection = window.getSelection();
      const element = document.getElementById(target);
      if (selection && element) selection.selectAllChildren(element);
    }
  };
  return (
    <button type="button" onClick={copy} aria-describedby={target}>
      {copied ? 'Copied' : label}
    </button>
  );
}

/** JSON as the API returned it, indented, in a box that scrolls itself rather than the page. */
export function Json({ value, label }: { value: unknown; label: string }) {
  return (
    <pre class="json" tabIndex={0} aria-label={label}>
      <code>{JSON.stringify(value, null, 2)}</code>
    </pre>
  );
}

export const money = (value: number, currency: string): string => {
  try {
    return new Intl.NumberFormat('en-US', { style: 'currency', currency }).format(value);
  } catch {
    return `${value.toFixed(2)} ${currency}`;
  }
};

/** A calendar date (YYYY-MM-DD) as "Mar 31, 2027". */
export const day = (date: string | null | undefined): string =>
  date ? new Date(`${date.slice(0, 10)}T00:00:00Z`).toLocaleDateString('en-US', { timeZone: 'UTC', month: 'short', day: 'numeric', year: 'numeric' }) : '—';

/** A moment as "Nov 24, 2026, 17:40 UTC" (the service's clock is UTC; so are the pages). */
export const when = (moment: string | null | undefined): string =>
  moment
    ? `${new Date(moment).toLocaleString('en-US', { timeZone: 'UTC', month: 'short', day: 'numeric', year: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' })} UTC`
    : '—';

/** A stage or status name for people: "closed_won" → "Closed won". */
export const humanize = (name: string): string => (name ? name[0].toUpperCase() + name.slice(1).replace(/_/g, ' ') : name);
