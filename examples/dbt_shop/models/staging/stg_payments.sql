select
    id as payment_id,
    order_id,
    method,
    {{ cents_to_units('amount_cents') }} as amount
from {{ ref('raw_payments') }}
