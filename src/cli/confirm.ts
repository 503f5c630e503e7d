/**
 * A local approval is a person at a terminal. `consort approve` reads its confirmation from the
 * controlling terminal (/dev/tty), never from stdin or a flag: a process an agent's turn started
 * has no controlling terminal (turns run in their own session, without stdin), so it cannot
 * approve a gate in someone's name, even if it outlived its turn or wrote a script for later.
 */
import { open } from 'node:fs/promises';
import { ConsortError } from '../core/errors.js';

export type Confirm = (prompt: string, expected: string) => Promise<boolean>;

/** Ask on /dev/tty; true when the person typed `expected`. */
export const terminalConfirm: Confirm = async (prompt, expected) => {
  const tty = await open('/dev/tty', 'r+').catch((e: unknown) => {
    throw new ConsortError(
      'invalid-input',
      'Approving a gate needs a person at an interactive terminal to confirm the approval.',
      {
        hint: 'Run it yourself in a terminal. On a pull request, approve with a `/consort approve` comment instead.',
        cause: e,
      },
    );
  });
  try {
    await tty.write(prompt);
    const buffer = Buffer.alloc(256);
    const { bytesRead } = await tty.read(buffer, 0, buffer.length, null);
    return buffer.subarray(0, bytesRead).toString('utf8').trim() === expected;
  } finally {
    await tty.close();
  }
};
