-- Subscriptions and their ARR. A subscription is active on day D when start_date <= D and
-- (end_date IS NULL OR end_date > D). end_date is NULL while it was still running at the end of
-- 2024. end_reason: churned, upgraded (moved to a bigger plan) or expanded (more seats); an
-- upgrade or expansion starts a new subscription the day the old one ends. churn_reason is
-- only set for churns, and not always.
CREATE VIEW subscriptions AS
SELECT subscription_id, customer_id, plan, seats, arr, billing_period, start_date, end_date,
       end_reason, churn_reason
FROM raw_subscriptions;
