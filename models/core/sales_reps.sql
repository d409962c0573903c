-- Sales team: one row per rep. The VP has no region and no manager (NULL).
CREATE VIEW sales_reps AS
SELECT rep_id, full_name, region, title, manager_id, hire_date
FROM raw_sales_reps;
