/**
 * Where the GraphQL API is served (POST and WebSocket upgrade). Here rather than in src/graphql because
 * the CORS middleware in front of both APIs (rest/cors.ts) names it too, and src/rest and src/graphql do
 * not import each other.
 */
export const GRAPHQL_PATH = '/graphql';

/** Whether `url`'s path is `path` as Express's path matching compares it: any case, one trailing slash. */
export function isPath(url: string, path: string): boolean {
  const query = url.indexOf('?');
  let p = query < 0 ? url : url.slice(0, query);
  if (p.length > path.length && p.endsWith('/')) p = p.slice(0, -1);
  return p.length === path.length && p.toLowerCase() === path;
}
