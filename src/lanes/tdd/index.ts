/**
 * The TDD lane's public API. The driver (driver.ts) runs the conductor on a workspace; the
 * pull-request workflow (pull-request.ts) is what every shell calls on a pull request; features,
 * gate approvals (one gate model: `.consort/features/<F>/gates.json`) and statuses are read and
 * written here. Shells and the dashboard import from this file; the lane's own modules import each
 * other directly. (The CLI imports single modules lazily, to keep its start-up small.)
 */
export { type BuildLaneInput, type BuildRunResult, planBuildRun, type RunStop, runBuildLane } from './driver.js';
export {
  approveGate,
  type ApproveInput,
  createFeature,
  describeStep,
  matchFeature,
  openFeatures,
  resolveFeature,
} from './feature.js';
export { readGate, reopenedGates } from './gate-check.js';
export { agentKeyEnvNames, type BackendFactory, backendFactory, buildPolicy } from './policy.js';
export {
  type Access,
  type Actor,
  decide,
  type Decision,
  type GitRemote,
  type LaneLog,
  nextStep,
  type PullRequestAsk,
  type PullRequestOutcome,
  type PullRequestPorts,
  runOnPullRequest,
} from './pull-request.js';
export { allStatuses, featureStatus, type FeatureStatus, renderStatus } from './status.js';
export { featureDirOf, FEATURES_DIR, FeatureStore, listFeatures, readText } from './store.js';
