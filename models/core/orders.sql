-- One row per order, any status (completed, refunded, cancelled, pending). channel is NULL when
-- the source was not recorded. Amounts are the sums of the order's lines.
CREATE VIEW orders AS
SELECT o.order_id, o.customer_id, o.order_date, o.status, o.channel, o.discount_pct,
       COUNT(i.order_item_id) AS item_count,
       CAST(SUM(i.quantity * i.unit_price) AS DECIMAL(12, 2)) AS gross_amount,
       CAST(SUM(CAST(i.quantity * i.unit_price * (1 - o.discount_pct) AS DECIMAL(12, 2)))
            AS DECIMAL(12, 2)) AS net_amount
FROM raw_orders AS o
LEFT JOIN raw_order_items AS i ON i.order_id = o.order_id
GROUP BY o.order_id, o.customer_id, o.order_date, o.status, o.channel, o.discount_pct;
