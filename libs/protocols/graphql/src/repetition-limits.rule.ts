import { GraphQLError, Kind, type ASTVisitor, type ValidationContext, type ValidationRule } from 'graphql';

/**
 * A validation rule refusing documents that repeat themselves: more than `maxAliases` aliased
 * fields, or one response name selected more than `maxRepeatedFields` times in one selection set.
 * graphql-js's OverlappingFieldsCanBeMerged compares every pair of selections sharing a response
 * name, so 250 copies of `a: status { connections }` (500 fields, within the complexity limit)
 * still cost tens of milliseconds; this runs before it, in one pass over the document.
 */
export function repetitionLimitsRule(maxAliases: number, maxRepeatedFields: number): ValidationRule {
  return (context: ValidationContext): ASTVisitor => {
    let aliases = 0;
    let reported = false;
    const report = (message: string, code: string) => {
      if (reported) return;
      reported = true;
      context.reportError(new GraphQLError(message, { extensions: { code } }));
    };
    return {
      Field(node) {
        if (node.alias !== undefined && ++aliases > maxAliases) {
          report(`The document uses more than ${maxAliases} aliases.`, 'TOO_MANY_ALIASES');
        }
      },
      SelectionSet(node) {
        const counts = new Map<string, number>();
        for (const selection of node.selections) {
          if (selection.kind !== Kind.FIELD) continue;
          const name = (selection.alias ?? selection.name).value;
          const count = (counts.get(name) ?? 0) + 1;
          counts.set(name, count);
          if (count > maxRepeatedFields) {
            report(
              `The document selects "${name}" more than ${maxRepeatedFields} times in one selection set.`,
              'FIELD_REPEATED',
            );
            return;
          }
        }
      },
    };
  };
}
