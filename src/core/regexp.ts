/** `s` as a regular expression that matches exactly `s`: a file or branch name inside a larger pattern. */
export function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
