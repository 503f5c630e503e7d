-- The App's own gate store goes: the TDD lane's records on the branch (.consort/features/<F>/gates.json)
-- are the one gate model, and nothing in production ever wrote these tables.

-- Up Migration
SET lock_timeout = '5s';
SET statement_timeout = '1min';

-- Dropping is the point: the rows were never written outside tests, and nothing reads them any more.
-- squawk-ignore ban-drop-table
DROP TABLE IF EXISTS consort_app.gate_decisions;
-- squawk-ignore ban-drop-table
DROP TABLE IF EXISTS consort_app.gates;

-- Down Migration
SET lock_timeout = '5s';
SET statement_timeout = '1min';

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
