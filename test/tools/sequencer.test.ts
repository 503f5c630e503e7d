/**
 * The suite's own file order (test/setup/sequencer.mjs): without jest's timings, the committed
 * durations put the slowest files first; a file they do not list (new) runs first, as jest runs a
 * file it has no timing of; and jest's own timing, where its cache has one, wins
 * (scripts/test-durations.mjs regenerates the list from a whole run).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SEQUENCER = new URL('../setup/sequencer.mjs', import.meta.url).href;

interface FakeTest {
  path: string;
  duration?: number;
  context: { config: { cache: boolean; cacheDirectory: string; id: string }; hasteFS: { getSize(): number } };
}

async function sequencer(): Promise<{ sort(t: FakeTest[]): FakeTest[]; _cache: Map<unknown, unknown> }> {
  const { default: Sequencer } = (await import(SEQUENCER)) as { default: new (o: object) => never };
  return new Sequencer({});
}

const context = { config: { cache: false, cacheDirectory: '/nonexistent', id: 'x' }, hasteFS: { getSize: () => 1 } };
const file = (rel: string): FakeTest => ({ path: path.join(ROOT, rel), context });
const names = (tests: FakeTest[]) => tests.map((t) => path.relative(ROOT, t.path).split(path.sep).join('/'));

it('starts the slowest committed files first, and a file not listed before them', async () => {
  const durations = JSON.parse(readFileSync(path.join(ROOT, 'test/setup/durations.json'), 'utf8')) as Record<
    string,
    number
  >;
  const listed = Object.entries(durations).sort((a, b) => a[1] - b[1]);
  const [fast, slow] = [listed[0]![0], listed[listed.length - 1]![0]];
  const order = names((await sequencer()).sort([file(fast), file('test/tools/not-listed.test.ts'), file(slow)]));
  expect(order).toEqual(['test/tools/not-listed.test.ts', slow, fast]);
});

it("takes jest's own timing over the committed one", async () => {
  const s = await sequencer();
  const slow = 'test/lanes/check-histories.test.ts';
  const quick = 'test/core/regexp.test.ts';
  // jest's cache (what a previous run on this machine measured): the committed slow file was quick here.
  s._cache.set(context, { [path.join(ROOT, slow)]: [1, 1], [path.join(ROOT, quick)]: [1, 90_000] });
  expect(names(s.sort([file(slow), file(quick)]))).toEqual([quick, slow]);
});
