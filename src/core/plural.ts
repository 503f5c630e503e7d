/** "1 migration", "2 migrations", "0 migrations": counts in messages read as English, never "(s)". */
export function count(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`;
}
