/**
 * Where the GraphQL API is served (POST and WebSocket upgrade). Here rather than in src/graphql because
 * the CORS middleware in front of both APIs (rest/cors.ts) names it too, and src/rest and src/graphql do
 * not import each other.
 */
export const GRAPHQL_PATH = '/graphql';
