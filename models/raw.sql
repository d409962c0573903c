-- Raw tables of the demo warehouse, loaded from the committed CSV files in data/.
-- Paths are relative to the project root (sqlbench sets DuckDB's file_search_path there).
-- Column types are explicit so that nothing depends on CSV type sniffing; an empty field is NULL.

CREATE TABLE raw_sales_reps AS
SELECT * FROM read_csv('data/sales_reps.csv', header = true, auto_detect = false, columns = {
    'rep_id': 'INTEGER',
    'full_name': 'VARCHAR',
    'region': 'VARCHAR',
    'title': 'VARCHAR',
    'manager_id': 'INTEGER',
    'hire_date': 'DATE'
});

CREATE TABLE raw_customers AS
SELECT * FROM read_csv('data/customers.csv', header = true, auto_detect = false, columns = {
    'customer_id': 'INTEGER',
    'company_name': 'VARCHAR',
    'region': 'VARCHAR',
    'country': 'VARCHAR',
    'segment': 'VARCHAR',
    'industry': 'VARCHAR',
    'signup_date': 'DATE',
    'sales_rep_id': 'INTEGER'
});

CREATE TABLE raw_products AS
SELECT * FROM read_csv('data/products.csv', header = true, auto_detect = false, columns = {
    'product_id': 'INTEGER',
    'sku': 'VARCHAR',
    'product_name': 'VARCHAR',
    'category': 'VARCHAR',
    'list_price': 'DECIMAL(10,2)',
    'launched_on': 'DATE',
    'discontinued_on': 'DATE'
});

CREATE TABLE raw_orders AS
SELECT * FROM read_csv('data/orders.csv', header = true, auto_detect = false, columns = {
    'order_id': 'INTEGER',
    'customer_id': 'INTEGER',
    'order_date': 'DATE',
    'status': 'VARCHAR',
    'channel': 'VARCHAR',
    'discount_pct': 'DECIMAL(4,2)'
});

CREATE TABLE raw_order_items AS
SELECT * FROM read_csv('data/order_items.csv', header = true, auto_detect = false, columns = {
    'order_item_id': 'INTEGER',
    'order_id': 'INTEGER',
    'product_id': 'INTEGER',
    'quantity': 'INTEGER',
    'unit_price': 'DECIMAL(10,2)'
});

CREATE TABLE raw_subscriptions AS
SELECT * FROM read_csv('data/subscriptions.csv', header = true, auto_detect = false, columns = {
    'subscription_id': 'INTEGER',
    'customer_id': 'INTEGER',
    'plan': 'VARCHAR',
    'seats': 'INTEGER',
    'arr': 'DECIMAL(12,2)',
    'billing_period': 'VARCHAR',
    'start_date': 'DATE',
    'end_date': 'DATE',
    'end_reason': 'VARCHAR',
    'churn_reason': 'VARCHAR'
});
