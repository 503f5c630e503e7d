/** Why a `command` agent failed, as a turn's reason: the line that names the error, not the runtime's banner. */
import { failureLine } from '../../src/agents/command.js';

it.each([
  [
    'a Node crash ends with its stack and version',
    "node:fs:581\n  return binding.open(\n                 ^\n\nError: EROFS: read-only file system, open '.git/hooks/pre-commit'\n    at Object.openSync (node:fs:581:18)\n    at writeFileSync (node:fs:2343:35)\n{\n  errno: -30,\n  code: 'EROFS'\n}\n\nNode.js v20.20.2\n",
    "Error: EROFS: read-only file system, open '.git/hooks/pre-commit'",
  ],
  [
    'a Python traceback ends with the exception',
    'Traceback (most recent call last):\n  File "agent.py", line 3, in <module>\n    main()\nValueError: no spec found\n',
    'ValueError: no spec found',
  ],
  ['a plain message is the last line', 'working…\nsomething went wrong here\n', 'something went wrong here'],
  ['nothing at all', '\n\n', ''],
])('%s', (_what, output, line) => {
  expect(failureLine(output)).toBe(line);
});
