import { graphql } from './api';

/** Custom fields over /graphql (schema.graphql's CustomField): their definitions, and a record's values saved. */

export type FieldObject = 'lead' | 'deal';

export interface FieldDefinition {
  id: string;
  objectType: FieldObject;
  key: string;
  label: string;
  type: string;
  options: Array<{ value: string; label: string; archived: boolean }>;
  required: boolean;
  unique: boolean;
  description: string | null;
}

export const FIELD_TYPES = ['text', 'long_text', 'number', 'money', 'date', 'datetime', 'boolean', 'select', 'multi_select', 'url', 'email', 'phone', 'member'];

const DEFINITION = 'id objectType key label type options { value label archived } required unique description';

/** Every field of the mode, in the order they were defined (the API lists newest first). */
export async function listDefinitions(objectType?: FieldObject): Promise<FieldDefinition[]> {
  const data = await graphql<{ fields: { data: FieldDefinition[] } }>(
    `query Fields($objectType: FieldObject) { fields(filter: { limit: 100, objectType: $objectType }) { data { ${DEFINITION} } } }`,
    { objectType: objectType ?? null },
  );
  return [...data.fields.data].reverse();
}

export async function defineField(input: {
  objectType: FieldObject;
  key: string;
  label: string;
  type: string;
  required: boolean;
  options?: Array<{ value: string; label: string }>;
}): Promise<FieldDefinition> {
  const data = await graphql<{ createField: FieldDefinition }>(`mutation Define($input: FieldCreateInput!) { createField(input: $input) { ${DEFINITION} } }`, {
    input,
  });
  return data.createField;
}

export async function deleteDefinition(id: string): Promise<void> {
  await graphql(`mutation Undefine($id: ID!) { deleteField(id: $id) { id } }`, { id });
}

/** Saves values of a record's fields (null clears one); answers the record's values as stored. */
export async function saveValues(objectType: FieldObject, id: string, fields: Record<string, unknown>): Promise<Record<string, unknown>> {
  const mutation = objectType === 'lead' ? 'updateLead' : 'updateDeal';
  const input = objectType === 'lead' ? 'LeadUpdateInput' : 'DealUpdateInput';
  const data = await graphql<Record<string, { fields: Record<string, unknown> }>>(
    `mutation SaveFields($id: ID!, $input: ${input}!) { ${mutation}(id: $id, input: $input) { id fields } }`,
    { id, input: { fields } },
  );
  return data[mutation].fields;
}
