"""The HTML report (``sqlbench report``) and the viewer's pages (``sqlbench view``): one
self-contained page per run — all CSS and script inline, nothing fetched from the network.

Every string from a run (questions, SQL, answers, tool output) is untrusted: the page is
rendered by Jinja2 with autoescaping, the run's data travels as JSON inside a
``<script type="application/json">`` (with ``<``, ``>``, ``&`` and quotes escaped), and the
page's script shows it through text nodes only. A Content-Security-Policy allows no network
access (the viewer: its own server only) and runs only the page's own script (by nonce).
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

import jinja2
from markupsafe import Markup

from sqlbench.records.run import RunSummary
from sqlbench.report.html_data import report_data
from sqlbench.report.run_format import usd_text
from sqlbench.runs.scores import RunResult

if TYPE_CHECKING:
    from sqlbench.variants.rebuild import RebuiltVariant

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("sqlbench.report", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
# The run's data is most of a page: no spaces after separators (a 2,000-question run: -15%).
_ENV.policies["json.dumps_kwargs"] = {"sort_keys": False, "separators": (",", ":")}

_TREND_WIDTH, _TREND_HEIGHT, _TREND_PAD = 640, 180, 32
_SERIES_COLORS = ("#2563eb", "#dc2626", "#059669", "#d97706", "#7c3aed", "#0891b2", "#be185d")


def render(
    run: RunResult,
    *,
    base: RunResult | None = None,
    history: Sequence[RunSummary] = (),
    viewer: dict[str, str] | None = None,
    variants: Mapping[tuple[str, str], RebuiltVariant] | None = None,
) -> str:
    """The report page of ``run``: header, breakdowns, question list and detail; with ``base``
    the comparison; with ``history`` (the store's runs) the accuracy trend.

    Args:
        run: The run to show.
        base: The run to compare with.
        history: Stored runs for the trend chart.
        viewer: Set by ``sqlbench view``: ``token`` (sent with review decisions) and
            ``runs_url``; None for a standalone file.
        variants: The data variant each question failed on, rebuilt (``sqlbench report``).
    """
    data = report_data(run, base=base, history=history, variants=variants)
    data["viewer"] = viewer
    return _ENV.get_template("report.html.j2").render(
        css=_asset("report.css"),
        script=_asset("report.js"),
        title=f"sqlbench · {run.info.name}",
        data=data,
        run=data["run"],
        breakdowns=data["breakdowns"],
        compare=data["compare"],
        trend=trend_chart(data["trend"]),
        cost_chart=cost_chart(history, run.info.id),
        nonce=secrets.token_urlsafe(16),
        connect=Markup("'self'" if viewer else "'none'"),
        viewer=viewer,
    )


def render_runs_page(viewer: dict[str, str]) -> str:
    """The viewer's front page: the run list, refreshed from ``/api/runs`` while it is open."""
    return _ENV.get_template("runs.html.j2").render(
        css=_asset("report.css"),
        script=_asset("runs.js"),
        title="sqlbench · runs",
        data={"viewer": viewer},
        nonce=secrets.token_urlsafe(16),
        connect=Markup("'self'"),
        viewer=viewer,
    )


@cache
def _asset(name: str) -> Markup:
    """A stylesheet or script shipped beside the templates, inlined as is (our own text)."""
    text = resources.files("sqlbench.report").joinpath("templates", name).read_text("utf-8")
    if "</" in text.replace("<\\/", ""):
        raise ValueError(f"{name} must not contain '</' (it is inlined in the page)")
    return Markup(text)


def cost_chart(history: Sequence[RunSummary], current: str | None) -> dict[str, Any] | None:
    """Accuracy against cost over the stored runs priced in full (docs/cost.md): one dot per
    run (``current``'s marked), cost rightwards from $0, accuracy 0–100% upwards; None with
    fewer than two. The report's template draws it, and the viewer's run list from its JSON."""
    runs = [
        s
        for s in history
        if s.cost_usd is not None and s.accuracy.value is not None and s.info.shard is None
    ]
    if len(runs) < 2:
        return None
    top = max(s.cost_usd or 0.0 for s in runs) or 1.0
    inner_w = _TREND_WIDTH - 2 * _TREND_PAD
    inner_h = _TREND_HEIGHT - 2 * _TREND_PAD
    dots = [
        {
            "x": round(_TREND_PAD + (s.cost_usd or 0.0) / top * inner_w, 1),
            "y": round(_TREND_PAD + (1 - (s.accuracy.value or 0.0)) * inner_h, 1),
            "title": f"{s.info.name} ({s.info.agent_name}): {s.accuracy.label()}, "
            f"{usd_text(s.cost_usd)}",
            "current": s.info.id == current,
            "run": s.info.id,
        }
        for s in runs
    ]
    grid = [
        {"y": round(_TREND_PAD + (1 - v) * inner_h, 1), "label": f"{v:.0%}"}
        for v in (0.0, 0.5, 1.0)
    ]
    return {
        "width": _TREND_WIDTH,
        "height": _TREND_HEIGHT,
        "pad": _TREND_PAD,
        "dots": dots,
        "grid": grid,
        "right": usd_text(top),
    }


def trend_chart(series: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The trend chart's geometry (an inline SVG drawn by the template): one polyline per
    branch and agent over time, accuracy 0–100% upwards; None with fewer than two runs."""
    points = [p for s in series for p in s["points"]]
    if len(points) < 2:
        return None
    moments = [datetime.fromisoformat(p["at"]).timestamp() for p in points]
    first, last = min(moments), max(moments)
    span = (last - first) or 1.0
    inner_w = _TREND_WIDTH - 2 * _TREND_PAD
    inner_h = _TREND_HEIGHT - 2 * _TREND_PAD

    def x(at: str) -> float:
        return round(
            _TREND_PAD + (datetime.fromisoformat(at).timestamp() - first) / span * inner_w, 1
        )

    def y(value: float) -> float:
        return round(_TREND_PAD + (1 - value) * inner_h, 1)

    lines = []
    for index, one in enumerate(series):
        color = _SERIES_COLORS[index % len(_SERIES_COLORS)]
        dots = [
            {
                "x": x(p["at"]),
                "y": y(p["accuracy"]),
                "title": f"{p['name']}: {p['accuracy']:.0%}",
                "current": p["current"],
            }
            for p in one["points"]
        ]
        lines.append(
            {
                "label": f"{one['branch']} · {one['agent']}",
                "color": color,
                "path": " ".join(f"{d['x']},{d['y']}" for d in dots),
                "dots": dots,
            }
        )
    return {
        "width": _TREND_WIDTH,
        "height": _TREND_HEIGHT,
        "pad": _TREND_PAD,
        "grid": [{"y": y(v), "label": f"{v:.0%}"} for v in (0.0, 0.5, 1.0)],
        "first": datetime.fromtimestamp(first, UTC).strftime("%Y-%m-%d %H:%M"),
        "last": datetime.fromtimestamp(last, UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "lines": lines,
    }
