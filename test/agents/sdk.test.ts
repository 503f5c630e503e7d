/**
 * The agent SDKs are loaded when a turn needs them, never bundled: from node_modules here, from the
 * tools directory in the bundled Action (where their entry point comes from their own manifest).
 */
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';
import { CLAUDE_SDK, CODEX_SDK, entryOf, loadSdk, type ClaudeSdk, type CodexSdk } from '../../src/agents/sdk.js';
import { pinnedDependency } from '../../src/tools/pinned-versions.js';

const require = createRequire(import.meta.url);
/** Not require.resolve: the SDKs' `exports` hide their package.json. */
const dirOf = (name: string) => fileURLToPath(new URL(`../../node_modules/${name}`, import.meta.url));

describe('agent SDK loading', () => {
  it("finds each SDK's ESM entry point from its manifest, as the tools-directory path does", async () => {
    expect(path.relative(dirOf(CLAUDE_SDK), await entryOf(dirOf(CLAUDE_SDK)))).toBe('sdk.mjs');
    expect(path.relative(dirOf(CODEX_SDK), await entryOf(dirOf(CODEX_SDK)))).toBe(path.join('dist', 'index.js'));
    const codex = (await import(pathToFileURL(await entryOf(dirOf(CODEX_SDK))).href)) as CodexSdk;
    expect(typeof codex.Codex).toBe('function');
  });

  it('loads the SDKs on first use, once', async () => {
    const claude = await loadSdk<ClaudeSdk>(CLAUDE_SDK);
    expect(typeof claude.query).toBe('function');
    expect(await loadSdk<ClaudeSdk>(CLAUDE_SDK)).toBe(claude);
  });

  it('installs exactly the versions package.json pins, as optional peers the PR lane never installs', () => {
    const manifest = require('../../package.json') as {
      dependencies: Record<string, string>;
      peerDependencies: Record<string, string>;
      peerDependenciesMeta: Record<string, { optional?: boolean }>;
    };
    for (const sdk of [CLAUDE_SDK, CODEX_SDK]) {
      expect(manifest.dependencies[sdk]).toBeUndefined();
      expect(manifest.peerDependenciesMeta[sdk]?.optional).toBe(true);
    }
    expect(pinnedDependency(CLAUDE_SDK)).toBe(manifest.peerDependencies[CLAUDE_SDK]);
    expect(pinnedDependency(CODEX_SDK)).toMatch(/^\d+\.\d+\.\d+$/);
    expect(() => pinnedDependency('left-pad')).toThrow(/not pinned/);
  });
});
