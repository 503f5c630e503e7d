// The App under benchmark, in its own process (started by bench/app.mjs): the real App
// (lib/app/start.js: store, queue, workers, lane, HTTP server) with settings from the
// environment. One difference from `npm run app`: Octokit's client-side pacing of writes (≥ 1 s
// apart per installation, a GitHub secondary-rate-limit courtesy) and retries are off, so the
// figures are the App's own time, not GitHub's pacing.
import { ProbotOctokit } from 'probot';
import { startApp } from '../lib/app/start.js';
import { parseAppSettings } from '../lib/app/settings.js';

const Octokit = ProbotOctokit.defaults((options = {}) => ({
  ...options,
  retry: { enabled: false },
  throttle: { ...options.throttle, enabled: false },
}));
const app = await startApp(parseAppSettings(process.env), { Octokit, pollingSeconds: 0.5 });
process.send?.({ ready: app.url });
process.on('message', (message) => {
  if (message !== 'stop') return;
  void app.close().finally(() => {
    process.send?.({ stopped: true });
    process.exit(0);
  });
});
