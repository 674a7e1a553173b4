import {
  GraphQLError,
  Kind,
  type ASTVisitor,
  type FragmentDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';

interface Size {
  /** Deepest field nesting. */
  readonly depth: number;
  /** Field selections, each fragment counted every time it is spread. */
  readonly fields: number;
}

/**
 * A validation rule refusing operations nested deeper than `maxDepth` or selecting more than
 * `maxComplexity` fields. Fragment sizes are memoized, so a "fragment bomb" (each fragment spreading
 * the next one twice) is measured in linear time while its exponential size is still counted.
 */
export function operationLimitsRule(maxDepth: number, maxComplexity: number): ValidationRule {
  return (context: ValidationContext): ASTVisitor => {
    const fragments = new Map<string, FragmentDefinitionNode>();
    for (const definition of context.getDocument().definitions) {
      if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
    }
    const memo = new Map<string, Size>();
    // Fragment cycles are reported by the standard NoFragmentCycles rule; here they only must not loop.
    const visiting = new Set<string>();

    const measure = (set: SelectionSetNode): Size => {
      let depth = 0;
      let fields = 0;
      for (const selection of set.selections) {
        let size: Size;
        if (selection.kind === Kind.FIELD) {
          const inner =
            selection.selectionSet === undefined ? { depth: 0, fields: 0 } : measure(selection.selectionSet);
          size = { depth: inner.depth + 1, fields: inner.fields + 1 };
        } else if (selection.kind === Kind.INLINE_FRAGMENT) {
          size = measure(selection.selectionSet);
        } else {
          size = measureFragment(selection.name.value);
        }
        depth = Math.max(depth, size.depth);
        fields += size.fields;
      }
      return { depth, fields };
    };

    const measureFragment = (name: string): Size => {
      const known = memo.get(name);
      if (known !== undefined) return known;
      const definition = fragments.get(name);
      if (definition === undefined || visiting.has(name)) return { depth: 0, fields: 0 };
      visiting.add(name);
      const size = measure(definition.selectionSet);
      visiting.delete(name);
      memo.set(name, size);
      return size;
    };

    return {
      OperationDefinition(node) {
        const size = measure(node.selectionSet);
        const name = node.name === undefined ? 'The operation' : `Operation "${node.name.value}"`;
        if (size.depth > maxDepth) {
          context.reportError(
            new GraphQLError(
              `${name} is nested ${size.depth} levels deep; at most ${maxDepth} are allowed.`,
              {
                nodes: [node],
                extensions: { code: 'OPERATION_TOO_DEEP' },
              },
            ),
          );
        }
        if (size.fields > maxComplexity) {
          const count = Number.isFinite(size.fields) ? String(size.fields) : 'too many';
          context.reportError(
            new GraphQLError(`${name} selects ${count} fields; at most ${maxComplexity} are allowed.`, {
              nodes: [node],
              extensions: { code: 'OPERATION_TOO_COMPLEX' },
            }),
          );
        }
      },
    };
  };
}
