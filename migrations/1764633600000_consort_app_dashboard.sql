-- The dashboard's index: the TDD lane's records (.consort/features/<F>/) as they are at each pull
-- request's head, indexed on every push, and the report of each check the App ran. Read by the
-- App's /dashboard route (src/app/dashboard/); rebuilt from GitHub whenever a pull request is pushed.

-- Up Migration
SET lock_timeout = '5s';
SET statement_timeout = '1min';

-- One row per feature folder at a pull request's head.
CREATE TABLE consort_app.dashboard_features (
  repository_id bigint NOT NULL,
  pr bigint NOT NULL,
  feature text NOT NULL,
  installation_id bigint NOT NULL,
  owner text NOT NULL,
  repo text NOT NULL,
  head_sha text NOT NULL,
  head_ref text NOT NULL,
  -- The committed tree outside .consort/, hashed as the merge gate hashes it (git:tree).
  code_tree_hash text,
  state jsonb NOT NULL,
  gates jsonb NOT NULL,
  summary jsonb NOT NULL,
  indexed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (repository_id, pr, feature)
);
CREATE INDEX dashboard_features_name_idx ON consort_app.dashboard_features (repository_id, feature, indexed_at DESC);

-- The feature's other files (artifacts, cycles, events, transcripts) by blob: an unchanged blob is
-- never fetched again; a transcript's content is fetched when someone first opens its turn.
CREATE TABLE consort_app.dashboard_files (
  repository_id bigint NOT NULL,
  pr bigint NOT NULL,
  feature text NOT NULL,
  path text NOT NULL,
  blob_sha text NOT NULL,
  content text,
  PRIMARY KEY (repository_id, pr, feature, path),
  FOREIGN KEY (repository_id, pr, feature) REFERENCES consort_app.dashboard_features ON DELETE CASCADE
);

-- turns.jsonl, a row per record in file order (pages are index range scans).
CREATE TABLE consort_app.dashboard_turns (
  repository_id bigint NOT NULL,
  pr bigint NOT NULL,
  feature text NOT NULL,
  seq bigint NOT NULL,
  turn_id text NOT NULL,
  record jsonb NOT NULL,
  PRIMARY KEY (repository_id, pr, feature, seq),
  FOREIGN KEY (repository_id, pr, feature) REFERENCES consort_app.dashboard_features ON DELETE CASCADE
);
CREATE INDEX dashboard_turns_id_idx ON consort_app.dashboard_turns (repository_id, pr, feature, turn_id);

-- Each finished check of the App, with its CheckReport when the lane produced one: the check history.
CREATE TABLE consort_app.check_history (
  run_id bigint PRIMARY KEY REFERENCES consort_app.runs (id) ON DELETE CASCADE,
  repository_id bigint NOT NULL,
  pr bigint,
  head_sha text NOT NULL,
  conclusion text NOT NULL,
  started_at timestamptz NOT NULL,
  duration_ms bigint NOT NULL,
  report jsonb
);
CREATE INDEX check_history_repository_idx ON consort_app.check_history (repository_id, run_id DESC);

-- Down Migration
DROP TABLE consort_app.check_history;
DROP TABLE consort_app.dashboard_turns;
DROP TABLE consort_app.dashboard_files;
DROP TABLE consort_app.dashboard_features;
