/**
 * Why a test failed, from what its JUnit report says: an assertion (what RED must show), or an
 * exception the test did not expect (a ReferenceError, a TypeError from calling what does not
 * exist yet, a NameError…), which proves only that something is missing, not that the behaviour
 * is wrong. Read from the failure's `type` (vitest, mocha, jest via Consort's reporter, JUnit 5),
 * else the exception named at the head of the failure text (jest-junit) or as its `cause`
 * (node:test wraps every failure in ERR_TEST_FAILURE).
 */

export interface FailureFacts {
  type?: string;
  message?: string;
  details?: string;
}

const ASSERTION =
  /(^|\.)(Jest)?Assertion(Failed)?Error$|ERR_ASSERTION|AssertionError|ComparisonFailure|AssertionFailedError|ExpectationFailedException|MultipleFailuresError/;
/** A named error or exception class: `TypeError`, `java.lang.NullPointerException`, `NameError`. */
const EXCEPTION = /(?:^|\.)([A-Z][A-Za-z0-9_$]*(?:Error|Exception))$/;
/** `TypeError: x is not a function`, `ReferenceError [ERR_X]: …`, `Uncaught TypeError: …`. */
const HEAD = /^\s*(?:Uncaught\s+)?([A-Za-z_$][\w$.]*(?:Error|Exception))(?:\s*\[[\w$]+\])?:/;

function exceptionName(name: string | undefined): string | null {
  if (name === undefined || ASSERTION.test(name)) return null;
  const m = EXCEPTION.exec(name);
  // A bare `Error` says nothing about why (jest-junit labels assertion failures `Error` too).
  return m && m[1] !== 'Error' ? m[1]! : null;
}

/** The exception class when the failure is one; null for an assertion (or when the report cannot tell). */
export function failureException(f: FailureFacts): string | null {
  if (f.type && ASSERTION.test(f.type)) return null;
  const fromType = exceptionName(f.type);
  if (fromType) return fromType;
  const text = `${f.details ?? ''}`;
  if (/ERR_TEST_FAILURE/.test(text) || f.type === 'testCodeFailure') {
    // node:test: the real error is the cause.
    const cause = /cause:\s*(?:\[)?([A-Za-z_$][\w$]*(?:Error|Exception))\b/.exec(text);
    return cause ? exceptionName(cause[1]) : null;
  }
  for (const line of [f.message ?? '', text.split('\n').find((l) => l.trim() !== '') ?? '']) {
    const head = HEAD.exec(line);
    if (head) return exceptionName(head[1]);
  }
  return null;
}
