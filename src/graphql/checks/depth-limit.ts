import { FragmentDefinitionNode, GraphQLError, Kind, SelectionSetNode, ValidationRule } from 'graphql';

/** Deepest selection an operation may have (the schema itself is at most 4 deep). */
export const MAX_DEPTH = 10;

/**
 * How deep a selection nests fields, counting as graphql-depth-limit counts (a field with a
 * selection adds one level; introspection fields, whose standard query is 14 deep, add none:
 * their cost is counted instead). Each fragment's depth is computed once: graphql-depth-limit
 * walks a fragment again at every spread, so a 300-token document of 12 fragments that each
 * spread the next 6 times took 28 s of the event loop to validate (6^11 walks).
 */
function selectionDepth(selectionSet: SelectionSetNode, fragments: Map<string, FragmentDefinitionNode>, memo: Map<string, number>): number {
  let deepest = 0;
  for (const selection of selectionSet.selections) {
    let depth = 0;
    if (selection.kind === Kind.FIELD) {
      if (selection.selectionSet && !selection.name.value.startsWith('__')) depth = 1 + selectionDepth(selection.selectionSet, fragments, memo);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      depth = selectionDepth(selection.selectionSet, fragments, memo);
    } else {
      const name = selection.name.value;
      const fragment = fragments.get(name);
      if (fragment && !memo.has(name)) {
        memo.set(name, 0); // a cycle (refused by NoFragmentCyclesRule anyway) adds nothing
        memo.set(name, selectionDepth(fragment.selectionSet, fragments, memo));
      }
      depth = memo.get(name) ?? 0;
    }
    if (depth > deepest) deepest = depth;
  }
  return deepest;
}

/** Refuses operations that nest deeper than `maxDepth`, in time linear in the document's size. */
export function depthLimitRule(maxDepth = MAX_DEPTH): ValidationRule {
  return (context) => {
    const definitions = context.getDocument().definitions;
    const fragments = new Map<string, FragmentDefinitionNode>();
    for (const definition of definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
    const memo = new Map<string, number>();
    for (const definition of definitions) {
      if (definition.kind !== Kind.OPERATION_DEFINITION) continue;
      if (selectionDepth(definition.selectionSet, fragments, memo) > maxDepth) {
        const name = definition.name?.value ?? '';
        context.reportError(new GraphQLError(`'${name}' exceeds maximum operation depth of ${maxDepth}`, { nodes: definition }));
      }
    }
    return {};
  };
}
