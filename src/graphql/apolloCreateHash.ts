/**
 * What `@apollo/utils.createhash` is in the gateway bundle (build.mjs aliases it here). The package
 * takes Node's crypto only when `module.require` exists, which esbuild's CommonJS wrapper does not
 * give, so bundled it hashed every request's query text with sha.js, in JavaScript: tens of µs per
 * request, several times node:crypto's. Same function, same digests.
 */
export { createHash } from 'node:crypto';
