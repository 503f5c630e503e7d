/**
 * `${VAR}` references in a project's `.env`, expanded as node-pg-migrate's CLI does where the
 * project has `dotenv-expand`: its bin (7.x through 9.x alike) calls `dotenv.config()`, then, when
 * `dotenv-expand` resolves and exports `expand` (6 and later; 5 exported a bare function, which it
 * skips), `expand(parsed)` against `process.env`. The rules are dotenv-expand 12's (the current
 * line: 13 only moved to dotenv 17): `$VAR` and `${VAR}`, `${VAR:-default}` / `${VAR-default}`
 * (the default when VAR is empty or unset), `${VAR:+alt}` / `${VAR+alt}` (alt when VAR is set),
 * earlier lines' expanded values, a variable the environment already held winning over the file's,
 * and `\$` for a literal dollar. Pure: the migration child applies it to its own environment, so a
 * reference reaches only what the migrations are given anyway. dotenv-expand 1000's command
 * substitution (`$(cmd)`) and decryption are not done: nothing of a `.env` is run.
 */

const REFERENCE = /(?<!\\)\${([^{}]+)}|(?<!\\)\$([A-Za-z_][A-Za-z0-9_]*)/g;
const OPERATOR = /(:\+|\+|:-|-)/;

const unescape = (value: string): string => value.replace(/\\\$/g, '$');

/** One value with its references replaced, from `running` (earlier lines, expanded) under `env`. */
function expandValue(
  value: string,
  env: Readonly<Record<string, string | undefined>>,
  running: Readonly<Record<string, string>>,
): string {
  const scope: Record<string, string | undefined> = { ...running, ...env };
  const seen = new Set<string>();
  let result = value;
  REFERENCE.lastIndex = 0;
  for (let match = REFERENCE.exec(result); match !== null; match = REFERENCE.exec(result)) {
    seen.add(result);
    const [template, braced, bare] = match;
    const expression = braced ?? bare ?? '';
    const splitter = OPERATOR.exec(expression)?.[0];
    const parts = splitter === undefined ? [expression] : expression.split(splitter);
    const key = parts.shift() ?? '';
    const rest = splitter === undefined ? '' : parts.join(splitter);
    let replacement: string;
    if (splitter === ':+' || splitter === '+') replacement = scope[key] ? rest : '';
    else {
      const found = scope[key];
      // A value that leads back to what is being expanded (A=${A}) takes the default instead.
      replacement = found && !seen.has(found) ? found : rest;
    }
    // String.replace as dotenv-expand calls it: the first occurrence, `$&`-style patterns and all.
    result = result.replace(template, replacement);
    if (result === running[key]) break;
    REFERENCE.lastIndex = 0;
  }
  return result;
}

/**
 * What dotenv-expand writes into `env` for `parsed` (a file's variables in their order; `env`:
 * the environment after dotenv loaded them, which already holds each one it lacked, unexpanded):
 * every key of `parsed`, expanded, except one the environment held before with another value,
 * which keeps it.
 */
export function expandDotenv(
  parsed: Readonly<Record<string, string>>,
  env: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const running: Record<string, string> = {};
  for (const [key, raw] of Object.entries(parsed)) {
    const held = env[key];
    const value = held && held !== raw ? held : expandValue(raw, env, running);
    running[key] = unescape(value);
  }
  return running;
}
