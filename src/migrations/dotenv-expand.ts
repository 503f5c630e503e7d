/**
 * `${VAR}` references in a project's `.env`, expanded as node-pg-migrate's CLI does where the
 * project has `dotenv-expand`: its bin (7.x through 9.x alike) calls `dotenv.config()`, then, when
 * `dotenv-expand` resolves and exports `expand` (6 and later; 5 exported a bare function, which it
 * skips), `expand(parsed)` against `process.env`. Two sets of rules, each its versions' own:
 *
 * - `12` (dotenv-expand 6 through 13; 12's rewrite, which 13 kept): `$VAR` and `${VAR}`,
 *   `${VAR:-default}` and `${VAR-default}` (the default when VAR is empty or unset),
 *   `${VAR:+alt}` and `${VAR+alt}` (alt when VAR is non-empty), a reference followed through the
 *   raw value it leads to, a variable the environment already held winning over the file's.
 *   6 to 11 differ from it only in corner cases (11 did not follow a reference into a value the
 *   environment held before); those are not reproduced.
 * - `1000` (dotenv-expand 1000, through `@dotenvx/primitives`): `-` and `+` tell an unset variable
 *   from an empty one (`:-`, `:+` do not), an earlier line is seen expanded, and a reference to a
 *   later line is its raw value, not followed further.
 *
 * Both keep a variable the environment held before with another value, and turn `\$` into `$`.
 * Pure: the migration child applies it to its own environment, so a reference reaches only what
 * the migrations are given anyway. dotenv-expand 1000's command substitution (`$(cmd)`, left as
 * written) and decryption are not done: nothing of a `.env` is run.
 */

/** Which dotenv-expand's rules (see above). */
export type ExpandRules = '12' | '1000';

const REFERENCE = /(?<!\\)\${([^{}]+)}|(?<!\\)\$([A-Za-z_][A-Za-z0-9_]*)/g;
const OPERATOR = /(:\+|\+|:-|-)/;

const unescape = (value: string): string => value.replace(/\\\$/g, '$');

type Env = Readonly<Record<string, string | undefined>>;

/**
 * A reference's name, operator and operand, split as dotenv-expand splits it: with no operator
 * `String.split(null)` splits on the text "null", and that is kept (`${nullable}` is `able`).
 */
function reference(expression: string): { key: string; op: string | null; rest: string } {
  const op = OPERATOR.exec(expression)?.[0] ?? null;
  const sep = op ?? 'null';
  const parts = expression.split(sep);
  const key = parts.shift() ?? '';
  return { key, op, rest: parts.join(sep) };
}

/** One value with its references replaced, from `running` (earlier lines, expanded) under `env`: 12's rules. */
function expandValue12(value: string, env: Env, running: Readonly<Record<string, string>>): string {
  const scope: Record<string, string | undefined> = { ...running, ...env };
  const seen = new Set<string>();
  let result = value;
  REFERENCE.lastIndex = 0;
  for (let match = REFERENCE.exec(result); match !== null; match = REFERENCE.exec(result)) {
    seen.add(result);
    const [template, braced, bare] = match;
    const { key, op, rest } = reference(braced || bare || '');
    let replacement: string;
    if (op === ':+' || op === '+') replacement = scope[key] ? rest : '';
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

/** The same under 1000's rules. */
function expandValue1000(value: string, env: Env, running: Readonly<Record<string, string>>): string {
  const scope: Record<string, string | undefined> = { ...running, ...env };
  let result = value;
  REFERENCE.lastIndex = 0;
  for (let match = REFERENCE.exec(result); match !== null; match = REFERENCE.exec(result)) {
    const [template, braced, bare] = match;
    const { key, op, rest } = reference(braced || bare || '');
    const set = Object.prototype.hasOwnProperty.call(scope, key);
    const found = scope[key];
    const replacement =
      op === ':-'
        ? found || rest
        : op === '-'
          ? set
            ? String(found)
            : rest
          : op === ':+'
            ? found
              ? rest
              : ''
            : op === '+'
              ? set
                ? rest
                : ''
              : found || '';
    result = result.replace(template, replacement);
    if (result === found) break;
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
  env: Env,
  rules: ExpandRules = '12',
): Record<string, string> {
  const running: Record<string, string> = {};
  for (const [key, raw] of Object.entries(parsed)) {
    const held = env[key];
    let value: string;
    if (held && held !== raw) value = held;
    else if (rules === '12') value = expandValue12(raw, env, running);
    else {
      // dotenv.config() put earlier lines into the environment unexpanded: their expanded values are seen instead.
      const scope: Record<string, string | undefined> = { ...env };
      for (const k of Object.keys(running)) if (scope[k] === parsed[k]) delete scope[k];
      value = expandValue1000(raw, scope, running);
    }
    running[key] = unescape(value);
  }
  return running;
}
