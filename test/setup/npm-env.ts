/**
 * The suite runs the same whether started as `npm test` or as jest directly: npm's own variables
 * (npm_command above all, which makes the CLI show suggested commands as `npx consort …`, see
 * src/cli/main.ts suggestionsFor) are removed from every test file's environment, and so from the
 * children it starts with process.env. Tests of that behaviour pass npm_command themselves.
 */
for (const name of Object.keys(process.env))
  if (name === 'npm_command' || name.startsWith('npm_lifecycle_')) delete process.env[name];
