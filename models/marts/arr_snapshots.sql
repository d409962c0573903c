-- ARR at every month end from 2021-01-31 to 2024-12-31: one row per subscription active on
-- snapshot_date (started on or before it, not ended by it).
CREATE VIEW arr_snapshots AS
WITH month_ends AS (
    SELECT CAST(month_start + INTERVAL 1 MONTH - INTERVAL 1 DAY AS DATE) AS snapshot_date
    FROM (SELECT UNNEST(generate_series(DATE '2021-01-01', DATE '2024-12-01', INTERVAL 1 MONTH))
          AS month_start) AS months
)
SELECT m.snapshot_date, s.subscription_id, s.customer_id, s.plan, s.seats, s.arr
FROM month_ends AS m
JOIN subscriptions AS s
  ON s.start_date <= m.snapshot_date
 AND (s.end_date IS NULL OR s.end_date > m.snapshot_date);
