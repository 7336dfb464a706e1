#!/usr/bin/env node
// The CLI is TypeScript run through tsx (a dependency), so a fresh clone needs only `npm ci`: no build step.
// The repository's tsconfig.json maps @pgw/client to its source (its package exports point at dist/,
// which only `npm pack` builds); it is named here so that pgw run from any directory finds it.
import { fileURLToPath, URL } from 'node:url';
import { register } from 'tsx/esm/api';

register({ tsconfig: fileURLToPath(new URL('../../../tsconfig.json', import.meta.url)) });
await import('../src/main.ts');
