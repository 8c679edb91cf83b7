import { emptyRule, RULE_LISTS, RULE_NUMBERS, type Aria, type RuleValues } from './agent-config-fields';
import { ownerName, type Owners } from './owners';

/**
 * A lead_router's settings in the agent forms: its rules (criteria and a member each), the members
 * who take turns, and the member who gets the rest. Members are offered by name; a role that may not
 * read members (`owners` null) types their ids (usr_…) instead; while they load (`undefined`) the
 * fields wait. The API judges what is chosen, as for every other setting.
 */

/** undefined while the members load; null when this role may not read them. */
export type MemberChoices = Owners | null | undefined;

interface FieldProps<T> {
  id: string;
  label: string;
  hint: preact.JSX.Element | null;
  value: T;
  onChange(value: T): void;
  error: preact.JSX.Element | null;
  aria: Aria;
  owners: MemberChoices;
}

const CRITERIA: Record<(typeof RULE_LISTS)[number] | (typeof RULE_NUMBERS)[number], string> = {
  country: 'Countries (ISO codes, comma-separated)',
  industry: 'Industries (comma-separated)',
  source: 'Sources (comma-separated)',
  min_employees: 'Employees at least',
  max_employees: 'Employees at most',
};

/** One member: a select of the active members (and `none`), or the id typed when members cannot be read. */
function MemberChoice({ id, label, value, onChange, owners, none, aria }: Omit<FieldProps<string>, 'hint' | 'error'> & { none: string }) {
  if (owners === undefined) return <p class="muted">Loading members…</p>;
  return (
    <>
      <label for={id}>{label}</label>
      {owners === null ? (
        <input id={id} value={value} placeholder="usr_…" onInput={(e) => onChange(e.currentTarget.value.trim())} {...aria} />
      ) : (
        <select id={id} value={value} onChange={(e) => onChange(e.currentTarget.value)} {...aria}>
          <option value="">{none}</option>
          {owners.active.map((member) => (
            <option key={member.id} value={member.id}>
              {ownerName(member.id, owners)}
            </option>
          ))}
          {value && !owners.active.some((member) => member.id === value) && <option value={value}>{ownerName(value, owners)} (inactive)</option>}
        </select>
      )}
    </>
  );
}

export function MemberSetting(props: FieldProps<string> & { none: string }) {
  return (
    <div class="field">
      <MemberChoice {...props} />
      {props.hint}
      {props.error}
    </div>
  );
}

/** Several members, ticked in the order the members list them; typed as a comma list when members cannot be read. */
export function MembersSetting({ id, label, hint, value, onChange, error, aria, owners }: FieldProps<string[]>) {
  if (owners === undefined) return <p class="muted">Loading members…</p>;
  if (owners === null) {
    return (
      <div class="field">
        <label for={id}>{label} (member ids, comma-separated)</label>
        <input
          id={id}
          value={value.join(', ')}
          onInput={(e) =>
            onChange(
              e.currentTarget.value
                .split(',')
                .map((item) => item.trim())
                .filter(Boolean),
            )
          }
          {...aria}
        />
        {hint}
        {error}
      </div>
    );
  }
  const offered = [...owners.active.map((member) => member.id), ...value.filter((chosen) => !owners.active.some((member) => member.id === chosen))];
  return (
    <fieldset class="field member-ticks" id={id} tabIndex={-1} {...aria}>
      <legend>{label}</legend>
      {offered.map((memberId) => (
        <label key={memberId} class="check inline">
          <input
            type="checkbox"
            checked={value.includes(memberId)}
            onChange={(e) =>
              onChange(
                e.currentTarget.checked ? offered.filter((other) => other === memberId || value.includes(other)) : value.filter((other) => other !== memberId),
              )
            }
          />
          {ownerName(memberId, owners)}
        </label>
      ))}
      {hint}
      {error}
    </fieldset>
  );
}

/** The rules, in order: each a fieldset of its criteria and its member, with Remove; "Add a rule" below. */
export function RulesSetting({ id, label, hint, value, onChange, error, aria, owners }: FieldProps<RuleValues[]>) {
  const set = (index: number, key: keyof RuleValues, text: string) => onChange(value.map((rule, i) => (i === index ? { ...rule, [key]: text } : rule)));
  const focus = (target: string) => requestAnimationFrame(() => document.getElementById(target)?.focus());
  return (
    <fieldset class="field routing-rules" id={id} tabIndex={-1} {...aria}>
      <legend>{label}</legend>
      {hint}
      {value.length === 0 && <p class="muted">No rules: every lead goes to the members who take turns, or to the fallback.</p>}
      {value.map((rule, index) => (
        <fieldset key={index} class="routing-rule">
          <legend>Rule {index + 1}</legend>
          <div class="rule-criteria">
            {[...RULE_LISTS, ...RULE_NUMBERS].map((key) => (
              <label key={key} for={`${id}-${index}-${key}`}>
                {CRITERIA[key]}
                {(RULE_NUMBERS as readonly string[]).includes(key) ? (
                  <input id={`${id}-${index}-${key}`} type="number" min={0} value={rule[key]} onInput={(e) => set(index, key, e.currentTarget.value)} />
                ) : (
                  <input id={`${id}-${index}-${key}`} value={rule[key]} onInput={(e) => set(index, key, e.currentTarget.value)} />
                )}
              </label>
            ))}
          </div>
          <div class="field">
            <MemberChoice
              id={`${id}-${index}-owner_id`}
              label={`Give the leads rule ${index + 1} matches to`}
              value={rule.owner_id}
              none="Choose a member"
              owners={owners}
              onChange={(member) => set(index, 'owner_id', member)}
              aria={{}}
            />
          </div>
          <button
            type="button"
            class="secondary"
            onClick={() => {
              onChange(value.filter((_, i) => i !== index));
              focus(`${id}-add`);
            }}
          >
            Remove rule {index + 1}
          </button>
        </fieldset>
      ))}
      {error}
      <button
        type="button"
        class="secondary"
        id={`${id}-add`}
        onClick={() => {
          onChange([...value, emptyRule()]);
          focus(`${id}-${value.length}-country`);
        }}
      >
        Add a rule
      </button>
    </fieldset>
  );
}
