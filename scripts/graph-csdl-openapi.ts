/**
 * Microsoft Graph's v1.0 metadata (CSDL, microsoftgraph/msgraph-metadata) as an OpenAPI 3.0
 * document for the operations we name, for scripts/refresh-provider-specs.ts to excerpt.
 *
 * msgraph-metadata publishes both the CSDL and its OpenAPI rendering (openapi/v1.0/openapi.yaml,
 * made by Microsoft's OpenAPI.NET.OData); the rendering is tens of megabytes and cannot be carried
 * in a pinned, hashed form here, so we read the CSDL it is made from and render the same way what
 * we call: paths spelled as Microsoft's document spells them (`/users/{user-id}/todo/lists/{todoTaskList-id}/tasks`),
 * the OData query options as its parameters (`$select` and `$expand` listing the type's property
 * and navigation names; `$filter`, `$top`, … unless the metadata's Capabilities annotations
 * restrict them), `2XX` with the type (or its `…CollectionResponse` with `value` and
 * `@odata.nextLink`), `default` with Graph's error body. Schemas follow the CSDL: a base type is
 * an `allOf`, a nullable property its type or null, an enum its member names; navigation
 * properties that contain their targets (extensions, attachments, …) are properties too, as a
 * body may carry them (an open extension is created with its task or message).
 *
 * Where this differs from Microsoft's rendering, it is on purpose:
 * - no `discriminator` and no required `@odata.type`: Graph's JSON carries `@odata.type` only when
 *   the type differs from the declared one, and a fake checked against a required one would not
 *   answer as Graph does;
 * - a nullable reference is its type or null (Microsoft's takes any object there);
 * - navigation properties that refer to entities elsewhere are left out, and so are those of
 *   `microsoft.graph.user` (and its print settings): they reach nearly every type Graph has, and
 *   the calls we make never expand them.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
}

interface StructuredType {
  kind: 'entity' | 'complex';
  fullName: string;
  element: XmlElement;
  namespace: string;
}

type SchemaType = StructuredType | { kind: 'enum'; fullName: string; element: XmlElement; namespace: string };

const NAVIGATION_LEFT_OUT = new Set(['microsoft.graph.user', 'microsoft.graph.userPrint']);
const METHODS = new Set(['GET', 'POST']);

/** A small reader for CSDL: elements and attributes; comments, declarations and text skipped. */
function parseXml(text: string): XmlElement {
  const root: XmlElement = { name: '#document', attributes: {}, children: [] };
  const stack = [root];
  const tag = /<!--[\s\S]*?-->|<\?[\s\S]*?\?>|<(\/?)([A-Za-z_][\w:.-]*)((?:\s+[\w:.-]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)>/g;
  for (let match = tag.exec(text); match; match = tag.exec(text)) {
    const [, closing, name, attributeText, selfClosing] = match;
    if (name === undefined) continue;
    if (closing) {
      const open = stack.pop();
      if (open?.name !== name) throw new Error(`the metadata closes <${name}> where <${open?.name}> is open`);
      continue;
    }
    const attributes: Record<string, string> = {};
    for (const attribute of attributeText.matchAll(/([\w:.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) {
      attributes[attribute[1]] = unescapeXml(attribute[2] ?? attribute[3]);
    }
    const element: XmlElement = { name, attributes, children: [] };
    stack[stack.length - 1].children.push(element);
    if (!selfClosing) stack.push(element);
  }
  if (stack.length !== 1) throw new Error(`the metadata ends inside <${stack[stack.length - 1].name}>`);
  return root;
}

function unescapeXml(value: string): string {
  return value.replace(/&(quot|apos|lt|gt|amp);/g, (_, entity: string) => ({ quot: '"', apos: "'", lt: '<', gt: '>', amp: '&' })[entity]!);
}

function* descendants(element: XmlElement, name: string): Generator<XmlElement> {
  for (const child of element.children) {
    if (child.name === name) yield child;
    yield* descendants(child, name);
  }
}

/** The CSDL's types, entity sets, singletons and capability annotations, by full name. */
class Metadata {
  readonly types = new Map<string, SchemaType>();
  readonly roots = new Map<string, { type: string; collection: boolean }>();
  private readonly aliases = new Map<string, string>();
  private readonly annotations = new Map<string, XmlElement[]>();

  constructor(document: XmlElement) {
    const schemas = [...descendants(document, 'Schema')];
    for (const schema of schemas) if (schema.attributes.Alias) this.aliases.set(schema.attributes.Alias, schema.attributes.Namespace);
    for (const schema of schemas) {
      const namespace = schema.attributes.Namespace;
      for (const element of schema.children) {
        const fullName = `${namespace}.${element.attributes.Name}`;
        if (element.name === 'EntityType') this.types.set(fullName, { kind: 'entity', fullName, element, namespace });
        else if (element.name === 'ComplexType') this.types.set(fullName, { kind: 'complex', fullName, element, namespace });
        else if (element.name === 'EnumType') this.types.set(fullName, { kind: 'enum', fullName, element, namespace });
        else if (element.name === 'EntityContainer') {
          for (const member of element.children) {
            if (member.name === 'EntitySet') this.roots.set(member.attributes.Name, { type: this.qualified(member.attributes.EntityType), collection: true });
            if (member.name === 'Singleton') this.roots.set(member.attributes.Name, { type: this.qualified(member.attributes.Type), collection: false });
          }
        } else if (element.name === 'Annotations') {
          const target = this.qualified(element.attributes.Target);
          this.annotations.set(target, [...(this.annotations.get(target) ?? []), ...element.children]);
        }
      }
    }
  }

  /** A type or target name with its namespace spelled out (`graph.todoTask` → `microsoft.graph.todoTask`). */
  qualified(name: string): string {
    const collection = /^Collection\((.+)\)$/.exec(name);
    if (collection) return `Collection(${this.qualified(collection[1])})`;
    for (const [alias, namespace] of this.aliases) if (name.startsWith(`${alias}.`)) return namespace + name.slice(alias.length);
    return name;
  }

  structured(fullName: string): StructuredType {
    const type = this.types.get(fullName);
    if (!type || type.kind === 'enum') throw new Error(`the metadata has no structured type ${fullName}`);
    return type;
  }

  /** Own and inherited members of a structured type (Property or NavigationProperty), base first. */
  members(type: StructuredType, kind: 'Property' | 'NavigationProperty'): Array<{ element: XmlElement; declaredBy: string }> {
    const base = type.element.attributes.BaseType ? this.members(this.structured(this.qualified(type.element.attributes.BaseType)), kind) : [];
    return [...base, ...type.element.children.filter((child) => child.name === kind).map((element) => ({ element, declaredBy: type.fullName }))];
  }

  /** A Capabilities record's boolean (`Org.OData.Capabilities.V1.FilterRestrictions` / `Filterable`) for a target, if annotated. */
  capability(target: string, term: string, property: string): boolean | undefined {
    for (const annotation of this.annotations.get(target) ?? []) {
      if (annotation.attributes.Term !== `Org.OData.Capabilities.V1.${term}`) continue;
      if (annotation.attributes.Bool !== undefined) return annotation.attributes.Bool === 'true';
      for (const value of descendants(annotation, 'PropertyValue')) {
        if (value.attributes.Property === property && value.attributes.Bool !== undefined) return value.attributes.Bool === 'true';
      }
    }
    return undefined;
  }
}

const ref = (kind: string, name: string): JsonObject => ({ $ref: `#/components/${kind}/${name}` });

/** An Edm primitive as OpenAPI.NET.OData renders it, less the formats our validator does not know. */
function primitive(name: string): JsonObject {
  switch (name) {
    case 'Edm.String':
      return { type: 'string' };
    case 'Edm.Boolean':
      return { type: 'boolean' };
    case 'Edm.Int16':
      return { type: 'number', format: 'int32', minimum: -32768, maximum: 32767 };
    case 'Edm.Int32':
      return { type: 'number', format: 'int32' };
    case 'Edm.Int64':
      return { type: 'number', format: 'int64' };
    case 'Edm.Byte':
      return { type: 'number', format: 'int32', minimum: 0, maximum: 255 };
    case 'Edm.Double':
    case 'Edm.Single':
    case 'Edm.Decimal':
      // JSON numbers, or the strings OData allows for them ("INF", "NaN", or a number written as a string).
      return { anyOf: [{ type: 'number' }, { type: 'string' }] };
    case 'Edm.DateTimeOffset':
      return { type: 'string', format: 'date-time' };
    case 'Edm.Date':
      return { type: 'string', format: 'date' };
    case 'Edm.TimeOfDay':
      return { type: 'string', pattern: '^([01][0-9]|2[0-3]):([0-5][0-9]):([0-5][0-9])(\\.[0-9]{1,12})?$' };
    case 'Edm.Duration':
      return { type: 'string', format: 'duration' };
    case 'Edm.Guid':
      return { type: 'string', format: 'uuid' };
    case 'Edm.Binary':
    case 'Edm.Stream':
      return { type: 'string' };
    default:
      // Edm.Untyped and the geography types: any JSON.
      return {};
  }
}

/** The schema or null. OpenAPI 3.0 has no null type: a reference or a choice gets a branch that takes null only. */
function withNull(schema: JsonObject): JsonObject {
  if (schema.$ref !== undefined || schema.anyOf !== undefined) {
    return { anyOf: [...((schema.anyOf as Json[] | undefined) ?? [schema]), { type: 'object', nullable: true, enum: [null] }] };
  }
  if (schema.type === undefined) return schema;
  return { ...schema, nullable: true };
}

/** A property's or navigation property's schema: its type, as an array for a collection, nullable unless Nullable="false". */
function memberSchema(metadata: Metadata, element: XmlElement): JsonObject {
  const type = metadata.qualified(element.attributes.Type);
  const collection = /^Collection\((.+)\)$/.exec(type);
  const single = (name: string): JsonObject => (name.startsWith('Edm.') ? primitive(name) : ref('schemas', name));
  const nullable = element.attributes.Nullable !== 'false';
  if (collection) return { type: 'array', items: nullable && element.name === 'Property' ? withNull(single(collection[1])) : single(collection[1]) };
  return nullable ? withNull(single(type)) : single(type);
}

function typeSchema(metadata: Metadata, type: SchemaType): JsonObject {
  if (type.kind === 'enum') {
    const members = type.element.children.filter((child) => child.name === 'Member').map((member) => member.attributes.Name);
    // A flags enum's value is a comma-separated list of its members.
    if (type.element.attributes.IsFlags === 'true') return { type: 'string', pattern: `^(${members.join('|')})(,\\s*(${members.join('|')}))*$` };
    return { type: 'string', enum: members };
  }
  const properties: JsonObject = {};
  const own = type.element.children.filter(
    (child) =>
      child.name === 'Property' ||
      (child.name === 'NavigationProperty' && child.attributes.ContainsTarget === 'true' && !NAVIGATION_LEFT_OUT.has(type.fullName)),
  );
  for (const member of own) properties[member.attributes.Name] = memberSchema(metadata, member);
  properties['@odata.type'] = { type: 'string' };
  const schema: JsonObject = { type: 'object', properties };
  const base = type.element.attributes.BaseType;
  return base ? { allOf: [ref('schemas', metadata.qualified(base)), schema] } : schema;
}

/** Graph's error body (`microsoft.graph.ODataErrors.*`, the part of Microsoft's rendering not in the CSDL). */
const ERROR_SCHEMAS: JsonObject = {
  'microsoft.graph.ODataErrors.ODataError': {
    type: 'object',
    required: ['error'],
    properties: { error: ref('schemas', 'microsoft.graph.ODataErrors.MainError') },
  },
  'microsoft.graph.ODataErrors.MainError': {
    type: 'object',
    required: ['code', 'message'],
    properties: {
      code: { type: 'string' },
      message: { type: 'string' },
      target: { type: 'string', nullable: true },
      details: { type: 'array', items: ref('schemas', 'microsoft.graph.ODataErrors.ErrorDetails') },
      innerError: ref('schemas', 'microsoft.graph.ODataErrors.InnerError'),
    },
  },
  'microsoft.graph.ODataErrors.ErrorDetails': {
    type: 'object',
    required: ['code', 'message'],
    properties: { code: { type: 'string' }, message: { type: 'string' }, target: { type: 'string', nullable: true } },
  },
  // Service-specific (request-id, client-request-id, date, …).
  'microsoft.graph.ODataErrors.InnerError': { type: 'object' },
};

/**
 * The query options of a collection. Microsoft's rendering marks them `explode: false`, which means
 * nothing for a single value and makes openapi-backend split it at commas (a `$filter` has them),
 * so it is left out here.
 */
const QUERY_PARAMETERS: JsonObject = {
  top: { name: '$top', in: 'query', style: 'form', schema: { type: 'integer', minimum: 0 } },
  skip: { name: '$skip', in: 'query', style: 'form', schema: { type: 'integer', minimum: 0 } },
  search: { name: '$search', in: 'query', style: 'form', schema: { type: 'string' } },
  filter: { name: '$filter', in: 'query', style: 'form', schema: { type: 'string' } },
  count: { name: '$count', in: 'query', style: 'form', schema: { type: 'boolean' } },
};

const listOf = (name: string, values: string[]): JsonObject => ({
  name,
  in: 'query',
  style: 'form',
  explode: false,
  schema: { type: 'array', uniqueItems: true, items: { type: 'string', enum: values } },
});

/** Microsoft's spelling of an operation id: `user.todo.list_ListTask` for GET /users/{user-id}/todo/lists/{todoTaskList-id}/tasks. */
function operationIdOf(method: string, path: string, collection: boolean): string {
  const singular = (name: string) => name.replace(/s$/, '');
  const names = path.split('/').filter((segment) => segment && !segment.startsWith('{'));
  const last = singular(names[names.length - 1]);
  const verb = method === 'POST' ? 'Create' : collection ? 'List' : 'Get';
  const owner = names.length > 1 ? names.slice(0, -1).map(singular).join('.') : last;
  return `${owner}_${verb}${last[0].toUpperCase()}${last.slice(1)}`;
}

/** One operation (`GET /users/{user-id}/todo/lists`), walked from an entity set or singleton through navigation properties. */
function operation(metadata: Metadata, named: string, responses: JsonObject, schemas: Set<string>): { path: string; method: string; operation: JsonObject } {
  const [method, path] = named.split(' ');
  if (!METHODS.has(method)) throw new Error(`${named}: only GET and POST are rendered`);
  const [first, ...rest] = path.split('/').slice(1);
  const root = metadata.roots.get(first);
  if (!root) throw new Error(`${named}: the metadata has no entity set or singleton ${first}`);
  let type = metadata.structured(root.type);
  let collection = root.collection;
  let target = `${metadata.qualified('graph.GraphService')}/${first}`;
  const parameters: Json[] = [];
  for (const segment of rest) {
    const key = /^\{(.+)-id\}$/.exec(segment);
    if (key) {
      if (!collection || key[1] !== type.fullName.split('.').pop()) throw new Error(`${named}: ${segment} does not key ${type.fullName}`);
      parameters.push({ name: `${key[1]}-id`, in: 'path', required: true, style: 'simple', schema: { type: 'string' } });
      collection = false;
      continue;
    }
    if (collection) throw new Error(`${named}: ${segment} follows a collection without its key`);
    const navigation = metadata.members(type, 'NavigationProperty').find((member) => member.element.attributes.Name === segment);
    if (!navigation) throw new Error(`${named}: ${type.fullName} has no navigation property ${segment}`);
    const navigationType = metadata.qualified(navigation.element.attributes.Type);
    const element = /^Collection\((.+)\)$/.exec(navigationType);
    type = metadata.structured(element ? element[1] : navigationType);
    collection = element !== null;
    target = `${navigation.declaredBy}/${segment}`;
  }
  schemas.add(type.fullName);
  const operationId = operationIdOf(method, path, collection);
  const properties = metadata.members(type, 'Property').map((member) => member.element.attributes.Name);
  const navigations = NAVIGATION_LEFT_OUT.has(type.fullName)
    ? []
    : metadata.members(type, 'NavigationProperty').map((member) => member.element.attributes.Name);
  const allowed = (term: string, property: string) => metadata.capability(target, term, property) !== false;
  const select = listOf('$select', [...properties, ...navigations]);
  const expand = allowed('ExpandRestrictions', 'Expandable') ? [listOf('$expand', ['*', ...navigations])] : [];
  const error = ref('responses', 'error');
  if (method === 'GET' && collection) {
    const name = `${type.fullName}CollectionResponse`;
    responses[name] = { description: 'Retrieved collection', content: { 'application/json': { schema: ref('schemas', name) } } };
    const queries = [
      ...(allowed('TopSupported', 'TopSupported') ? [ref('parameters', 'top')] : []),
      ...(allowed('SkipSupported', 'SkipSupported') ? [ref('parameters', 'skip')] : []),
      ...(allowed('SearchRestrictions', 'Searchable') ? [ref('parameters', 'search')] : []),
      ...(allowed('FilterRestrictions', 'Filterable') ? [ref('parameters', 'filter')] : []),
      ...(allowed('CountRestrictions', 'Countable') ? [ref('parameters', 'count')] : []),
      ...(allowed('SortRestrictions', 'Sortable')
        ? [
            listOf(
              '$orderby',
              properties.flatMap((property) => [property, `${property} desc`]),
            ),
          ]
        : []),
      select,
      ...expand,
    ];
    return { path, method, operation: { operationId, parameters: [...parameters, ...queries], responses: { '2XX': ref('responses', name), default: error } } };
  }
  if (method === 'GET') {
    const answer = { description: 'Retrieved entity', content: { 'application/json': { schema: ref('schemas', type.fullName) } } };
    return { path, method, operation: { operationId, parameters: [...parameters, select, ...expand], responses: { '2XX': answer, default: error } } };
  }
  if (!collection) throw new Error(`${named}: POST is rendered for collections only`);
  if (!allowed('InsertRestrictions', 'Insertable')) throw new Error(`${named}: the metadata says ${target} is not insertable`);
  const content = { 'application/json': { schema: ref('schemas', type.fullName) } };
  return {
    path,
    method,
    operation: {
      operationId,
      parameters,
      requestBody: { required: true, content },
      responses: { '2XX': { description: 'Created navigation property.', content }, default: error },
    },
  };
}

/** The OpenAPI document of the named operations, with every type of the metadata among its schemas (the excerpt keeps those reached). */
export function csdlToOpenApi(text: string, operations: string[]): JsonObject {
  const metadata = new Metadata(parseXml(text));
  const paths: Record<string, JsonObject> = {};
  const responses: JsonObject = {
    error: { description: 'error', content: { 'application/json': { schema: ref('schemas', 'microsoft.graph.ODataErrors.ODataError') } } },
  };
  const used = new Set<string>();
  for (const named of operations) {
    const rendered = operation(metadata, named, responses, used);
    (paths[rendered.path] ??= {})[rendered.method.toLowerCase()] = rendered.operation;
  }
  const schemas: JsonObject = { ...ERROR_SCHEMAS };
  for (const [fullName, type] of metadata.types) schemas[fullName] = typeSchema(metadata, type);
  schemas.BaseCollectionPaginationCountResponse = {
    type: 'object',
    properties: { '@odata.count': { type: 'number', format: 'int64', nullable: true }, '@odata.nextLink': { type: 'string', nullable: true } },
  };
  for (const fullName of used) {
    schemas[`${fullName}CollectionResponse`] = {
      allOf: [
        ref('schemas', 'BaseCollectionPaginationCountResponse'),
        { type: 'object', properties: { value: { type: 'array', items: ref('schemas', fullName) } } },
      ],
    };
  }
  return {
    openapi: '3.0.4',
    info: { title: 'OData Service for namespace microsoft.graph', version: 'v1.0' },
    paths,
    components: { schemas, responses, parameters: QUERY_PARAMETERS },
  };
}
