// Lint TypeScript with the recommended rules of typescript-eslint; type-aware rules would double
// the run time for little gain here, because tsc --noEmit (npm run typecheck) already runs strict.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // test/fixtures/histories: other projects' migration histories, kept as those projects write them;
  // test/fixtures/locate-corpus: migrations written the way such projects write them.
  {
    ignores: [
      'lib/**',
      'dist/**',
      'node_modules/**',
      'coverage/**',
      'examples/**/node_modules/**',
      'test/fixtures/histories/**',
      'test/fixtures/locate-corpus/**',
      'vscode/dist/**',
      'vscode/node_modules/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  // Every pg client and pool comes from src/db/sql.ts (newClient / newPool): one made here without
  // an 'error' listener ends the process when its server goes away (test/db/lost-connections.test.ts).
  {
    files: ['src/**/*.ts', 'app/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "NewExpression[callee.object.name='pg'][callee.property.name=/^(Client|Pool)$/]",
          message: 'Make pg clients and pools with newClient / newPool from src/db/sql.ts.',
        },
      ],
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'pg',
              importNames: ['Client', 'Pool'],
              message: 'Make pg clients and pools with newClient / newPool from src/db/sql.ts.',
            },
          ],
        },
      ],
    },
  },
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        Buffer: 'readonly',
        performance: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
    },
  },
);
