-- Recognised revenue: one row per line of a completed order (refunded, cancelled and pending
-- orders are not revenue), net of the order's discount, with the customer's region, segment
-- and owner and the product's category copied on.
CREATE VIEW revenue AS
SELECT i.order_item_id, o.order_id, o.order_date, o.customer_id, c.region, c.segment,
       c.sales_rep_id, o.channel, i.product_id, p.category, i.quantity,
       i.net_amount AS amount
FROM orders AS o
JOIN order_items AS i ON i.order_id = o.order_id
JOIN customers AS c ON c.customer_id = o.customer_id
JOIN products AS p ON p.product_id = i.product_id
WHERE o.status = 'completed';
