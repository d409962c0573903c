-- Order lines. line_amount is before the order's discount; net_amount after it (rounded to
-- cents per line, the same way orders.net_amount and revenue.amount are).
CREATE VIEW order_items AS
SELECT i.order_item_id, i.order_id, i.product_id, i.quantity, i.unit_price,
       CAST(i.quantity * i.unit_price AS DECIMAL(12, 2)) AS line_amount,
       CAST(i.quantity * i.unit_price * (1 - o.discount_pct) AS DECIMAL(12, 2)) AS net_amount
FROM raw_order_items AS i
JOIN raw_orders AS o ON o.order_id = i.order_id;
