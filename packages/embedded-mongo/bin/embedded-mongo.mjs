#!/usr/bin/env node
// The engine's command line (src/cli.ts): the package ships TypeScript, so the bin registers tsx's
// loader before importing it. The gateway's compiled bundle (dist/db.js) runs the same cli without tsx.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli.ts');
