/**
 * The packaged extension in a real VS Code: code-server (VS Code in the browser, from the npm
 * registry) driven by Playwright with Debian's Chromium. The .vsix is built with `npm run package`
 * in vscode/, installed with `code-server --install-extension`, and a repository is opened; the
 * test switches git branches outside the editor (as a terminal would) and sees the status bar
 * change, the branch appear in the tree, and the paired database (PostgreSQL at 127.0.0.1:5432)
 * receive the branch's migrations. From the tree it creates, resets and deletes a branch (each
 * destructive step confirmed in a dialog), and approves a TDD-lane gate: the name in an input box,
 * the confirmation typed into the editor terminal that `consort approve` asks on.
 *
 * Needs what scripts/setup-vscode-test.sh installs (code-server + Node 24 under
 * CONSORT_CODE_SERVER_HOME, default /opt/consort-vscode-test; chromium; vscode/node_modules).
 * Missing pieces fail the test with that instruction: it is never skipped.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { access, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { addGatedFeature } from '../dashboard/fixture.js';
import { postgresTestProvider, query, type TestProvider } from '../helpers/servers.js';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;
const repoRoot = path.resolve('.');
const home = process.env.CONSORT_CODE_SERVER_HOME ?? '/opt/consort-vscode-test';
const codeServer = path.join(home, 'code-server.sh');
const chromiumPath = process.env.CONSORT_CHROMIUM ?? '/usr/bin/chromium';
const vsix = path.join(repoRoot, 'vscode', 'consort-pairing.vsix');

// playwright-core is a dependency of vscode/ (not of the root package): loaded from there with
// createRequire, so only the members used are typed here.
interface Locator {
  filter(o: { hasText: string | RegExp }): Locator;
  first(): Locator;
  waitFor(o: { timeout: number; state?: 'attached' | 'detached' | 'visible' | 'hidden' }): Promise<void>;
  innerText(): Promise<string>;
  click(o?: { button: 'right' }): Promise<void>;
  hover(): Promise<void>;
  fill(text: string, o?: { timeout: number }): Promise<void>;
  locator(selector: string): Locator;
  count(): Promise<number>;
}
interface Page {
  goto(url: string, o: { waitUntil: 'domcontentloaded'; timeout: number }): Promise<unknown>;
  locator(selector: string): Locator;
  keyboard: { press(key: string): Promise<void>; type(text: string): Promise<void> };
  screenshot(o: { path: string }): Promise<unknown>;
}
interface Browser {
  newPage(o: { viewport: { width: number; height: number } }): Promise<Page>;
  close(): Promise<void>;
}
interface Playwright {
  chromium: { launch(o: { executablePath: string; args: string[] }): Promise<Browser> };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

async function waitForHttp(url: string, child: ChildProcess, log: () => string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`code-server exited (${child.exitCode}): ${log()}`);
    const ok = await fetch(url).then(
      (r) => r.status < 500,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`code-server did not answer on ${url} within ${timeoutMs} ms: ${log()}`);
}

let t: TestProvider;
let work: string;
let repo: string;
let server: ChildProcess | undefined;
let serverLog = '';
let browser: Browser | undefined;
let page: Page;
let gitEnv: NodeJS.ProcessEnv;

const git = async (...args: string[]) => (await exec('git', args, { cwd: repo, env: gitEnv })).stdout.trim();
const statusBar = () => page.locator('.statusbar-item').filter({ hasText: 'db:' });

beforeAll(async () => {
  for (const [file, what] of [
    [codeServer, 'code-server'],
    [chromiumPath, 'chromium'],
    [path.join(repoRoot, 'vscode', 'node_modules', 'playwright-core'), 'vscode/node_modules'],
  ]) {
    await access(file!).catch(() => {
      throw new Error(`${what} is missing (${file}): run scripts/setup-vscode-test.sh first`);
    });
  }
  await access(path.join(repoRoot, 'lib', 'src', 'cli', 'main.js')).catch(() => {
    throw new Error('lib/ is missing: npm run build first');
  });
  // The .vsix exactly as users get it.
  await exec('npm', ['run', 'package', '--silent'], {
    cwd: path.join(repoRoot, 'vscode'),
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? os.tmpdir() },
  });
  await access(vsix);

  t = await postgresTestProvider();
  await t.provider.list(); // the namespace's main branch
  work = await mkdtemp(path.join(os.tmpdir(), 'consort-vscode-'));
  repo = path.join(work, 'shop');
  await mkdir(path.join(repo, 'migrations'), { recursive: true });
  gitEnv = {
    PATH: process.env.PATH ?? '',
    HOME: work,
    GIT_AUTHOR_NAME: 't',
    GIT_AUTHOR_EMAIL: 't@example.com',
    GIT_COMMITTER_NAME: 't',
    GIT_COMMITTER_EMAIL: 't@example.com',
  };
  await exec('git', ['init', '-q', '-b', 'main'], { cwd: repo, env: gitEnv });
  await writeFile(
    path.join(repo, 'migrations', '001_items.sql'),
    '-- Up Migration\nCREATE TABLE items (id int);\n-- Down Migration\nDROP TABLE items;\n',
  );
  await writeFile(path.join(repo, '.gitignore'), '.env\n');
  await writeFile(path.join(repo, 'consort.yml'), 'suite:\n  command: "node -e 0"\n');
  await git('add', '.');
  await git('commit', '-qm', 'init');

  const userData = path.join(work, 'user-data');
  const extensions = path.join(work, 'extensions');
  await mkdir(path.join(userData, 'User'), { recursive: true });
  await writeFile(
    path.join(userData, 'User', 'settings.json'),
    JSON.stringify({
      'consort.cli': path.join(repoRoot, 'bin', 'consort.js'),
      'consort.node': process.execPath,
      'security.workspace.trust.enabled': false,
      'workbench.startupEditor': 'none',
      // What the test does not use and VS Code starts anyway (Copilot Chat's extension at startup,
      // among others): off, so the editor's CPU goes to the extension under test.
      'chat.disableAIFeatures': true,
      'github.gitAuthentication': false,
      'merge-conflict.autoNavigateNextConflict.enabled': false,
      'merge-conflict.codeLens.enabled': false,
      'merge-conflict.decorators.enabled': false,
      'debug.javascript.autoAttachFilter': 'disabled',
      'emmet.showExpandedAbbreviation': 'never',
      'terminal.integrated.suggest.enabled': false,
      'workbench.enableExperiments': false,
      'extensions.ignoreRecommendations': true,
      'git.autofetch': false,
      'extensions.autoCheckUpdates': false,
      'extensions.autoUpdate': false,
      'telemetry.telemetryLevel': 'off',
      'update.mode': 'none',
      'git.autorefresh': true,
      // The DOM renderer, so the test reads the terminal as a person reads it.
      'terminal.integrated.gpuAcceleration': 'off',
    }),
  );
  const csEnv: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '',
    HOME: work,
    LANG: 'C.UTF-8',
    CONSORT_PROVIDER: 'postgres',
    CONSORT_POSTGRES_URL: t.adminUrl,
    CONSORT_NAMESPACE: t.namespace,
  };
  const installed = await exec(
    codeServer,
    ['--user-data-dir', userData, '--extensions-dir', extensions, '--install-extension', vsix],
    { env: csEnv },
  );
  expect(installed.stdout).toMatch(/consort-pairing\.vsix' was successfully installed/);

  const port = await freePort();
  server = spawn(
    codeServer,
    [
      '--auth',
      'none',
      '--bind-addr',
      `127.0.0.1:${port}`,
      '--user-data-dir',
      userData,
      '--extensions-dir',
      extensions,
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
      '--disable-getting-started-override',
      repo,
    ],
    { env: csEnv, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  server.stdout?.on('data', (d) => {
    serverLog = (serverLog + String(d)).slice(-20_000);
  });
  server.stderr?.on('data', (d) => {
    serverLog = (serverLog + String(d)).slice(-20_000);
  });
  await waitForHttp(`http://127.0.0.1:${port}/healthz`, server, () => serverLog, 120_000);

  const require = createRequire(path.join(repoRoot, 'vscode', 'package.json'));
  const { chromium } = require('playwright-core') as Playwright;
  browser = await chromium.launch({
    executablePath: chromiumPath,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  // The workbench is megabytes of JavaScript: on a loaded machine `load` can take minutes.
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(repo)}`, {
    waitUntil: 'domcontentloaded',
    timeout: 300_000,
  });
}, 600_000);

afterAll(async () => {
  // What the editor showed last, for whoever reads a failure (kept after the run: global-setup.mjs).
  const keep = process.env.CONSORT_TEST_KEEP_DIR ?? os.tmpdir();
  await page?.screenshot({ path: path.join(keep, 'consort-vscode-test.png') }).catch(() => undefined);
  await browser?.close().catch(() => undefined);
  if (server?.pid) {
    try {
      process.kill(-server.pid, 'SIGTERM');
    } catch {
      /* already gone */
    }
  }
  await new Promise((r) => setTimeout(r, 1000));
  await t?.cleanup();
  if (work) await rm(work, { recursive: true, force: true });
}, 60_000);

it('pairs on every git branch switch: status bar, tree, .env and the paired database follow HEAD', async () => {
  // On opening, main is paired with the root database branch, which receives the migrations.
  await statusBar().filter({ hasText: 'db: main' }).waitFor({ timeout: 180_000 });
  expect(await statusBar().innerText()).toMatch(/db: main · copy · ready/);
  const mainUrl = await t.provider.connectionUri('main');
  expect(await query(mainUrl, "SELECT to_regclass('items') IS NOT NULL AS migrated")).toEqual([{ migrated: true }]);

  // A new git branch with a migration of its own, made outside the editor.
  await git('checkout', '-q', '-b', 'feature/ui');
  await writeFile(
    path.join(repo, 'migrations', '002_tags.sql'),
    '-- Up Migration\nCREATE TABLE tags (id int);\n-- Down Migration\nDROP TABLE tags;\n',
  );
  await git('add', '.');
  await git('commit', '-qm', 'tags');
  await statusBar().filter({ hasText: 'db: feature-ui' }).waitFor({ timeout: 120_000 });
  expect(await statusBar().innerText()).toMatch(/db: feature-ui · copy · ready/);
  const paired = await t.provider.get('feature-ui');
  expect(paired).toMatchObject({ parent: 'main', gitBranch: 'feature/ui' });
  const url = await t.provider.connectionUri('feature-ui');
  expect(await query(url, "SELECT to_regclass('tags') IS NOT NULL AS migrated")).toEqual([{ migrated: true }]);
  expect(await query(mainUrl, "SELECT to_regclass('tags') IS NOT NULL AS migrated")).toEqual([{ migrated: false }]);
  expect(await readFile(path.join(repo, '.env'), 'utf8')).toBe(`DATABASE_URL=${url}\n`);

  // The tree of database branches shows the new branch with its git branch.
  await page.locator('.activitybar [aria-label^="Consort"]').first().click();
  const row = page.locator('.monaco-list-row').filter({ hasText: 'feature-ui' });
  await row.waitFor({ timeout: 60_000 });
  expect(await row.innerText()).toMatch(/git feature\/ui/);

  // Schema diff of the paired branch against its parent, through the command palette.
  await paletteCommand('Consort: Schema Diff Against Parent');
  await page.locator('.view-lines').filter({ hasText: 'table public.tags' }).waitFor({ timeout: 60_000 });

  // consort check on the working tree: a lint error becomes a diagnostic on the migration file.
  await writeFile(
    path.join(repo, 'migrations', '003_required.sql'),
    '-- Up Migration\nALTER TABLE items ADD COLUMN sku int NOT NULL;\n-- Down Migration\nALTER TABLE items DROP COLUMN sku;\n',
  );
  await paletteCommand('Consort: Check Migrations');
  await page
    .locator('.notifications-toasts')
    .filter({ hasText: 'Consort check: failure' })
    .waitFor({ timeout: 300_000 });
  await page.keyboard.press('Control+Shift+M');
  const problem = page.locator('.markers-panel .monaco-list-row').filter({ hasText: 'adding-required-field' });
  await problem.first().waitFor({ timeout: 60_000 });
  expect(await page.locator('.markers-panel').innerText()).toMatch(/003_required\.sql/);
  await rm(path.join(repo, 'migrations', '003_required.sql'));

  // Switching back reuses main's pairing.
  await git('checkout', '-q', 'main');
  await statusBar().filter({ hasText: 'db: main' }).waitFor({ timeout: 120_000 });
  expect(await readFile(path.join(repo, '.env'), 'utf8')).toBe(`DATABASE_URL=${mainUrl}\n`);
}, 600_000);

/**
 * Run a command from the palette as a person does: F1, wait for the palette (under load it opens
 * late, and keys typed before it would go to the focused editor or terminal), type, wait for the
 * entry, Enter. A palette that closes before the command is typed in it (it closes when it loses
 * the focus: a terminal whose command just ended can take it) is opened again, as a person would.
 */
async function paletteCommand(title: string): Promise<void> {
  const input = page.locator('.quick-input-widget input');
  const entry = page.locator('.quick-input-list .monaco-list-row').filter({ hasText: title }).first();
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press('F1');
    // Open, typed and showing the entry: a palette that closed at any point (its entry then stays in
    // the page, hidden) is opened again.
    if (
      await input
        .waitFor({ timeout: 10_000 })
        .then(() => input.fill(`>${title}`, { timeout: 10_000 }))
        .then(() => entry.waitFor({ timeout: 20_000 }))
        .then(
          () => true,
          () => false,
        )
    )
      break;
    if (attempt === 3) throw new Error(`the command palette did not open, or closed before "${title}" could be chosen`);
    await page.keyboard.press('Escape');
  }
  await page.keyboard.press('Enter');
  await input.waitFor({ state: 'hidden', timeout: 10_000 }).catch(() => undefined);
}
/** Wait for a row, refreshing the view by hand between looks (a file watcher may miss a write under load). */
async function refreshedUntilVisible(row: Locator, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (
      await row.waitFor({ timeout: 15_000 }).then(
        () => true,
        () => false,
      )
    )
      return;
    if (Date.now() > deadline) throw new Error('timed out waiting for the refreshed view');
    await paletteCommand('Consort: Refresh');
  }
}
/** A row of a tree view by the start of what a screen reader says of it (the items set it). */
const treeRow = (spoken: string) => page.locator(`.monaco-list-row[aria-label^="${spoken}"]`);
/** The Consort views in the side bar (clicking the icon of the container already shown would hide it). */
async function showConsort(): Promise<void> {
  if ((await page.locator('.activitybar .action-item.checked [aria-label^="Consort"]').count()) === 0) {
    await page.locator('.activitybar [aria-label^="Consort"]').first().click();
  }
}
/** Right-click a row and pick a context-menu entry. */
async function fromMenu(row: Locator, entry: string): Promise<void> {
  await row.click({ button: 'right' });
  const item = page.locator('.monaco-menu .action-item').filter({ hasText: entry }).first();
  await item.waitFor({ timeout: 30_000 });
  // A menu ignores a click that comes right after it opened (the right-click's own release): point, pause, click.
  await item.hover();
  await new Promise((r) => setTimeout(r, 400));
  await item.click();
}
/**
 * Right-click branch `name`'s row, pick `entry`, and wait for its confirmation dialog to ask `asks`.
 * The tree re-renders as sizes and the branch list change, so a right-click can land on the row that
 * took this one's place (the dialog then names another branch): that dialog is cancelled and the
 * right-click made again, as a person would.
 */
async function confirmationFor(name: string, entry: string, asks: RegExp): Promise<void> {
  const dialog = page.locator('.monaco-dialog-box');
  for (let attempt = 1; ; attempt++) {
    await fromMenu(treeRow(`database branch ${name}:`), entry);
    await dialog.waitFor({ timeout: 30_000 });
    const text = await dialog.innerText();
    if (asks.test(text)) return;
    if (attempt === 3) expect(text).toMatch(asks);
    await dialog
      .locator('.monaco-button')
      .filter({ hasText: /^Cancel$/ })
      .click();
    await dialog.waitFor({ timeout: 30_000, state: 'detached' });
  }
}
async function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}
const tableExists = async (url: string, table: string) =>
  ((await query(url, `SELECT to_regclass('${table}') IS NOT NULL AS present`)) as { present: boolean }[])[0]!.present;
/** Whether branch `name` is there (a reset drops and recreates it) and holds `table`. */
const branchHas = async (name: string, table: string): Promise<boolean | null> => {
  try {
    return (await t.provider.get(name)) === undefined
      ? null
      : await tableExists(await t.provider.connectionUri(name), table);
  } catch {
    return null; // between the drop and the re-creation
  }
};

it('from the tree: creates a child branch, resets it to its parent, deletes it; the tree shows sizes', async () => {
  await showConsort();
  const main = treeRow('database branch main:');
  await main.waitFor({ timeout: 60_000 });
  // The size is what `consort branch list` reports: the database's own bytes.
  expect(await main.innerText()).toMatch(/\d+\.\d MB/);

  // The tree re-renders as the branch list changes (the earlier check's branches going away): a
  // right-click can land on the row that took main's place. The prompt names the parent; retry if it is not main.
  const input = page.locator('.quick-input-widget input');
  for (let attempt = 1; ; attempt++) {
    await fromMenu(main, 'Create Database Branch');
    await input.waitFor({ timeout: 30_000 });
    if ((await page.locator('.quick-input-widget').innerText()).includes('from main')) break;
    await page.keyboard.press('Escape');
    await input.waitFor({ state: 'hidden', timeout: 10_000 });
    if (attempt === 3) throw new Error('the context menu kept opening on another row than main');
  }
  await input.fill('scratch');
  await page.keyboard.press('Enter');
  // The create waits its turn behind what the first test's check is still tearing down; at full
  // load (the whole suite on two cores) that has taken more than a minute.
  await treeRow('database branch scratch:')
    .waitFor({ timeout: 180_000 })
    .catch(async (e: unknown) => {
      const said = await page
        .locator('.notifications-toasts')
        .innerText()
        .catch(() => '');
      throw new Error(`${String(e)}\nnotifications: ${said || '(none)'}`);
    });
  expect(await t.provider.get('scratch')).toMatchObject({ parent: 'main' });

  // Reset to parent: the branch's own changes are gone, after a confirmation.
  const url = await t.provider.connectionUri('scratch');
  await query(url, 'CREATE TABLE scratch_only (id int)');
  const dialog = page.locator('.monaco-dialog-box');
  await confirmationFor('scratch', 'Reset to Parent', /Reset scratch to its parent\? Its changes are thrown away\./);
  await dialog
    .locator('.monaco-button')
    .filter({ hasText: /^Reset$/ })
    .click();
  await until('the reset', async () => (await branchHas('scratch', 'scratch_only')) === false);
  expect(await branchHas('scratch', 'items')).toBe(true);

  // Delete, confirmed; cancelling first changes nothing.
  const deleteScratch = /Delete the database branch scratch and its data\?/;
  await confirmationFor('scratch', 'Delete Branch', deleteScratch);
  await dialog
    .locator('.monaco-button')
    .filter({ hasText: /^Cancel$/ })
    .click();
  await dialog.waitFor({ timeout: 30_000, state: 'detached' });
  expect(await t.provider.get('scratch')).toBeDefined();
  await confirmationFor('scratch', 'Delete Branch', deleteScratch);
  await dialog
    .locator('.monaco-button')
    .filter({ hasText: /^Delete$/ })
    .click();
  await treeRow('database branch scratch:').waitFor({ timeout: 60_000, state: 'detached' });
  expect(await t.provider.get('scratch')).toBeUndefined();
}, 300_000);

it('approves a gate from the TDD Lane view: the name asked, the confirmation typed in a terminal, recorded as consort approve does', async () => {
  const feature = await addGatedFeature(repo);
  await git('add', '.');
  await git('commit', '-qm', 'a feature waiting at its spec gate');
  await showConsort();
  // Refreshed by hand, as the records were written all at once (the view's watcher is for what changes later).
  await paletteCommand('Consort: Refresh');
  const gate = treeRow('spec gate:');
  await refreshedUntilVisible(gate);
  expect(await gate.innerText()).toMatch(/waiting for approval/);

  // The row's own action button, as a person clicks it. The view refreshes as the feature's records
  // land (a file watcher), re-rendering the row: a click on a row being replaced is clicked again.
  const input = page.locator('.quick-input-widget input');
  for (let attempt = 1; ; attempt++) {
    await gate.hover();
    await gate.locator('.actions .action-label[aria-label^="Approve Gate"]').click();
    const shown = await input.waitFor({ timeout: 5000 }).then(
      () => true,
      () => false,
    );
    if (shown) break;
    if (attempt === 5) throw new Error('the Approve Gate action opened no input box');
  }
  await input.fill('Ada Lovelace');
  await page.keyboard.press('Enter');
  // `consort approve` asks on its terminal for the start of the artifacts' hash; the person types it.
  const terminal = page.locator('.xterm-rows');
  await terminal
    .filter({ hasText: /Type the first 8 characters/ })
    .first()
    .waitFor({ timeout: 120_000 });
  const prefix = /hash \(([0-9a-f]{8})…\)/.exec(await terminal.first().innerText())?.[1];
  expect(prefix).toMatch(/^[0-9a-f]{8}$/);
  await page.locator('.xterm-screen').first().click();
  await page.keyboard.type(prefix!);
  await page.keyboard.press('Enter');

  const gatesFile = path.join(repo, '.consort', 'features', feature, 'gates.json');
  await until('the approval record', async () =>
    (await readFile(gatesFile, 'utf8').catch(() => '')).includes('Ada Lovelace'),
  );
  const approval = JSON.parse(await readFile(gatesFile, 'utf8')).gates.spec.approval as {
    approver: string;
    hash: string;
    proxy: boolean;
  };
  expect(approval).toMatchObject({ approver: 'Ada Lovelace', proxy: false });
  expect(approval.hash.replace(/^sha256:/, '').startsWith(prefix!)).toBe(true);
  // The view shows the record.
  await paletteCommand('Consort: Refresh');
  await refreshedUntilVisible(treeRow('spec gate:').filter({ hasText: 'approved by Ada Lovelace' }));
}, 300_000);
