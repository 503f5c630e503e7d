// `npm run bench:app`: how fast the GitHub App reacts, with GitHub faked locally at zero latency.
//
//  1. Latency: signed pull_request.opened webhooks, one at a time, from the moment the request is
//     sent to the moment the App's POST /check-runs reaches the fake GitHub (the webhook is
//     recorded, enqueued, picked up by a worker, and the check run created), plus the time to the
//     webhook's acknowledgement. Target: under 300 ms.
//  2. Throughput: a burst of signed pull_request.synchronize webhooks from concurrent clients,
//     acknowledged by one App process while real checks (the PR lane on the embedded PostgreSQL,
//     suite `true`) run in the background; bounded in count and duration.
//
// The App runs in a child process (bench/app-server.mjs); everything is on loopback. Results go
// to bench/results/app.json. Everything it starts is undone through bench/lib/cleanup.js, also on
// SIGINT/SIGTERM/SIGHUP: the App is stopped, its embedded server stopped and its data removed.
import { fork } from 'node:child_process';
import { createHmac, generateKeyPairSync, randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { EmbeddedServer } from '../lib/src/branches/local/server.js';
import { scenarioRepo } from '../lib/src/demo/scenarios.js';
import { cleanup, installSignalHandlers, onCleanup, wasInterrupted } from './lib/cleanup.js';
import { benchArgs, envInteger } from './lib/args.js';

benchArgs(import.meta.url); // --help; no options (settings come from the environment, see above)

const exec = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));
const LATENCY_WEBHOOKS = envInteger('BENCH_LATENCY_WEBHOOKS', 40);
const BURST_WEBHOOKS = envInteger('BENCH_BURST_WEBHOOKS', 2000);
const BURST_CLIENTS = envInteger('BENCH_BURST_CLIENTS', 32);
const BURST_MAX_MS = envInteger('BENCH_BURST_MAX_MS', 20_000);
const SECRET = randomBytes(16).toString('hex');

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const ms = (x) => Math.round(x * 10) / 10;
const log = (m) => process.stderr.write(`${m}\n`);

main().then(
  async () => {
    await cleanup(log);
    process.exit(0);
  },
  async (e) => {
    if (wasInterrupted()) return cleanup(log); // the signal handler exits once cleanup is done
    log(`FAILED: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    await cleanup(log);
    process.exit(1);
  },
);

/** Stop the App: gracefully once it is ready (it closes its queue and store), else at once. */
async function stopApp(child, ready) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  if (ready() && child.connected) child.send('stop');
  else child.kill('SIGTERM');
  const limit = new Promise((r) => setTimeout(r, 45_000).unref());
  if ((await Promise.race([exited.then(() => true), limit])) !== true) {
    child.kill('SIGKILL');
    await exited;
  }
}

async function main() {
  await installSignalHandlers(log);

  // --- the repository the checks run on: the example shop with a suite of `true` ---
  const repo = await scenarioRepo('clean', {
    extraMigrations: [
      { file: '.github/consort.yml', content: 'database:\n  seed:\n    file: seed.sql\nsuite:\n  command: "true"\n' },
    ],
  });
  const archive = async (sha) =>
    (
      await exec('git', ['archive', '--format=tar.gz', `--prefix=o-r-${sha.slice(0, 7)}/`, sha], {
        cwd: repo.dir,
        encoding: 'buffer',
        maxBuffer: 1 << 26,
      })
    ).stdout;
  onCleanup('remove the example repository', () => repo.dispose());
  const headTar = await archive(repo.headSha);
  const baseTar = await archive(repo.baseSha);

  // --- a fake GitHub: answers at once, records when each check run is created ---
  const created = new Map(); // head sha -> time the POST arrived
  const waiters = new Map();
  let nextId = 1;
  const runs = []; // check runs made, for the App's look before it creates one
  const counts = { checkRunsCreated: 0, checkRunsCompleted: 0, comments: 0, tarballs: 0 };
  const github = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url, 'http://x');
      const json = (status, body) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.method === 'POST' && /\/app\/installations\/\d+\/access_tokens$/.test(url.pathname))
        return json(201, { token: 'ghs_bench', expires_at: new Date(Date.now() + 3_600_000).toISOString() });
      if (req.method === 'POST' && url.pathname.endsWith('/check-runs')) {
        const at = performance.now();
        const body = JSON.parse(Buffer.concat(chunks).toString());
        const sha = body.head_sha;
        counts.checkRunsCreated++;
        if (!created.has(sha)) created.set(sha, at);
        waiters.get(sha)?.(at);
        const run = { id: nextId++, name: body.name, head_sha: sha, external_id: body.external_id ?? null };
        runs.push({ ...run, status: body.status ?? 'queued', conclusion: null });
        return json(201, run);
      }
      // The App looks for a check run an earlier attempt made before it creates one.
      const listed = /\/commits\/([^/]+)\/check-runs$/.exec(url.pathname);
      if (req.method === 'GET' && listed) {
        const mine = runs.filter((r) => r.head_sha === listed[1]);
        return json(200, { total_count: mine.length, check_runs: mine });
      }
      if (req.method === 'PATCH' && /\/check-runs\/\d+$/.test(url.pathname))
        return (counts.checkRunsCompleted++, json(200, {}));
      // Read before more than 50 annotations are added (they append): its annotation count.
      const one = /\/check-runs\/(\d+)$/.exec(url.pathname);
      if (req.method === 'GET' && one) {
        const run = runs.find((r) => r.id === Number(one[1]));
        if (run) return json(200, { ...run, output: { title: null, summary: null, text: null, annotations_count: 0 } });
      }
      if (req.method === 'GET' && /\/tarball\//.test(url.pathname)) {
        counts.tarballs++;
        const sha = url.pathname.split('/').pop();
        return res
          .writeHead(200, { 'content-type': 'application/x-gzip' })
          .end(sha === repo.baseSha ? baseTar : headTar);
      }
      if (req.method === 'GET' && /\/compare\//.test(url.pathname))
        return json(200, { merge_base_commit: { sha: repo.baseSha } });
      if (req.method === 'GET' && /\/comments$/.test(url.pathname)) return json(200, []);
      if (req.method === 'POST' && /\/comments$/.test(url.pathname))
        return (counts.comments++, json(201, { id: nextId++ }));
      json(404, { message: `bench fake GitHub: no route for ${req.method} ${url.pathname}` });
    });
  });
  await new Promise((r) => github.listen(0, '127.0.0.1', r));
  onCleanup('close the fake GitHub', () => {
    github.closeAllConnections();
    return new Promise((r) => github.close(r));
  });
  const githubUrl = `http://127.0.0.1:${github.address().port}`;

  // --- the App, in its own process ---
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'consort-bench-app-'));
  onCleanup(`stop the App's embedded server and remove ${dataDir}`, async () => {
    await new EmbeddedServer(path.join(dataDir, 'postgres')).stop().catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true });
  });
  await chmod(dataDir, 0o755); // as root, the embedded server runs as the postgres OS user, which must reach it
  const { privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  const child = fork(path.join(here, 'app-server.mjs'), [], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      APP_ID: '1',
      PRIVATE_KEY: privateKey,
      WEBHOOK_SECRET: SECRET,
      PORT: '0',
      HOST: '127.0.0.1',
      GITHUB_API_URL: githubUrl,
      LOG_LEVEL: 'warn',
      CONSORT_APP_DATA_DIR: dataDir,
      CONSORT_APP_CHECK_CONCURRENCY: '2',
      CONSORT_APP_QUICK_CONCURRENCY: '4',
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let appReady = false;
  onCleanup('stop the App', () => stopApp(child, () => appReady));
  const appUrl = await new Promise((resolve, reject) => {
    child.once('message', (m) => resolve(m.ready));
    child.once('exit', (code) => reject(new Error(`the App exited (${code}) before it was ready`)));
  });
  appReady = true;
  console.error(`App ready at ${appUrl}; fake GitHub at ${githubUrl}`);

  // --- webhooks ---
  const agent = new http.Agent({ keepAlive: true, maxSockets: BURST_CLIENTS });
  onCleanup('close the webhook connections', () => agent.destroy());
  const template = (action, number, head) =>
    JSON.stringify({
      action,
      number,
      installation: { id: 7 },
      sender: { login: 'bench', type: 'User' },
      repository: {
        id: 424242,
        name: 'shop',
        full_name: 'bench/shop',
        owner: { login: 'bench' },
        default_branch: 'main',
      },
      pull_request: {
        number,
        updated_at: new Date().toISOString(),
        merged: false,
        merge_commit_sha: null,
        head: { sha: head, ref: `feature-${number}`, repo: { full_name: 'bench/shop' } },
        base: { sha: repo.baseSha, ref: 'main', repo: { full_name: 'bench/shop' } },
      },
    });
  let delivery = 0;
  function send(body) {
    const signature = `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
    const t0 = performance.now();
    return new Promise((resolve, reject) => {
      const req = http.request(
        `${appUrl}/api/github/webhooks`,
        {
          method: 'POST',
          agent,
          headers: {
            'content-type': 'application/json',
            'x-github-event': 'pull_request',
            'x-github-delivery': `bench-${++delivery}`,
            'x-hub-signature-256': signature,
          },
        },
        (res) => {
          res.resume();
          res.on('end', () =>
            res.statusCode === 200
              ? resolve({ t0, ack: performance.now() - t0 })
              : reject(new Error(`webhook answered ${res.statusCode}`)),
          );
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }
  const sha = () => randomBytes(20).toString('hex');

  // 1. latency, one webhook at a time (checks of the earlier ones run meanwhile)
  const latency = [];
  const acks = [];
  for (let i = 0; i < LATENCY_WEBHOOKS; i++) {
    const head = i === 0 ? repo.headSha : sha();
    const createdAt = new Promise((resolve) => waiters.set(head, resolve));
    const { t0, ack } = await send(template('opened', 1000 + i, head));
    const at = await createdAt;
    latency.push(at - t0);
    acks.push(ack);
    if (i === 0) log(`first webhook: check run created after ${ms(at - t0)} ms`);
    waiters.delete(head);
    await new Promise((r) => setTimeout(r, 100));
  }

  // 2. throughput: a burst from concurrent clients while checks run
  const burstAcks = [];
  let sent = 0;
  const burstStart = performance.now();
  const deadline = burstStart + BURST_MAX_MS;
  async function client() {
    while (sent < BURST_WEBHOOKS && performance.now() < deadline) {
      const n = sent++;
      const { ack } = await send(template('synchronize', 2000 + (n % 20), sha()));
      burstAcks.push(ack);
    }
  }
  await Promise.all(Array.from({ length: BURST_CLIENTS }, client));
  const burstSeconds = (performance.now() - burstStart) / 1000;

  await new Promise((r) => setTimeout(r, 3000)); // let the background catch its breath before stopping
  await cleanup(log); // the App, its server and data, the connections, the fake GitHub, the repository

  const result = {
    when: new Date().toISOString(),
    node: process.version,
    cpus: os.cpus().length,
    cpu: os.cpus()[0]?.model,
    latency: {
      webhooks: LATENCY_WEBHOOKS,
      receiptToCheckRunMs: { median: ms(pct(latency, 50)), p95: ms(pct(latency, 95)), max: ms(Math.max(...latency)) },
      acknowledgedMs: { median: ms(pct(acks, 50)), p95: ms(pct(acks, 95)) },
    },
    throughput: {
      webhooks: burstAcks.length,
      clients: BURST_CLIENTS,
      seconds: ms(burstSeconds),
      perSecond: Math.round(burstAcks.length / burstSeconds),
      acknowledgedMs: { median: ms(pct(burstAcks, 50)), p95: ms(pct(burstAcks, 95)) },
    },
    background: counts,
  };
  await mkdir(path.join(here, 'results'), { recursive: true });
  await writeFile(path.join(here, 'results', 'app.json'), `${JSON.stringify(result, null, 2)}\n`);
  console.log(
    `webhook receipt → check run created: median ${result.latency.receiptToCheckRunMs.median} ms, p95 ${result.latency.receiptToCheckRunMs.p95} ms (${LATENCY_WEBHOOKS} webhooks; acknowledged in median ${result.latency.acknowledgedMs.median} ms)`,
  );
  console.log(
    `burst: ${result.throughput.webhooks} webhooks acknowledged in ${result.throughput.seconds} s = ${result.throughput.perSecond}/s by one process (${BURST_CLIENTS} clients; ack median ${result.throughput.acknowledgedMs.median} ms, p95 ${result.throughput.acknowledgedMs.p95} ms) while checks ran: ${counts.checkRunsCreated} check runs created, ${counts.checkRunsCompleted} completed`,
  );
}
