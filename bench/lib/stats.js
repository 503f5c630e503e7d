/** Order statistics over timing samples (milliseconds). */

export function summarize(samples) {
  if (samples.length === 0) return { runs: 0, median: null, p95: null, min: null, max: null, mean: null };
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  // Nearest-rank percentile: with few runs p95 is the slowest run, which is what it should be.
  const p95 = sorted[Math.max(0, Math.ceil(0.95 * sorted.length) - 1)];
  const mean = sorted.reduce((a, b) => a + b, 0) / sorted.length;
  return { runs: sorted.length, median: round(median), p95: round(p95), min: round(sorted[0]), max: round(sorted.at(-1)), mean: round(mean) };
}

export function round(n, digits = 1) {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
