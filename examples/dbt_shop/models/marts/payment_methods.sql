-- Payments by method, every payment counted (returns included).
select method, count(*) as payments, sum(amount) as amount
from {{ ref('stg_payments') }}
group by method
