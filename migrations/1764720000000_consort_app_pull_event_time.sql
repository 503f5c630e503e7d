-- The time of change of the newest pull_request webhook the App applied to each pull request
-- (the payload's pull_request.updated_at). GitHub does not promise to deliver webhooks in order:
-- an older event arriving late (a push's after the next push's, or after the pull request closed)
-- must not bring back an old head or reopen a closed pull request. Null for rows written before.

-- Up Migration
SET lock_timeout = '5s';
SET statement_timeout = '1min';

ALTER TABLE consort_app.pull_requests ADD COLUMN event_at timestamptz;

-- Down Migration
SET lock_timeout = '5s';
SET statement_timeout = '1min';

ALTER TABLE consort_app.pull_requests DROP COLUMN event_at;
