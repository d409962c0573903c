"""Write the demo warehouse's raw data (``data/*.csv``) for the demo project at the repo root.

A fictional B2B SaaS company, 2021-2024: sales reps, customers, products, orders with their
line items, and subscriptions carrying ARR. The data is seeded and uses only the standard
library, so running this twice writes byte-identical files; the committed ``data/`` is its
output, and ``tests/test_demo_project.py`` checks that it still is.

Some quirks are on purpose, for the demo's questions: NULLs (customers without an industry
or a sales rep, orders without a channel, churns without a reason, active subscriptions
without an end date, products still sold without a discontinuation date), ties (two add-ons
share the top list price, two services share a price, customers tie on order counts), a rep
hired late 2024 with no customers, customers who never ordered, and company names with commas.

Usage: ``python scripts/make_demo_data.py [--out DIR]`` (default: ``data/`` beside ``scripts/``).
"""

from __future__ import annotations

import argparse
import csv
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import astuple, dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import NamedTuple

SEED = 20240101
LAST_DAY = date(2024, 12, 31)
PRICE_RISE_DAY = date(2023, 1, 1)
"""List prices rose on this day; before it, products sold at 90% of today's list price."""

REGIONS: dict[str, list[str]] = {
    "North America": ["United States", "United States", "United States", "Canada"],
    "EMEA": ["United Kingdom", "Germany", "France", "Netherlands", "Sweden"],
    "APAC": ["Australia", "Japan", "Singapore", "India"],
    "LATAM": ["Brazil", "Mexico", "Chile"],
}
REGION_WEIGHTS = {"North America": 40, "EMEA": 30, "APAC": 20, "LATAM": 10}
SEGMENT_WEIGHTS = {"SMB": 55, "Mid-Market": 30, "Enterprise": 15}
# fmt: off
INDUSTRIES = ["Software", "Healthcare", "Financial Services", "Retail", "Manufacturing",
              "Education", "Media"]
SIGNUPS_PER_YEAR = {2021: 80, 2022: 100, 2023: 120, 2024: 150}
ORDERS_PER_YEAR = {"SMB": 1.5, "Mid-Market": 2.5, "Enterprise": 4.0}
NAME_STEMS = ["Acme", "Bluefin", "Cedar", "Delta", "Ember", "Fjord", "Granite", "Harbor",
              "Iris", "Juniper", "Kestrel", "Lumen", "Maple", "Nimbus", "Orbit", "Pinecrest",
              "Quartz", "Raven", "Summit", "Tidal", "Umber", "Vertex", "Willow", "Xenon",
              "Yarrow", "Zephyr"]
NAME_CORES = ["Analytics", "Logistics", "Health", "Foods", "Robotics", "Capital", "Learning",
              "Energy", "Retail", "Media", "Labs", "Systems", "Works", "Dynamics", "Bio",
              "Freight", "Textiles", "Software"]
NAME_SUFFIXES = [", Inc.", " Ltd", " GmbH", " LLC", "", " Group", ", Co."]
CHURN_REASONS = ["price", "budget cuts", "switched to competitor", "missing features",
                 "company acquired"]
# fmt: on

# (name, region, title, manager_id, hire_date); rep_id is the position + 1.
SALES_REPS: list[tuple[str, str | None, str, int | None, str]] = [
    ("Dana Whitfield", None, "VP Sales", None, "2019-02-04"),
    ("Marcus Lee", "North America", "Regional Director", 1, "2019-05-13"),
    ("Sofia Brandt", "EMEA", "Regional Director", 1, "2019-09-02"),
    ("Kenji Watanabe", "APAC", "Regional Director", 1, "2020-03-16"),
    ("Lucia Fernandes", "LATAM", "Regional Director", 1, "2020-07-01"),
    ("Priya Raman", "North America", "Account Executive", 2, "2019-11-11"),
    ("Tom Okafor", "North America", "Account Executive", 2, "2020-06-22"),
    ("Emily Carter", "North America", "Account Executive", 2, "2021-04-05"),
    ("Jake Morrison", "North America", "Account Executive", 2, "2022-08-15"),
    ("Hannah Vogel", "EMEA", "Account Executive", 3, "2020-01-20"),
    ("Luca Romano", "EMEA", "Account Executive", 3, "2021-02-08"),
    ("Amelie Dubois", "EMEA", "Account Executive", 3, "2022-10-03"),
    ("Oskar Lindqvist", "EMEA", "Account Executive", 3, "2024-11-04"),
    ("Mei Chen", "APAC", "Account Executive", 4, "2020-09-14"),
    ("Arjun Mehta", "APAC", "Account Executive", 4, "2021-11-29"),
    ("Chloe Tan", "APAC", "Account Executive", 4, "2023-03-06"),
    ("Diego Alvarez", "LATAM", "Account Executive", 5, "2020-11-02"),
    ("Camila Rocha", "LATAM", "Account Executive", 5, "2022-05-16"),
]
LATE_HIRE = 13
"""Oskar Lindqvist joined in November 2024 and has no customers yet."""

# (sku, name, category, list price in cents, launched_on, discontinued_on); product_id = pos + 1.
PRODUCTS: list[tuple[str, str, str, int, str, str | None]] = [
    ("SEAT-10", "Seat Pack 10", "Seats", 120_000, "2019-01-01", None),
    ("SEAT-50", "Seat Pack 50", "Seats", 540_000, "2019-01-01", None),
    ("SEAT-100", "Seat Pack 100", "Seats", 960_000, "2020-06-01", None),
    ("ADD-ANL", "Advanced Analytics", "Add-on", 240_000, "2019-01-01", None),
    ("ADD-SSO", "SSO & SCIM", "Add-on", 240_000, "2019-01-01", None),
    ("ADD-AUD", "Audit Log", "Add-on", 90_000, "2020-02-01", None),
    ("ADD-SBX", "Sandbox Environment", "Add-on", 150_000, "2022-06-01", None),
    ("ADD-API", "API Boost", "Add-on", 60_000, "2023-03-15", None),
    ("ADD-LEG", "Legacy Connector", "Add-on", 75_000, "2019-01-01", "2022-12-31"),
    ("SVC-ONB", "Onboarding Package", "Services", 300_000, "2019-01-01", None),
    ("SVC-INT", "Custom Integration", "Services", 750_000, "2019-01-01", None),
    ("SVC-TRN", "Training Day", "Services", 180_000, "2019-01-01", None),
    ("SVC-HLT", "Health Check", "Services", 180_000, "2021-09-01", None),
    ("SUP-PRM", "Premium Support", "Support", 480_000, "2019-01-01", None),
    ("SUP-247", "24/7 Support", "Support", 960_000, "2020-01-01", None),
    ("SUP-CSM", "Dedicated CSM", "Support", 1_200_000, "2021-01-01", None),
]
SEAT_PACKS_PER_ORDER = {"SMB": (1, 2), "Mid-Market": (1, 4), "Enterprise": (2, 8)}
CATEGORY_WEIGHTS = {"Seats": 45, "Add-on": 30, "Services": 15, "Support": 10}

# plan: (seat price in cents per year, min seats, max seats)
PLANS = {"Starter": (24_000, 5, 25), "Growth": (42_000, 20, 120), "Enterprise": (78_000, 100, 600)}
NEXT_PLAN = {"Starter": "Growth", "Growth": "Enterprise"}
CHURN_RATE = {"Starter": 0.20, "Growth": 0.12, "Enterprise": 0.07}


@dataclass
class Customer:
    """One customer row, kept for generating its orders and subscriptions."""

    customer_id: int
    company_name: str
    region: str
    country: str
    segment: str
    industry: str | None
    signup_date: date
    sales_rep_id: int | None


def _money(cents: int) -> str:
    """Cents as a decimal string: 123456 -> '1234.56'."""
    return f"{cents // 100}.{cents % 100:02d}"


def _cell(value: object) -> str:
    """A CSV cell: NULL is the empty field, dates ISO, booleans lower case."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, date):
        return value.isoformat()
    return str(value)


def _add_months(day: date, months: int) -> date:
    """The same day ``months`` later, clamped to the month's end (Jan 31 + 1 -> Feb 28)."""
    index = day.month - 1 + months
    year, month = day.year + index // 12, index % 12 + 1
    last_day = (date(year + month // 12, month % 12 + 1, 1) - timedelta(1)).day
    return date(year, month, min(day.day, last_day))


def _pick(rng: random.Random, weights: Mapping[str, float]) -> str:
    return rng.choices(list(weights), weights=list(weights.values()))[0]


def _company_names(rng: random.Random, count: int) -> list[str]:
    pairs = [(stem, core) for stem in NAME_STEMS for core in NAME_CORES]
    rng.shuffle(pairs)
    return [f"{stem} {core}{rng.choice(NAME_SUFFIXES)}" for stem, core in pairs[:count]]


def make_customers(rng: random.Random) -> list[Customer]:
    """Customers in signup order, each owned by an account executive of its region (or none)."""
    signups: list[date] = []
    for year, count in SIGNUPS_PER_YEAR.items():
        days = (date(year, 12, 31) - date(year, 1, 1)).days
        signups += sorted(date(year, 1, 1) + timedelta(rng.randint(0, days)) for _ in range(count))
    names = _company_names(rng, len(signups))
    executives = {
        region: [
            pos + 1
            for pos, rep in enumerate(SALES_REPS)
            if rep[1] == region and rep[2] == "Account Executive" and pos + 1 != LATE_HIRE
        ]
        for region in REGIONS
    }
    customers = []
    for number, (signup, name) in enumerate(zip(signups, names, strict=True)):
        region = _pick(rng, REGION_WEIGHTS)
        reps = executives[region]
        rep = rng.choices(reps, weights=range(len(reps) + 2, 2, -1))[0]
        customers.append(
            Customer(
                customer_id=1001 + number,
                company_name=name,
                region=region,
                country=rng.choice(REGIONS[region]),
                segment=_pick(rng, SEGMENT_WEIGHTS),
                industry=None if rng.random() < 0.1 else rng.choice(INDUSTRIES),
                signup_date=signup,
                sales_rep_id=None if rng.random() < 0.08 else rep,
            )
        )
    return customers


def _sellable(day: date) -> list[int]:
    return [
        pos + 1
        for pos, product in enumerate(PRODUCTS)
        if date.fromisoformat(product[4]) <= day
        and (product[5] is None or day <= date.fromisoformat(product[5]))
    ]


def _order_items(rng: random.Random, day: date, segment: str) -> list[tuple[int, int, int]]:
    """(product_id, quantity, unit price in cents) for one order placed on ``day``."""
    sellable = _sellable(day)
    count = rng.choices([1, 2, 3, 4], weights=[45, 30, 17, 8])[0]
    chosen: list[int] = []
    while len(chosen) < count:
        product_id = rng.choices(
            sellable, weights=[CATEGORY_WEIGHTS[PRODUCTS[p - 1][2]] for p in sellable]
        )[0]
        if product_id not in chosen:
            chosen.append(product_id)
    items = []
    for product_id in chosen:
        _sku, _name, category, list_cents, _launch, _end = PRODUCTS[product_id - 1]
        if category == "Seats":
            quantity = rng.randint(*SEAT_PACKS_PER_ORDER[segment])
        else:
            quantity = rng.choice([1, 1, 1, 2])
        unit_cents = list_cents * 9 // 10 if day < PRICE_RISE_DAY else list_cents
        items.append((product_id, quantity, unit_cents))
    return items


def make_orders(
    rng: random.Random, customers: Sequence[Customer]
) -> tuple[list[list[object]], list[list[object]]]:
    """Orders and order items; customers order at a monthly rate set by their segment."""
    drafts: list[tuple[date, int, str, str | None, str, list[tuple[int, int, int]]]] = []
    for customer in customers:
        month = date(customer.signup_date.year, customer.signup_date.month, 1)
        while month <= LAST_DAY:
            if rng.random() < ORDERS_PER_YEAR[customer.segment] / 12:
                month_end = _add_months(month, 1) - timedelta(1)
                first = max(month, customer.signup_date)
                day = first + timedelta(rng.randint(0, (month_end - first).days))
                if day >= date(2024, 12, 1) and rng.random() < 0.35:
                    status = "pending"
                else:
                    status = rng.choices(["completed", "refunded", "cancelled"], [86, 6, 8])[0]
                channel = rng.choices(["web", "sales", "partner", None], [45, 35, 13, 7])[0]
                discount = rng.choice(
                    {
                        "SMB": ["0.00"] * 4 + ["0.05"],
                        "Mid-Market": ["0.00", "0.00", "0.05", "0.10"],
                        "Enterprise": ["0.05", "0.10", "0.15", "0.20"],
                    }[customer.segment]
                )
                drafts.append(
                    (
                        day,
                        customer.customer_id,
                        status,
                        channel,
                        discount,
                        _order_items(rng, day, customer.segment),
                    )
                )
            month = _add_months(month, 1)
    drafts.sort(key=lambda draft: (draft[0], draft[1]))
    orders: list[list[object]] = []
    items: list[list[object]] = []
    for number, (day, customer_id, status, channel, discount, lines) in enumerate(drafts):
        order_id = 50001 + number
        orders.append([order_id, customer_id, day, status, channel, discount])
        for product_id, quantity, unit_cents in lines:
            items.append([len(items) + 1, order_id, product_id, quantity, _money(unit_cents)])
    return orders, items


class _Subscription(NamedTuple):
    start: date
    customer_id: int
    plan: str
    seats: int
    arr_cents: int
    billing: str
    end: date | None = None
    end_reason: str | None = None
    churn_reason: str | None = None


def make_subscriptions(rng: random.Random, customers: Sequence[Customer]) -> list[list[object]]:
    """Subscriptions from signup on; at each anniversary one churns, upgrades, expands or renews.

    An upgrade or expansion ends the subscription and starts a new one the same day.
    ``end_date`` is NULL while a subscription is still running at the end of 2024.
    """
    first_plan = {
        "SMB": {"Starter": 75, "Growth": 25},
        "Mid-Market": {"Starter": 20, "Growth": 65, "Enterprise": 15},
        "Enterprise": {"Growth": 25, "Enterprise": 75},
    }
    made: list[_Subscription] = []
    for customer in customers:
        plan = _pick(rng, first_plan[customer.segment])
        seat_cents, low, high = PLANS[plan]
        seats = rng.randint(low, high) // 5 * 5 or 5
        billing = "monthly" if plan == "Starter" and rng.random() < 0.6 else "annual"
        current = _Subscription(
            customer.signup_date, customer.customer_id, plan, seats, seat_cents * seats, billing
        )
        renewal = _add_months(current.start, 12)
        while renewal <= LAST_DAY:
            roll = rng.random()
            if roll < CHURN_RATE[plan]:
                reason = None if rng.random() < 0.25 else rng.choice(CHURN_REASONS)
                current = current._replace(end=renewal, end_reason="churned", churn_reason=reason)
                break
            if roll < CHURN_RATE[plan] + 0.25:
                upgrade = plan in NEXT_PLAN and roll < CHURN_RATE[plan] + 0.12
                made.append(
                    current._replace(end=renewal, end_reason="upgraded" if upgrade else "expanded")
                )
                if upgrade:
                    plan = NEXT_PLAN[plan]
                    seat_cents, low, _high = PLANS[plan]
                    seats = max(low, seats)
                    billing = "annual"
                seats = seats * rng.choice([6, 7, 8]) // 25 * 5
                current = _Subscription(
                    renewal, customer.customer_id, plan, seats, seat_cents * seats, billing
                )
            renewal = _add_months(renewal, 12)
        made.append(current)
    made.sort(key=lambda sub: (sub.start, sub.customer_id))
    return [
        [7001 + number, sub.customer_id, sub.plan, sub.seats, _money(sub.arr_cents), sub.billing,
         sub.start, sub.end, sub.end_reason, sub.churn_reason]
        for number, sub in enumerate(made)
    ]  # fmt: skip


def _write_csv(path: Path, header: Sequence[str], rows: Iterable[Sequence[object]]) -> int:
    count = 0
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(header)
        for row in rows:
            writer.writerow([_cell(value) for value in row])
            count += 1
    return count


def write_demo_data(out: Path) -> dict[str, int]:
    """Write every CSV of the demo warehouse into ``out``; returns rows written per file."""
    rng = random.Random(SEED)
    customers = make_customers(rng)
    orders, items = make_orders(rng, customers)
    subscriptions = make_subscriptions(rng, customers)
    out.mkdir(parents=True, exist_ok=True)
    reps = ([pos + 1, *rep] for pos, rep in enumerate(SALES_REPS))
    products = (
        [pos + 1, sku, name, category, _money(cents), launched, ended]
        for pos, (sku, name, category, cents, launched, ended) in enumerate(PRODUCTS)
    )
    tables: dict[str, tuple[str, Iterable[Sequence[object]]]] = {
        "sales_reps": ("rep_id,full_name,region,title,manager_id,hire_date", reps),
        "customers": (
            "customer_id,company_name,region,country,segment,industry,signup_date,sales_rep_id",
            (astuple(customer) for customer in customers),
        ),
        "products": (
            "product_id,sku,product_name,category,list_price,launched_on,discontinued_on",
            products,
        ),
        "orders": ("order_id,customer_id,order_date,status,channel,discount_pct", orders),
        "order_items": ("order_item_id,order_id,product_id,quantity,unit_price", items),
        "subscriptions": (
            "subscription_id,customer_id,plan,seats,arr,billing_period,start_date,end_date,"
            "end_reason,churn_reason",
            subscriptions,
        ),
    }
    return {
        f"{table}.csv": _write_csv(out / f"{table}.csv", header.split(","), rows)
        for table, (header, rows) in tables.items()
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).resolve().parents[1] / "data",
        help="folder to write the CSV files into (default: data/)",
    )
    args = parser.parse_args(argv)
    for name, count in write_demo_data(args.out).items():
        print(f"{args.out / name}: {count} rows")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
