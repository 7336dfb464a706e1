// The artifacts the Relay compiler would write to __generated__/ for a small Relay app over the gateway
// (no compiler runs here): each ConcreteRequest and ReaderFragment below is what relay-compiler emits
// for the GraphQL in the comment above it, in its shape (reader AST for the fragment, normalization AST
// for the operation, @connection as a renamed reader field plus a `connection` LinkedHandle, the
// fields the compiler adds: `__typename` on abstract and connection nodes, `cursor`, `pageInfo
// { endCursor hasNextPage }`, `id` of every Node). relayClient.test.ts drives them with relay-runtime.
import { createHash } from 'node:crypto';
import type { ConcreteRequest, NormalizationSelection, ReaderFragment, ReaderSelection } from 'relay-runtime';

// The compiler hoists repeated nodes into shared constants (v0, v1, ...) as these are.
const typename = { alias: null, args: null, kind: 'ScalarField', name: '__typename', storageKey: null } as const;
const scalar = (name: string) => ({ alias: null, args: null, kind: 'ScalarField', name, storageKey: null }) as const;
const idArg = [{ kind: 'Variable', name: 'id', variableName: 'id' }] as const;
const idDefinition = { defaultValue: null, kind: 'LocalArgument', name: 'id' } as const;
/** `first`/`after` as field arguments, sorted by name as the compiler prints them. */
const pageArgs = [
  { kind: 'Variable', name: 'after', variableName: 'after' },
  { kind: 'Variable', name: 'first', variableName: 'first' },
] as const;
const pageDefinitions = [
  { defaultValue: null, kind: 'LocalArgument', name: 'after' },
  { defaultValue: null, kind: 'LocalArgument', name: 'first' },
] as const;
/** A query's `params`: its text, and as `cacheID` the md5 of the text, as the compiler writes them. */
function queryParams(name: string, text: string): ConcreteRequest['params'] {
  return { cacheID: createHash('md5').update(text).digest('hex'), id: null, metadata: {}, name, operationKind: 'query', text };
}

const pageInfo = {
  alias: null,
  args: null,
  concreteType: 'PageInfo',
  kind: 'LinkedField',
  name: 'pageInfo',
  plural: false,
  selections: [scalar('endCursor'), scalar('hasNextPage')],
  storageKey: null,
} as const;

/** `edges { node { <fields> __typename } cursor }` of a connection, as @connection completes it. */
function edges(edgeType: string, nodeType: string, fields: readonly string[]) {
  return {
    alias: null,
    args: null,
    concreteType: edgeType,
    kind: 'LinkedField',
    name: 'edges',
    plural: true,
    selections: [
      { alias: null, args: null, concreteType: nodeType, kind: 'LinkedField', name: 'node', plural: false, selections: [...fields.map(scalar), typename], storageKey: null },
      scalar('cursor'),
    ],
    storageKey: null,
  } as const;
}

/**
 * A @refetchable fragment with one forward @connection(key) on `field` (first/after root variables):
 * its metadata as usePaginationFragment reads it, and the field renamed to the connection's handle
 * key, aliased back to its name, with the selections @connection completes.
 */
function paginationFragment(spec: {
  name: string;
  type: string;
  key: string;
  field: string;
  connectionType: string;
  edgeType: string;
  nodeType: string;
  nodeFields: readonly string[];
  operation: ConcreteRequest;
  fragmentPathInResult: string[];
  identifierInfo?: { identifierField: string; identifierQueryVariableName: string };
  after?: readonly ReaderSelection[];
}): ReaderFragment {
  return {
    argumentDefinitions: [
      { kind: 'RootArgument', name: 'after' },
      { kind: 'RootArgument', name: 'first' },
    ],
    kind: 'Fragment',
    metadata: {
      connection: [{ count: 'first', cursor: 'after', direction: 'forward', path: [spec.field] }],
      refetch: {
        connection: { forward: { count: 'first', cursor: 'after' }, backward: null, path: [spec.field] },
        fragmentPathInResult: spec.fragmentPathInResult,
        operation: spec.operation,
        ...(spec.identifierInfo ? { identifierInfo: spec.identifierInfo } : {}),
      },
    },
    name: spec.name,
    selections: [
      {
        alias: spec.field,
        args: null,
        concreteType: spec.connectionType,
        kind: 'LinkedField',
        name: `__${spec.key}_connection`,
        plural: false,
        selections: [edges(spec.edgeType, spec.nodeType, spec.nodeFields), pageInfo] as readonly ReaderSelection[],
        storageKey: null,
      },
      ...(spec.after ?? []),
    ],
    type: spec.type,
    abstractKey: null,
  };
}

// ----- a payment's status, refetchable through node(id:) (useRefetchableFragment) ---------------------

const paymentStatusFields = ['id', 'status', 'amount', 'amountRefunded'] as const;

/*
query PaymentStatusRefetchQuery($id: ID!) {
  node(id: $id) { __typename ...PaymentStatus_payment id }
}
*/
export const PaymentStatusRefetchQuery: ConcreteRequest = {
  fragment: {
    argumentDefinitions: [idDefinition],
    kind: 'Fragment',
    metadata: null,
    name: 'PaymentStatusRefetchQuery',
    selections: [
      {
        alias: null,
        args: idArg,
        concreteType: null,
        kind: 'LinkedField',
        name: 'node',
        plural: false,
        selections: [{ args: null, kind: 'FragmentSpread', name: 'PaymentStatus_payment' }],
        storageKey: null,
      },
    ],
    type: 'Query',
    abstractKey: null,
  },
  kind: 'Request',
  operation: {
    argumentDefinitions: [idDefinition],
    kind: 'Operation',
    name: 'PaymentStatusRefetchQuery',
    selections: [
      {
        alias: null,
        args: idArg,
        concreteType: null,
        kind: 'LinkedField',
        name: 'node',
        plural: false,
        selections: [
          typename,
          scalar('id'),
          { kind: 'InlineFragment', selections: paymentStatusFields.filter((f) => f !== 'id').map(scalar), type: 'PaymentIntent', abstractKey: null },
        ],
        storageKey: null,
      },
    ],
  },
  params: queryParams('PaymentStatusRefetchQuery', `query PaymentStatusRefetchQuery(
  $id: ID!
) {
  node(id: $id) {
    __typename
    ...PaymentStatus_payment
    id
  }
}

fragment PaymentStatus_payment on PaymentIntent {
  id
  status
  amount
  amountRefunded
}
`),
};

/*
fragment PaymentStatus_payment on PaymentIntent @refetchable(queryName: "PaymentStatusRefetchQuery") {
  id status amount amountRefunded
}
*/
export const PaymentStatus_payment: ReaderFragment = {
  argumentDefinitions: [],
  kind: 'Fragment',
  metadata: {
    refetch: {
      connection: null,
      fragmentPathInResult: ['node'],
      operation: PaymentStatusRefetchQuery,
      identifierInfo: { identifierField: 'id', identifierQueryVariableName: 'id' },
    },
  },
  name: 'PaymentStatus_payment',
  selections: paymentStatusFields.map(scalar),
  type: 'PaymentIntent',
  abstractKey: null,
};

/*
query PaymentStatusQuery($id: ID!) {
  paymentIntent(id: $id) { ...PaymentStatus_payment id }
}
*/
export const PaymentStatusQuery: ConcreteRequest = {
  fragment: {
    argumentDefinitions: [idDefinition],
    kind: 'Fragment',
    metadata: null,
    name: 'PaymentStatusQuery',
    selections: [
      {
        alias: null,
        args: idArg,
        concreteType: 'PaymentIntent',
        kind: 'LinkedField',
        name: 'paymentIntent',
        plural: false,
        selections: [{ args: null, kind: 'FragmentSpread', name: 'PaymentStatus_payment' }],
        storageKey: null,
      },
    ],
    type: 'Query',
    abstractKey: null,
  },
  kind: 'Request',
  operation: {
    argumentDefinitions: [idDefinition],
    kind: 'Operation',
    name: 'PaymentStatusQuery',
    selections: [
      { alias: null, args: idArg, concreteType: 'PaymentIntent', kind: 'LinkedField', name: 'paymentIntent', plural: false, selections: paymentStatusFields.map(scalar), storageKey: null },
    ],
  },
  params: queryParams('PaymentStatusQuery', `query PaymentStatusQuery(
  $id: ID!
) {
  paymentIntent(id: $id) {
    ...PaymentStatus_payment
    id
  }
}

fragment PaymentStatus_payment on PaymentIntent {
  id
  status
  amount
  amountRefunded
}
`),
};

// ----- a payment's refunds, a page at a time (usePaginationFragment) ----------------------------------

export const REFUNDS_CONNECTION_KEY = 'RefundList_refundsConnection';

/** refundsConnection as the operation fetches it, and the handle that merges its pages. */
const refundsConnectionNormalization: readonly NormalizationSelection[] = [
  {
    alias: null,
    args: pageArgs,
    concreteType: 'RefundConnection',
    kind: 'LinkedField',
    name: 'refundsConnection',
    plural: false,
    selections: [edges('RefundEdge', 'Refund', ['id', 'amount', 'status']), pageInfo],
    storageKey: null,
  },
  { alias: null, args: pageArgs, filters: null, handle: 'connection', key: REFUNDS_CONNECTION_KEY, kind: 'LinkedHandle', name: 'refundsConnection' },
];

const REFUND_LIST_FRAGMENT_TEXT = `fragment RefundList_payment on PaymentIntent {
  refundsConnection(first: $first, after: $after) {
    edges {
      node {
        id
        amount
        status
        __typename
      }
      cursor
    }
    pageInfo {
      endCursor
      hasNextPage
    }
  }
  id
}
`;

/*
query RefundListPaginationQuery($after: String, $first: Int!, $id: ID!) {
  node(id: $id) { __typename ...RefundList_payment id }
}
*/
export const RefundListPaginationQuery: ConcreteRequest = {
  fragment: {
    argumentDefinitions: [...pageDefinitions, idDefinition],
    kind: 'Fragment',
    metadata: null,
    name: 'RefundListPaginationQuery',
    selections: [
      {
        alias: null,
        args: idArg,
        concreteType: null,
        kind: 'LinkedField',
        name: 'node',
        plural: false,
        selections: [{ args: null, kind: 'FragmentSpread', name: 'RefundList_payment' }],
        storageKey: null,
      },
    ],
    type: 'Query',
    abstractKey: null,
  },
  kind: 'Request',
  operation: {
    argumentDefinitions: [...pageDefinitions, idDefinition],
    kind: 'Operation',
    name: 'RefundListPaginationQuery',
    selections: [
      {
        alias: null,
        args: idArg,
        concreteType: null,
        kind: 'LinkedField',
        name: 'node',
        plural: false,
        selections: [typename, scalar('id'), { kind: 'InlineFragment', selections: refundsConnectionNormalization, type: 'PaymentIntent', abstractKey: null }],
        storageKey: null,
      },
    ],
  },
  params: queryParams('RefundListPaginationQuery', `query RefundListPaginationQuery(
  $after: String
  $first: Int!
  $id: ID!
) {
  node(id: $id) {
    __typename
    ...RefundList_payment
    id
  }
}

${REFUND_LIST_FRAGMENT_TEXT}`),
};

/*
fragment RefundList_payment on PaymentIntent @refetchable(queryName: "RefundListPaginationQuery") {
  refundsConnection(first: $first, after: $after) @connection(key: "RefundList_refundsConnection") {
    edges { node { id amount status } }
  }
  id
}
*/
export const RefundList_payment = paginationFragment({
  name: 'RefundList_payment',
  type: 'PaymentIntent',
  key: REFUNDS_CONNECTION_KEY,
  field: 'refundsConnection',
  connectionType: 'RefundConnection',
  edgeType: 'RefundEdge',
  nodeType: 'Refund',
  nodeFields: ['id', 'amount', 'status'],
  operation: RefundListPaginationQuery,
  fragmentPathInResult: ['node'],
  identifierInfo: { identifierField: 'id', identifierQueryVariableName: 'id' },
  after: [scalar('id')],
});

/*
query RefundListQuery($id: ID!, $first: Int!, $after: String) {
  paymentIntent(id: $id) { ...RefundList_payment id }
}
*/
export const RefundListQuery: ConcreteRequest = {
  fragment: {
    argumentDefinitions: [...pageDefinitions, idDefinition],
    kind: 'Fragment',
    metadata: null,
    name: 'RefundListQuery',
    selections: [
      {
        alias: null,
        args: idArg,
        concreteType: 'PaymentIntent',
        kind: 'LinkedField',
        name: 'paymentIntent',
        plural: false,
        selections: [{ args: null, kind: 'FragmentSpread', name: 'RefundList_payment' }],
        storageKey: null,
      },
    ],
    type: 'Query',
    abstractKey: null,
  },
  kind: 'Request',
  operation: {
    argumentDefinitions: [...pageDefinitions, idDefinition],
    kind: 'Operation',
    name: 'RefundListQuery',
    selections: [
      {
        alias: null,
        args: idArg,
        concreteType: 'PaymentIntent',
        kind: 'LinkedField',
        name: 'paymentIntent',
        plural: false,
        selections: [...refundsConnectionNormalization, scalar('id')],
        storageKey: null,
      },
    ],
  },
  params: queryParams('RefundListQuery', `query RefundListQuery(
  $id: ID!
  $first: Int!
  $after: String
) {
  paymentIntent(id: $id) {
    ...RefundList_payment
    id
  }
}

${REFUND_LIST_FRAGMENT_TEXT}`),
};

// ----- the account's payments, a page at a time (usePaginationFragment on Query) ----------------------

export const PAYMENTS_CONNECTION_KEY = 'PaymentList_paymentIntents';

/*
query PaymentListPaginationQuery($after: String, $first: Int!) { ...PaymentList_query }
*/
export const PaymentListPaginationQuery: ConcreteRequest = {
  fragment: {
    argumentDefinitions: pageDefinitions,
    kind: 'Fragment',
    metadata: null,
    name: 'PaymentListPaginationQuery',
    selections: [{ args: null, kind: 'FragmentSpread', name: 'PaymentList_query' }],
    type: 'Query',
    abstractKey: null,
  },
  kind: 'Request',
  operation: {
    argumentDefinitions: pageDefinitions,
    kind: 'Operation',
    name: 'PaymentListPaginationQuery',
    selections: [
      {
        alias: null,
        args: pageArgs,
        concreteType: 'PaymentIntentConnection',
        kind: 'LinkedField',
        name: 'paymentIntents',
        plural: false,
        selections: [edges('PaymentIntentEdge', 'PaymentIntent', ['id', 'amount', 'status']), pageInfo],
        storageKey: null,
      },
      { alias: null, args: pageArgs, filters: null, handle: 'connection', key: PAYMENTS_CONNECTION_KEY, kind: 'LinkedHandle', name: 'paymentIntents' },
    ],
  },
  params: queryParams('PaymentListPaginationQuery', `query PaymentListPaginationQuery(
  $after: String
  $first: Int!
) {
  ...PaymentList_query
}

fragment PaymentList_query on Query {
  paymentIntents(first: $first, after: $after) {
    edges {
      node {
        id
        amount
        status
        __typename
      }
      cursor
    }
    pageInfo {
      endCursor
      hasNextPage
    }
  }
}
`),
};

/*
fragment PaymentList_query on Query @refetchable(queryName: "PaymentListPaginationQuery") {
  paymentIntents(first: $first, after: $after) @connection(key: "PaymentList_paymentIntents") {
    edges { node { id amount status } }
  }
}
*/
export const PaymentList_query = paginationFragment({
  name: 'PaymentList_query',
  type: 'Query',
  key: PAYMENTS_CONNECTION_KEY,
  field: 'paymentIntents',
  connectionType: 'PaymentIntentConnection',
  edgeType: 'PaymentIntentEdge',
  nodeType: 'PaymentIntent',
  nodeFields: ['id', 'amount', 'status'],
  operation: PaymentListPaginationQuery,
  fragmentPathInResult: [],
});
