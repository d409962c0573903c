-- One row per customer with their revenue-counting orders.
select
    c.customer_id,
    c.first_name,
    c.country,
    count(o.order_id) as orders,
    coalesce(sum(o.amount), 0) as lifetime_value,
    min(o.ordered_at) as first_order_at
from {{ ref('stg_customers') }} as c
left join {{ ref('orders') }} as o on o.customer_id = c.customer_id
group by c.customer_id, c.first_name, c.country
