/**
 * How the conductor drives an agent: one turn at a time, in a workspace, with a context pack and
 * a budget. Backends: `command` (any CLI agent or script) and the model backends `claude`, `codex`
 * and `openai` (src/agents/). Whatever a backend lets its model do, the conductor checks the
 * resulting diff after the turn; a backend's own tool restrictions (`writes`) are a courtesy, not the guard.
 */
import type { ContextPack } from '../conductor/context-pack.js';
import type { Role } from '../conductor/roles.js';
import type { TurnStep } from '../conductor/state.js';
import type { MigrationPlacement } from './migration-runner.js';
import type { MigrationEngine } from '../migrations/engine.js';

export const AGENT_BACKENDS = ['command', 'claude', 'codex', 'openai'] as const;
export type AgentBackendName = (typeof AGENT_BACKENDS)[number];

export interface TurnBudget {
  /** The turn is stopped after this long. */
  timeoutMs: number;
  /** For model backends: a cap on the turn's cost and tool-loop length. */
  maxCostUsd?: number;
  maxTurns?: number;
}

export interface AgentTurnRequest {
  role: Role;
  step: TurnStep;
  feature: string;
  /** The test-list item id, when the turn is about one. */
  item: string | null;
  /** The role's prompt (also inside the context pack). */
  instructions: string;
  contextPack: { pack: ContextPack; json: string; markdown: string };
  /** The repository checkout the agent works in. */
  workspace: string;
  /** Globs the role may change (relative to the workspace). */
  writes: readonly string[];
  /** The turn's database branch. */
  branchUrl: string;
  /**
   * The node-pg-migrate (and TypeScript loader) the run applies the migrations in a directory with,
   * the project's own as its proofs use: for a backend that applies migrations itself (openai's suite tool).
   */
  migrationEngine?: (dir: string) => Promise<MigrationEngine>;
  /**
   * Folders the turn may read but not change (the proofs' pristine dependency copy): a backend that
   * runs the agent as a command binds them read-only where it can (bubblewrap).
   */
  readOnly?: readonly string[];
  model: string | null;
  /** One of N competing GREEN attempts, each in its own worktree. */
  experiment?: { index: number; of: number };
  budget: TurnBudget;
  signal?: AbortSignal;
}

export type AgentExit =
  | { kind: 'done' }
  | { kind: 'failed'; message: string }
  | { kind: 'timeout'; message: string }
  | { kind: 'aborted'; message: string };

export interface AgentTurnResult {
  /** One paragraph: what the agent says it did. */
  summary: string;
  /** The full transcript (for a command: its output), bounded by the backend. */
  transcript: string;
  usage: { inputTokens: number; outputTokens: number; costUsd?: number };
  durationMs: number;
  exit: AgentExit;
  /**
   * The model service refused the backend's credentials (none set, a wrong or expired key): no turn
   * of any role can run until they are fixed, so the run stops with this (what to set) instead of
   * retrying the turn and escalating. The turn is rolled back; `consort run` resumes with it.
   */
  signInRefused?: string;
}

export interface AgentBackend {
  readonly name: AgentBackendName;
  runTurn(request: AgentTurnRequest): Promise<AgentTurnResult>;
}

/**
 * What the TDD lane reads from the configuration for each backend (src/lanes/tdd/policy.ts); the
 * adapters take these and may take more (test doubles, SDK factories).
 */
export interface AgentBackendSettings {
  command: {
    command: string;
    /** Variables that receive the branch URL. */
    urlVars: readonly string[];
    /** Where the allow-listed basics and the named `keys` are read from. */
    env: NodeJS.ProcessEnv;
    /** Model-key variables the agent may receive from `env`. */
    keys: readonly string[];
  };
  openai: {
    baseUrl: string;
    model: string;
    apiKey: string;
    suite: { command: string; env: string; migrations: { dir: string; placement: MigrationPlacement } };
  };
  claude: { model?: string; apiKey?: string; urlVars: readonly string[]; env: NodeJS.ProcessEnv };
  codex: { model?: string; apiKey?: string; urlVars: readonly string[]; env: NodeJS.ProcessEnv };
}

/**
 * The backends a shell offers the TDD lane, by name: the lane picks one per role from the
 * configuration and builds it with that role's settings. The adapter is src/agents/backends.ts
 * (localAgentBackends); tests pass scripted ones.
 */
export type AgentBackends = {
  readonly [K in AgentBackendName]: (settings: AgentBackendSettings[K]) => AgentBackend;
};
