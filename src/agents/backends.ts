/**
 * The AgentBackends port's adapter (src/ports/agent-backend.ts): every backend Consort ships, by
 * name. Shells build it once and pass it to the TDD lane, which never imports src/agents/.
 */
import type { AgentBackends } from '../ports/agent-backend.js';
import { claudeBackend } from './claude.js';
import { codexBackend } from './codex.js';
import { commandBackend } from './command.js';
import { openaiBackend } from './openai.js';

export const localAgentBackends: AgentBackends = {
  command: commandBackend,
  openai: openaiBackend,
  claude: claudeBackend,
  codex: codexBackend,
};
