select
    id as order_id,
    customer_id,
    cast(ordered_at as date) as ordered_at,
    status
from {{ ref('raw_orders') }}
