"""The admin's SVG bar charts: text escaped, gaps drawn apart from zeros, scaled to the ceiling."""

from __future__ import annotations

import re

from memoryhub.charts import bar_chart


def test_bars_are_scaled_gaps_are_marked_and_text_is_escaped() -> None:
    svg = str(bar_chart([("<b>mon</b>", 2.0), ("tue", None), ("wed", 0.0), ("thu", 4.0)], title="A & B"))
    assert svg.startswith('<svg class="chart"') and svg.endswith("</svg>")
    assert "<b>" not in svg and "&lt;b&gt;mon&lt;/b&gt;: 2" in svg and "A &amp; B" in svg
    heights = [float(h) for h in re.findall(r'class="bar"[^>]*height="([\d.]+)"', svg)]
    assert heights[0] * 2 == heights[2] and heights[1] == 0.0  # 2, 0 and 4 of a ceiling of 4
    assert svg.count('class="gap"') == 1 and "tue: no data" in svg


def test_an_empty_chart_says_so() -> None:
    assert "no data yet" in str(bar_chart([("a", None)], title="t", max_value=1.0))
