-- The GitHub App's own store, in its own schema so it can share a database with anything else.
-- Applied by the App at start (node-pg-migrate, migrations table consort_app.pgmigrations) and
-- checked by Consort's own PR lane like any other migration.

-- Up Migration
SET lock_timeout = '5s';
SET statement_timeout = '1min';

CREATE SCHEMA IF NOT EXISTS consort_app;

-- One row per webhook delivery the App acted on: a redelivery (same id) finds its row and does nothing.
CREATE TABLE consort_app.deliveries (
  id text PRIMARY KEY,
  event text NOT NULL,
  action text,
  repository_id bigint,
  received_at timestamptz NOT NULL DEFAULT now()
);

-- The last known state of each pull request the App has seen.
CREATE TABLE consort_app.pull_requests (
  repository_id bigint NOT NULL,
  number bigint NOT NULL,
  installation_id bigint NOT NULL,
  owner text NOT NULL,
  repo text NOT NULL,
  head_sha text NOT NULL,
  head_ref text NOT NULL,
  base_sha text NOT NULL,
  base_ref text NOT NULL,
  fork boolean NOT NULL,
  state text NOT NULL CHECK (state IN ('open', 'closed', 'merged')),
  -- When the App learned of head_sha: an approval written before it cannot be meant for it.
  head_recorded_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (repository_id, number)
);

-- Work for one subject (a pull request or a merge group): checks and close-time cleanup.
-- Runs of one subject are serialized by their lease; a newer run sets cancel_reason on older ones.
CREATE TABLE consort_app.runs (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('check', 'close')),
  subject text NOT NULL,
  repository_id bigint NOT NULL,
  installation_id bigint NOT NULL,
  owner text NOT NULL,
  repo text NOT NULL,
  pr bigint,
  head_sha text NOT NULL,
  head_ref text NOT NULL,
  base_sha text NOT NULL,
  base_ref text NOT NULL,
  fork boolean NOT NULL DEFAULT false,
  merged boolean NOT NULL DEFAULT false,
  delivery_id text REFERENCES consort_app.deliveries (id),
  state text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'blocked', 'completed', 'cancelled')),
  conclusion text,
  summary text,
  cancel_reason text,
  check_run_id bigint,
  lease_owner text,
  lease_until timestamptz,
  attempts bigint NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  started_at timestamptz,
  finished_at timestamptz
);
CREATE INDEX runs_subject_idx ON consort_app.runs (subject, id);
CREATE INDEX runs_live_idx ON consort_app.runs (lease_until) WHERE state IN ('queued', 'running');
CREATE UNIQUE INDEX runs_check_run_idx ON consort_app.runs (check_run_id) WHERE check_run_id IS NOT NULL;

-- Human approval gates of a pull request, published as the commit status consort/gate/<name>.
CREATE TABLE consort_app.gates (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  repository_id bigint NOT NULL,
  pr bigint NOT NULL,
  name text NOT NULL,
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'approved', 'rejected', 'stale')),
  artifact_hash text NOT NULL,
  head_sha text NOT NULL,
  decided_by text,
  decided_at timestamptz,
  decided_head_sha text,
  decided_artifact_hash text,
  reason text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT gates_name_key UNIQUE (repository_id, pr, name)
);

-- Every decision on a gate, append-only (the gates row holds the current one).
CREATE TABLE consort_app.gate_decisions (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  gate_id bigint NOT NULL REFERENCES consort_app.gates (id) ON DELETE CASCADE,
  decision text NOT NULL CHECK (decision IN ('approved', 'rejected', 'stale')),
  actor text NOT NULL,
  head_sha text NOT NULL,
  artifact_hash text NOT NULL,
  reason text,
  decided_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX gate_decisions_gate_idx ON consort_app.gate_decisions (gate_id);

-- Code from a fork runs only for a head SHA someone with write access approved.
CREATE TABLE consort_app.fork_approvals (
  repository_id bigint NOT NULL,
  pr bigint NOT NULL,
  head_sha text NOT NULL,
  approver text NOT NULL,
  approved_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (repository_id, pr, head_sha)
);

-- Down Migration
DROP TABLE consort_app.fork_approvals;
DROP TABLE consort_app.gate_decisions;
DROP TABLE consort_app.gates;
DROP TABLE consort_app.runs;
DROP TABLE consort_app.pull_requests;
DROP TABLE consort_app.deliveries;
DROP SCHEMA IF EXISTS consort_app;
