import type { ModuleDefinition } from './module';

let registered: readonly ModuleDefinition[] | undefined;

/** Called once by src/modules/index.ts with the list of modules. */
export function registerModules(modules: readonly ModuleDefinition[]): void {
  registered = modules;
}

/**
 * The modules, for the few readers that the modules themselves import (the event catalog, the
 * database error map): they cannot import src/modules/index.ts without a cycle, so they read the
 * list here, when first needed, after it has been registered. Everything else imports MODULES.
 */
export function registeredModules(): readonly ModuleDefinition[] {
  if (!registered) throw new Error('the modules are not loaded yet: import src/modules (src/modules/index.ts) first');
  return registered;
}
