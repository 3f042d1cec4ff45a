-- A window's admissions move out of the window row's arrays into one small row per second
-- (docs/rate-limit.md, "Design"). The arrays grew by one bucket per second of traffic, up to
-- 3,601 buckets (about 43 KB stored out of line) for a key busy all hour, and every check rewrote
-- them whole; while any session held a snapshot, each check also walked every version written
-- since. Now a check reads two rows by index, updates the row of the current second (or inserts
-- a new one, once a second) and never rewrites the window row. Same buckets, same arithmetic,
-- same answers; the admissions of the last hour are carried over.
CREATE TABLE rate_limit_seconds (
    window_id       bigint  NOT NULL REFERENCES rate_limit_windows (id) ON DELETE CASCADE,
    -- Epoch second that admitted at least one request.
    second          bigint  NOT NULL,
    -- Admissions in that second.
    admitted        integer NOT NULL CHECK (admitted > 0),
    -- The window's admissions in the seconds before this one (since the first row it kept), so
    -- any span's count is a difference of two rows.
    admitted_before bigint  NOT NULL CHECK (admitted_before >= 0),
    PRIMARY KEY (window_id, second)
);

INSERT INTO rate_limit_seconds (window_id, second, admitted, admitted_before)
SELECT b.id, b.second, b.admitted,
       coalesce(sum(b.admitted) OVER (PARTITION BY b.id ORDER BY b.second
                                      ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)
  FROM (SELECT w.id, u.second, u.admitted
          FROM rate_limit_windows w,
               unnest(w.bucket_seconds, w.bucket_counts) AS u (second, admitted)
         WHERE u.admitted > 0) b;

ALTER TABLE rate_limit_windows
    DROP COLUMN bucket_seconds,
    DROP COLUMN bucket_counts,
    DROP COLUMN total;

--! include functions/wms_rate_window.sql sha256:9ba66f34219b1a95
