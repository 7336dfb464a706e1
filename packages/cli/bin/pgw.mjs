#!/usr/bin/env node
// Placeholder; the CLI is built in its own commits.
process.stderr.write('pgw: not built yet\n');
process.exit(2);
