/**
 * graphql-js, always its CommonJS build. The package ships a CJS copy (`main`) and an ESM copy
 * (`module`) without an exports map: Node, and so Apollo Server and graphql-ws, load the CJS one, while
 * bundler-style resolution (vitest) would hand our own files the ESM one — two copies whose schemas and
 * errors fail each other's `instanceof` checks. Runtime imports of graphql in src/graphql go through here.
 */
export * from 'graphql/index.js';
