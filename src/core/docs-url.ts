/**
 * Where a message sends the reader for more: the documentation on GitHub, not a path in this
 * repository (docs/ is not in the npm package, so an installed user has no such file).
 */
export const DOCS_BASE = 'https://github.com/consort/consort/blob/main/docs';

/** The page (with an optional #anchor) under docs/, e.g. docsUrl('configuration.md'). */
export function docsUrl(page: string): string {
  return `${DOCS_BASE}/${page}`;
}
