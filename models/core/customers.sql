-- One row per customer account. industry is NULL when unknown; sales_rep_id is NULL for
-- accounts no account executive owns.
CREATE VIEW customers AS
SELECT customer_id, company_name, region, country, segment, industry, signup_date, sales_rep_id
FROM raw_customers;
