"""Chart specifications: rows of a query turned into what static/dashboard.js hands to Chart.js.

A spec is plain JSON (type, labels, datasets, and options the page script understands), written into the
page as an application/json script: the page runs no inline script, and the data is escaped as JSON."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def series(
    rows: Iterable[dict], x: str, group: str, y: str, xs: Iterable | None = None
) -> tuple[list, dict[str, list]]:
    """Labels (XS, or the values of X in order) and, per value of GROUP, Y at each label (0 where it has none)."""
    rows = list(rows)
    labels = [str(v) for v in (xs if xs is not None else sorted({r[x] for r in rows}, key=str))]
    at = {label: i for i, label in enumerate(labels)}
    groups: dict[str, list] = {}
    for r in rows:
        if str(r[x]) in at:  # XS may lack a label another snapshot of the data had (a night just committed)
            groups.setdefault(str(r[group]), [0] * len(labels))[at[str(r[x])]] = number(r[y])
    return labels, groups


def chart(kind: str, labels: list, datasets: dict[str, list], *, stacked: bool = False, **options: Any) -> dict:
    return {
        "type": kind,
        "labels": labels,
        "datasets": [{"label": name, "data": values} for name, values in datasets.items()],
        "stacked": stacked,
        **options,
    }


def number(value: Any) -> float | int | None:
    """A value of a row as a chart's point: numeric and Decimal as float, NULL as a gap."""
    if value is None:
        return None
    return value if isinstance(value, int) else float(value)
