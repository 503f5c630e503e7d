/** Types for test/setup/sequencer.mjs (a plain-JS jest sequencer), for the test that drives it. */
export default class CommittedWeightSequencer {
  constructor(options: object);
  sort<T extends { path: string }>(tests: T[]): T[];
}
