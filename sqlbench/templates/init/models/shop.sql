-- A tiny example warehouse, built in a fresh in-memory DuckDB before each run.
-- Replace these files with your data model (tables, views) and point `warehouse:` at it.
CREATE TABLE customers AS
SELECT * FROM (VALUES
    (1, 'Acme Corp', 'DE'),
    (2, 'Globex', 'US'),
    (3, 'Initech', 'US'),
    (4, 'Umbrella', 'FR')
) AS t(customer_id, name, country);

CREATE TABLE orders AS
SELECT order_id, customer_id, CAST(ordered_at AS DATE) AS ordered_at,
       CAST(amount AS DECIMAL(10, 2)) AS amount
FROM (VALUES
    (1, 1, '2024-01-15', 120.00),
    (2, 2, '2024-01-20', 80.50),
    (3, 1, '2024-02-03', 45.00),
    (4, 3, '2024-02-28', 300.00),
    (5, 2, '2024-03-10', 99.90),
    (6, 4, '2024-03-30', 15.00),
    (7, 1, '2024-03-31', 60.00)
) AS t(order_id, customer_id, ordered_at, amount);
