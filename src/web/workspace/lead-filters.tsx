import { useEffect, useState } from 'preact/hooks';
import { narrowed, SCORE_LABELS, searchOf, SORTS, STATUSES, type FilterKey, type Filters } from './lead-queries';
import { ownerName, type Owners } from './owners';
import { humanize } from './ui';

interface Props {
  filters: Filters;
  /** The members to filter by; no Owner filter while they load or when this role may not read them. */
  owners?: Owners | null;
  /** The API's refusal of the last filters, on the field it names when it names one. */
  problem: { field?: FilterKey; message: string } | null;
  onApply(filters: Filters): void;
  onClear(): void;
}

const TEXT_FIELDS = [
  { key: 'q', label: 'Search', type: 'search', hint: 'Company or contact email' },
  { key: 'industry', label: 'Industry', type: 'text', hint: undefined },
  { key: 'min_score', label: 'Min score', type: 'number', hint: undefined },
  { key: 'max_score', label: 'Max score', type: 'number', hint: undefined },
] as const;

const CHOICES = [
  { key: 'status', label: 'Status', any: 'Any status', options: STATUSES.map((value) => ({ value, label: humanize(value) })) },
  { key: 'score_label', label: 'Score label', any: 'Any label', options: SCORE_LABELS.map((value) => ({ value, label: humanize(value) })) },
] as const;

/** The Owner filter: a member (their usr_ id) or "No owner" (`none`, the API's word for it). */
const ownerChoice = (owners: Owners) => ({
  key: 'owner_id' as const,
  label: 'Owner',
  any: 'Any owner',
  options: [{ value: 'none', label: 'No owner' }, ...[...owners.byId.values()].map((member) => ({ value: member.id, label: ownerName(member.id, owners) }))],
});

/**
 * The list's filters. A choice (status, label, sort) applies at once; typed filters apply with
 * Enter or "Apply filters", so the list is not asked again on every key press.
 */
export function LeadFilters({ filters, owners, problem, onApply, onClear }: Props) {
  const [draft, setDraft] = useState<Filters>(filters);
  // Back, Forward and "Clear filters" change the filters from outside: the fields follow.
  useEffect(() => setDraft(filters), [searchOf(filters)]);

  const describedBy = (key: FilterKey) => (problem?.field === key ? `filter-${key}-error` : undefined);
  const fieldError = (key: FilterKey) =>
    problem?.field === key && (
      <p class="field-error" id={`filter-${key}-error`} role="alert">
        {problem.message}
      </p>
    );
  const choose = (key: FilterKey, value: string) => {
    const next = { ...draft, [key]: value };
    setDraft(next);
    onApply(next);
  };

  return (
    <form
      class="lead-filters card"
      role="search"
      aria-label="Filter leads"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        onApply(draft);
      }}
    >
      <div class="lead-filter-fields">
        {TEXT_FIELDS.map(({ key, label, type, hint }) => (
          <div class={`field field-${key}`} key={key}>
            <label for={`filter-${key}`}>{label}</label>
            <input
              id={`filter-${key}`}
              name={key}
              // Preact's types pair each input type with its own attributes; these share the ones used here.
              type={type as 'text'}
              inputMode={type === 'number' ? 'numeric' : undefined}
              placeholder={hint}
              value={draft[key]}
              onInput={(e) => setDraft({ ...draft, [key]: (e.currentTarget as HTMLInputElement).value })}
              aria-invalid={problem?.field === key ? 'true' : undefined}
              aria-describedby={describedBy(key)}
            />
            {fieldError(key)}
          </div>
        ))}
        {[...CHOICES, ...(owners ? [ownerChoice(owners)] : [])].map(({ key, label, any, options }) => (
          <div class={`field field-${key}`} key={key}>
            <label for={`filter-${key}`}>{label}</label>
            <select
              id={`filter-${key}`}
              name={key}
              value={draft[key]}
              onChange={(e) => choose(key, (e.currentTarget as HTMLSelectElement).value)}
              aria-invalid={problem?.field === key ? 'true' : undefined}
              aria-describedby={describedBy(key)}
            >
              <option value="">{any}</option>
              {options.map((option) => (
                <option value={option.value} key={option.value}>
                  {option.label}
                </option>
              ))}
            </select>
            {fieldError(key)}
          </div>
        ))}
        <div class="field field-sort">
          <label for="filter-sort">Sort</label>
          <select
            id="filter-sort"
            name="sort"
            value={draft.sort || '-created_at'}
            onChange={(e) => choose('sort', (e.currentTarget as HTMLSelectElement).value)}
            aria-invalid={problem?.field === 'sort' ? 'true' : undefined}
            aria-describedby={describedBy('sort')}
          >
            {SORTS.map((sort) => (
              <option value={sort.value} key={sort.value}>
                {sort.label}
              </option>
            ))}
          </select>
          {fieldError('sort')}
        </div>
      </div>
      <div class="actions-row">
        <button type="submit">Apply filters</button>
        {narrowed(filters) && (
          <button type="button" class="secondary" onClick={onClear}>
            Clear filters
          </button>
        )}
      </div>
    </form>
  );
}
