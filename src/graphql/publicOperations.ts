import type { OperationId } from '../operations/contract';
import {
  Kind,
  type DocumentNode,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from './graphqljs';

/**
 * Root fields that mirror a public REST route (no credentials), and that route. Like the route they need
 * no key, and like the route each call counts in the route's per-IP bucket (`POST /sandbox/accounts`:
 * ACCOUNT_CREATION_PER_MINUTE), the same bucket, so REST and GraphQL share the client's allowance.
 */
export const PUBLIC_ROOT_FIELDS: Readonly<Record<string, OperationId>> = {
  'Mutation.createSandboxAccount': 'createSandboxAccount',
};

/**
 * The first public root field whose name `text` holds. A document calls a field only by writing its
 * name (GraphQL names have no escapes), so a text that names none calls none: admission refuses a
 * keyless request without parsing it.
 */
export function publicFieldNamed(text: string): OperationId | undefined {
  for (const [field, operationId] of Object.entries(PUBLIC_ROOT_FIELDS)) {
    if (text.includes(field.slice(field.indexOf('.') + 1))) return operationId;
  }
  return undefined;
}

const ROOT_TYPE_NAMES = { query: 'Query', mutation: 'Mutation', subscription: 'Subscription' } as const;

export interface PublicCalls {
  /** One entry per call of a public root field (aliases and fragments included), in document order. */
  calls: OperationId[];
  /** True when the operation calls nothing but public fields (and `__typename`). */
  onlyPublic: boolean;
  /** Every root field the operation calls (aliases and fragments included), `__typename` left out. */
  fields: number;
}

/** The operation `operationName` selects (graphql-js's rule: the only one when no name is given). */
function selectOperation(document: DocumentNode, operationName: string | null | undefined): OperationDefinitionNode | undefined {
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  if (operationName) return operations.find((o) => o.name?.value === operationName);
  return operations.length === 1 ? operations[0] : undefined;
}

/** The public root fields the selected operation calls. Null when no operation is selected. */
export function publicCalls(document: DocumentNode, operationName: string | null | undefined): PublicCalls | null {
  const operation = selectOperation(document, operationName);
  if (!operation) return null;
  const root = ROOT_TYPE_NAMES[operation.operation];
  const fragments = new Map(
    document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((f) => [f.name.value, f]),
  );
  const out: PublicCalls = { calls: [], onlyPublic: true, fields: 0 };
  const visiting = new Set<string>();
  const walk = (set: SelectionSetNode) => {
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) {
        if (sel.name.value === '__typename') continue;
        out.fields++;
        const operationId = PUBLIC_ROOT_FIELDS[`${root}.${sel.name.value}`];
        if (operationId) out.calls.push(operationId);
        else out.onlyPublic = false;
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        walk(sel.selectionSet);
      } else {
        const fragment = fragments.get(sel.name.value);
        // Unknown or cyclic spreads: validation refuses the document; here they make it not public.
        if (!fragment || visiting.has(fragment.name.value)) {
          out.onlyPublic = false;
          continue;
        }
        visiting.add(fragment.name.value);
        walk(fragment.selectionSet);
        visiting.delete(fragment.name.value);
      }
    }
  };
  walk(operation.selectionSet);
  return out;
}
