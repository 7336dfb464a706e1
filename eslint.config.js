import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'generated/**', 'data/**', 'test-artifacts/**', 'bench/.tmp/**', 'packages/*/src/generated/**', 'packages/*/dist/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      // Request bodies arrive as validated-but-untyped JSON; `any` at those edges is deliberate.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': ['error', { allow: ['warn', 'error'] }],
    },
  },
  {
    files: ['bench/**', 'packages/embedded-mongo/src/cli.ts', 'packages/embedded-mongo/bench/**', 'packages/embedded-mongo/test/**', 'codegen.ts', 'test/**', 'examples/merchant-express/main.ts', 'examples/frontend-status/main.ts'],
    rules: { 'no-console': 'off' },
  },
);
