/** Secrets never leave the process: connection strings are shown with their password masked. */
export const MASK = '****';

export function maskUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = MASK;
    for (const key of ['password', 'token']) if (u.searchParams.has(key)) u.searchParams.set(key, MASK);
    return u.toString();
  } catch {
    return url.replace(/(\/\/[^:/@\s]+:)[^@\s]+@/g, `$1${MASK}@`);
  }
}

/** Replace every occurrence of the given secrets (and any URL password) in free text. */
export function redact(text: string, secrets: readonly string[] = []): string {
  let out = text.replace(/(postgres(?:ql)?:\/\/[^:/@\s]+:)[^@\s]+@/g, `$1${MASK}@`);
  for (const s of secrets) if (s && s.length >= 4) out = out.split(s).join(MASK);
  return out;
}

/** Every form in which a connection string's secret can show up: the URL, its password raw and decoded. */
export function connectionSecrets(url: string): string[] {
  const found = new Set<string>([url]);
  const password = /^[a-z][a-z0-9+.-]*:\/\/[^:/@\s]*:([^@\s]+)@/i.exec(url)?.[1];
  if (password) {
    found.add(password);
    try {
      found.add(decodeURIComponent(password));
    } catch {
      // not percent-encoded: the raw form is all there is
    }
  }
  return [...found];
}
