"""Small server-rendered SVG charts for admin pages: no JavaScript, no CDN (the service runs offline).

A bar per point; `None` is a gap (no data that day), drawn as a grey tick so it is not read as 0.
Every bar carries a `<title>` (its label and value, shown on hover) and the chart is labelled for
screen readers; callers show the same figures in a table next to it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe


def _fmt(value: float) -> str:
    return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"


def bar_chart(points: Sequence[tuple[str, float | None]], *, title: str,
              value_format: Callable[[float], str] = _fmt, max_value: float | None = None,
              width: int = 640, height: int = 180) -> SafeString:
    """Bars of `points` ((label, value) in order) scaled to `max_value` (default: the largest)."""
    left, right, top, bottom = 48, 8, 22, 34
    plot_w, plot_h = width - left - right, height - top - bottom
    values = [v for _, v in points if v is not None]
    ceiling = max_value if max_value is not None else max(values, default=0.0)
    ceiling = ceiling if ceiling > 0 else 1.0
    slot = plot_w / max(len(points), 1)
    bar_w = max(slot * 0.7, 1.0)
    parts = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
        f'<text x="{left}" y="14" font-size="12" font-weight="bold">{escape(title)}</text>',
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" stroke="#999"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}" stroke="#999"/>',
        f'<text x="{left - 4}" y="{top + 4}" font-size="10" text-anchor="end">{escape(value_format(ceiling))}</text>',
        f'<text x="{left - 4}" y="{top + plot_h}" font-size="10" text-anchor="end">{escape(value_format(0.0))}</text>',
    ]
    # Label at most ~8 bars on the axis (first, last and evenly between), or every bar when few.
    step = max(1, round(len(points) / 8))
    for i, (label, value) in enumerate(points):
        x = left + i * slot + (slot - bar_w) / 2
        if value is None:
            parts.append(f'<rect class="gap" x="{x:.1f}" y="{top + plot_h - 2}" width="{bar_w:.1f}" height="2" '
                         f'fill="#ccc"><title>{escape(label)}: no data</title></rect>')
        else:
            h = max(min(value / ceiling, 1.0), 0.0) * plot_h
            parts.append(f'<rect class="bar" x="{x:.1f}" y="{top + plot_h - h:.1f}" width="{bar_w:.1f}" '
                         f'height="{h:.1f}" fill="#417690"><title>{escape(label)}: '
                         f'{escape(value_format(value))}</title></rect>')
            if len(points) <= 12:
                parts.append(f'<text x="{x + bar_w / 2:.1f}" y="{top + plot_h - h - 3:.1f}" font-size="10" '
                             f'text-anchor="middle">{escape(value_format(value))}</text>')
        if i % step == 0 or i == len(points) - 1:
            parts.append(f'<text x="{x + bar_w / 2:.1f}" y="{top + plot_h + 14}" font-size="10" '
                         f'text-anchor="middle">{escape(label)}</text>')
    if not values:
        parts.append(f'<text x="{left + plot_w / 2:.1f}" y="{top + plot_h / 2:.1f}" font-size="12" '
                     f'text-anchor="middle" fill="#777">no data yet</text>')
    parts.append("</svg>")
    return mark_safe("".join(parts))  # every interpolated text above is escaped
