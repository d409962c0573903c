-- One row per order that counts as revenue, with what was paid for it.
with paid as (
    select order_id, sum(amount) as amount, count(*) as payments
    from {{ ref('stg_payments') }}
    group by order_id
)
select
    o.order_id,
    o.customer_id,
    o.ordered_at,
    o.status,
    coalesce(p.amount, 0) as amount,
    coalesce(p.payments, 0) as payments
from {{ ref('stg_orders') }} as o
left join paid as p on p.order_id = o.order_id
where o.status <> 'returned'
