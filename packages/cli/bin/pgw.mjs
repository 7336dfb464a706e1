#!/usr/bin/env node
// The CLI is TypeScript run through tsx (a dependency), so a fresh clone needs only `npm ci`: no build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
