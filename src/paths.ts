import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The project root: the nearest directory up from this module that holds package.json. Files read at
 * run time (openapi.yaml, schema.graphql, src/pages/assets, packages served as static files) are
 * located from here rather than relative to their own module's URL, because `npm start` runs the
 * esbuild bundle (dist/main.js), where every module's import.meta.url is the bundle's, while
 * `npm run dev` and the tests run src/ through tsx: the root is one directory up from dist/ and
 * one or more from src/.
 */
export const ROOT = findRoot(path.dirname(fileURLToPath(import.meta.url)));

function findRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${start}`);
  }
}

/** `require.resolve` from the project root: where an installed package lives, whichever way the code runs. */
export const requireFromRoot = createRequire(path.join(ROOT, 'package.json'));

/** The directory of an installed package (for serving its files, e.g. swagger-ui-dist). */
export function packageDir(name: string): string {
  return path.dirname(requireFromRoot.resolve(`${name}/package.json`));
}
