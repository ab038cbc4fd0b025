import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import { flowfleetPlugin } from './tools/eslint/allowed-imports-rule.js';

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      'coverage/**',
      'test/artifacts/**',
      '.turbo/**',
      '.venv/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    plugins: { flowfleet: flowfleetPlugin },
    rules: {
      'flowfleet/allowed-imports': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-restricted-syntax': [
        'error',
        {
          selector: 'ExportAllDeclaration',
          message: 'Name each export (STYLE.md rule 2): no `export *`.',
        },
        {
          selector: 'ExportDefaultDeclaration',
          message: 'Named exports only (STYLE.md rule 2).',
        },
      ],
    },
  },
  {
    files: ['eslint.config.js', 'vitest.config.ts', 'vitest.soak.config.ts'],
    rules: { 'no-restricted-syntax': 'off' },
  },
);
