import { defineModule } from '../module';
import { CustomField, FieldOption } from './field.entity';
import { FieldResolver } from './field.resolver';
import { FieldService } from './field.service';

declare module '../module' {
  interface Services {
    fields: FieldService;
  }
}

/** Custom fields of leads and deals (issue 68): definitions per account and mode; values live on the records. */
export const fieldsModule = defineModule({
  name: 'fields',
  entities: [CustomField, FieldOption],
  resolvers: [FieldResolver],
  conflicts: {
    custom_fields_key_unique: { param: 'key', message: 'The object already has a custom field with this key in this mode' },
  },
  routes: [
    { method: 'GET', path: '/v1/fields', summary: 'List custom fields', operation: { type: 'query', field: 'fields', query: 'filter' } },
    { method: 'GET', path: '/v1/fields/:id', summary: 'Retrieve a custom field', operation: { type: 'query', field: 'field' } },
    {
      method: 'POST',
      path: '/v1/fields',
      summary: 'Define a custom field',
      operation: { type: 'mutation', field: 'createField', body: 'input' },
      errors: ['resource_conflict'],
      status: 201,
    },
    {
      method: 'PUT',
      path: '/v1/fields/:id',
      summary: 'Update a custom field',
      operation: { type: 'mutation', field: 'updateField', body: 'input' },
    },
    { method: 'DELETE', path: '/v1/fields/:id', summary: 'Delete a custom field and its values', operation: { type: 'mutation', field: 'deleteField' } },
  ],
  services: { fields: ({ em }) => new FieldService(em) },
});
