-- Product catalogue with today's list prices (prices rose 10% on 2023-01-01; order_items keeps
-- the price actually charged). discontinued_on is NULL for products still on sale.
CREATE VIEW products AS
SELECT product_id, sku, product_name, category, list_price, launched_on, discontinued_on,
       discontinued_on IS NULL AS is_active
FROM raw_products;
