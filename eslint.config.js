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
    // Domain services hold no state in their modules: a registry, cache, queue or flag there is shared by
    // every gateway built in the process (tests build several), and config read into it goes stale.
    // State lives in what a module's factory returns. Constant tables are `ReadonlySet`/`ReadonlyMap`.
    files: ['src/domain/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'Program > VariableDeclaration[kind="let"], Program > ExportNamedDeclaration > VariableDeclaration[kind="let"]',
          message: 'module-level `let` in src/domain: keep the state in the module\'s factory (docs/architecture.md, "State")',
        },
        {
          selector: ':matches(Program, Program > ExportNamedDeclaration) > VariableDeclaration > VariableDeclarator:not([id.typeAnnotation.typeAnnotation.typeName.name=/^Readonly/]) > NewExpression.init:not([callee.name="Schema"])',
          message: 'module-level mutable instance in src/domain: keep the state in the module\'s factory, or type a constant table ReadonlySet/ReadonlyMap (docs/architecture.md, "State")',
        },
      ],
    },
  },
  {
    files: ['bench/**', 'packages/embedded-mongo/src/cli.ts', 'packages/embedded-mongo/bench/**', 'packages/embedded-mongo/test/**', 'codegen.ts', 'test/**', 'examples/merchant-express/main.ts', 'examples/frontend-status/main.ts'],
    rules: { 'no-console': 'off' },
  },
);
