{# Amounts are stored in cents; models show them in the currency's unit. #}
{% macro cents_to_units(column) %}{{ column }} / {{ cents_per_unit() }}{% endmacro %}

{% macro cents_per_unit() %}100.0{% endmacro %}
