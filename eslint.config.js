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
    // The gateway's modules hold no state: a registry, cache, queue, flag or growable list at module level
    // is shared by every gateway built in the process (tests build several), and config read into it goes
    // stale. State lives in what a module's factory returns. Constant tables are read-only: `ReadonlySet`,
    // `ReadonlyMap`, `readonly T[]`, `[...] as const`. What is per process on purpose says why in an
    // `eslint-disable-next-line no-restricted-syntax -- <why>` comment (docs/architecture.md, "State").
    // src/dashboard/app is left out: it is the dashboard's browser bundle, one page with one instance of
    // each module, never a gateway.
    files: ['src/**/*.ts', 'src/**/*.tsx'],
    ignores: ['src/dashboard/app/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'Program > VariableDeclaration[kind="let"], Program > ExportNamedDeclaration > VariableDeclaration[kind="let"]',
          message: 'module-level `let` (no-restricted-syntax): keep the state in the module\'s factory, or say why it is per process (docs/architecture.md, "State")',
        },
        {
          selector: ':matches(Program, Program > ExportNamedDeclaration) > VariableDeclaration > VariableDeclarator:not([id.typeAnnotation.typeAnnotation.typeName.name=/^Readonly/]) > NewExpression.init:not([callee.name="Schema"])',
          message: 'module-level mutable instance (no-restricted-syntax): keep the state in the module\'s factory, type a constant table ReadonlySet/ReadonlyMap, or say why it is per process (docs/architecture.md, "State")',
        },
        {
          // `[...] as const` and `[...] as readonly T[]` pass; `[...] as T[]` and `[...] satisfies T[]` (still a T[]) do not.
          selector:
            ':matches(Program, Program > ExportNamedDeclaration) > VariableDeclaration > VariableDeclarator:not([id.typeAnnotation.typeAnnotation.typeName.name=/^Readonly/]):not([id.typeAnnotation.typeAnnotation.operator="readonly"]) > ' +
            ':matches(ArrayExpression.init, TSSatisfiesExpression.init[expression.type="ArrayExpression"], TSAsExpression.init[expression.type="ArrayExpression"]:not([typeAnnotation.typeName.name=/^(const$|Readonly)/]):not([typeAnnotation.operator="readonly"]))',
          message: 'module-level mutable array (no-restricted-syntax): keep the state in the module\'s factory, make a constant table `readonly T[]` or `[...] as const`, or say why it is per process (docs/architecture.md, "State")',
        },
      ],
    },
  },
  {
    files: ['bench/**', 'packages/embedded-mongo/src/cli.ts', 'packages/embedded-mongo/bench/**', 'packages/embedded-mongo/test/**', 'codegen.ts', 'test/**', 'examples/merchant-express/main.ts', 'examples/frontend-status/main.ts'],
    rules: { 'no-console': 'off' },
  },
);
