-- Conversation reports in constant time (issue 32; docs/architecture.md, "Reports";
-- docs/benchmarks.md, "Conversation reports"). A report over 90 days read every fact of the period
-- (~1.5 million rows at 1M messages: 0.65–1.1 s). `conversation_rollups` holds, per block of days,
-- grouping key and kind, the count and total seconds of the facts and the histogram of their
-- durations, so a report reads the blocks that tile its whole days, the facts of its partial first
-- and last day and those not folded yet, and, for each nearest-rank percentile, only the facts of
-- the one bucket that holds the rank.
--
-- The facts stay the record (computed by the domain's `reports::decide` when an event happens);
-- the rollup is derived from them. A new fact only notes its id in `conversation_facts_pending`
-- (a statement trigger: no row shared between writers, so a send pays almost nothing); the rollup
-- worker (`app::report_rollup`) folds the queue into the rollup after commit, in batches. A fact
-- is in exactly one of the two in any snapshot, so a report that reads both is exact. The rare
-- changes keep the rollup exact in their own transaction: facts deleted (a thread's cascade) or
-- refigured (the business hours changed), and labels given or taken (a label figure goes to the
-- labels a thread carries now).

CREATE TABLE conversation_rollups (
    workspace_id bigint   NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    -- Block length 1, 4, 16 or 64 days (level 0–3); `block` its first UTC day, a multiple of the
    -- length counted from 1970-01-01.
    level        smallint NOT NULL,
    block        date     NOT NULL,
    -- 0: wall-clock seconds; 1: business seconds (facts without a duration count under both).
    measure      smallint NOT NULL,
    -- 0: none (key 0); 1: user; 2: team; 3: channel; 4: label.
    dim          smallint NOT NULL,
    key          bigint   NOT NULL,
    -- `conversation_facts.kind`.
    kind         smallint NOT NULL,
    n            bigint   NOT NULL,
    -- The sum of the measure's seconds.
    total        bigint   NOT NULL,
    -- The histogram of the durations: element b + 1 counts those in conversation_bucket() b (NULL
    -- for facts without a duration). One row per block, grouping key and kind keeps a report's
    -- reading small for a grouping with many keys.
    counts       integer[],
    PRIMARY KEY (workspace_id, measure, dim, level, block, key, kind)
);

-- Facts not yet folded into `conversation_rollups` (no foreign key: a fact's deletion takes its
-- row out in conversation_rollups_on_facts(), which needs to know whether it was still here).
CREATE TABLE conversation_facts_pending (
    fact_id bigint PRIMARY KEY
);

-- The durations of the folded facts once per label their thread carries now: the exact value of a
-- label's percentile is read from its own facts of one bucket (indexes below) rather than from
-- every fact of the bucket joined to the labels. Kept with the rollup's label figures.
CREATE TABLE conversation_label_facts (
    workspace_id     bigint      NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    label_id         bigint      NOT NULL,
    fact_id          bigint      NOT NULL,
    kind             smallint    NOT NULL,
    at               timestamptz NOT NULL,
    seconds          bigint,
    business_seconds bigint,
    PRIMARY KEY (label_id, fact_id)
);

-- What one fact adds to (or takes from) one row, in one bucket.
CREATE TYPE conversation_rollup_delta AS (
    workspace_id bigint, level smallint, block date, measure smallint, dim smallint, key bigint, kind smallint,
    bucket smallint, n bigint, total bigint);

--! include functions/conversation_bucket.sql sha256:de97d3a3058c2e72

--! include functions/conversation_rollup_rows.sql sha256:8335ef84e99fd105

--! include functions/conversation_counts.sql sha256:d254bae80b85664d

--! include functions/conversation_counts_add.sql sha256:ada776b9b41560c4

--! include functions/conversation_rollups_apply.sql sha256:407a0f903b9ae484

--! include functions/conversation_rollups_lock.sql sha256:d69d17c05efcae67

--! include functions/conversation_facts_on_insert.sql sha256:199e88aa8fef5464

--! include functions/conversation_rollups_fold.sql sha256:491747f33d36de0b

--! include functions/conversation_rollups_on_facts.sql sha256:127f62b59b4b2791

--! include functions/conversation_rollups_on_labels.sql sha256:8a506aed1ec3ec0c

--! include functions/conversation_rollups_on_thread_delete.sql sha256:df6447f6f331bfd9

CREATE TRIGGER conversation_facts_pending_insert AFTER INSERT ON conversation_facts
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION conversation_facts_on_insert();
CREATE TRIGGER conversation_facts_rollups_update AFTER UPDATE ON conversation_facts
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION conversation_rollups_on_facts();
CREATE TRIGGER conversation_facts_rollups_delete AFTER DELETE ON conversation_facts
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION conversation_rollups_on_facts();
CREATE TRIGGER thread_labels_rollups_insert AFTER INSERT ON thread_labels
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION conversation_rollups_on_labels();
CREATE TRIGGER thread_labels_rollups_delete AFTER DELETE ON thread_labels
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION conversation_rollups_on_labels();
CREATE TRIGGER threads_rollups_delete BEFORE DELETE ON threads
    FOR EACH ROW EXECUTE FUNCTION conversation_rollups_on_thread_delete();

-- The exact value of a percentile: the period's facts of one kind in one bucket, in value order.
CREATE INDEX conversation_facts_wall_rank ON conversation_facts
    (workspace_id, kind, conversation_bucket(seconds), at) INCLUDE (seconds, user_id, team_id, channel_id, thread_id)
    WHERE seconds IS NOT NULL;
CREATE INDEX conversation_facts_business_rank ON conversation_facts
    (workspace_id, kind, conversation_bucket(business_seconds), at)
    INCLUDE (business_seconds, user_id, team_id, channel_id, thread_id)
    WHERE business_seconds IS NOT NULL;

CREATE INDEX conversation_label_facts_wall_rank ON conversation_label_facts
    (workspace_id, label_id, kind, conversation_bucket(seconds), at) INCLUDE (seconds) WHERE seconds IS NOT NULL;
CREATE INDEX conversation_label_facts_business_rank ON conversation_label_facts
    (workspace_id, label_id, kind, conversation_bucket(business_seconds), at) INCLUDE (business_seconds)
    WHERE business_seconds IS NOT NULL;

-- Facts written before this migration are folded by the worker like new ones.
INSERT INTO conversation_facts_pending (fact_id) SELECT id FROM conversation_facts;
