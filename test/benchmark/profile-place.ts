/**
 * Where a profile's frame comes from, for the summaries (profile-summary.ts, alloc-summary.ts): a
 * package name (`@scope/name` or `name`), `app:<file>` for our own compiled code, `node` for Node's
 * own modules, and '' for V8's frames, which have no address.
 */
export function placeOf(url: string): string {
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + 'node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  if (url.includes('/dist/')) return `app:${url.slice(url.indexOf('/dist/') + 6)}`;
  if (url.startsWith('node:')) return 'node';
  return url;
}
