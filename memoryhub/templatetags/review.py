"""The review dashboard on the admin's home page: what waits for an editor, per queue, and links to
the pages of figures apps register (a world's quality page)."""

from __future__ import annotations

from typing import Any

from django import template
from django.utils import timezone

from memoryhub import registry

register = template.Library()


def queue_rows() -> list[dict[str, Any]]:
    rows = []
    for queue in registry.review_queues.values():
        pending = queue.pending()
        oldest = pending.order_by(queue.age_field).first()
        rows.append({
            "label": queue.label, "url": queue.url, "count": pending.count(),
            "oldest": queue.describe(oldest) if oldest is not None else "",
            "oldest_at": getattr(oldest, queue.age_field) if oldest is not None else None,
        })
    return rows


def decisions_today() -> list[registry.Decision]:
    midnight = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
    decided = [d for queue in registry.review_queues.values() for d in queue.decided_since(midnight)]
    return sorted(decided, key=lambda d: d.when, reverse=True)[:30]


def link_groups() -> list[dict[str, Any]]:
    return [{"label": entry.label, "links": entry.links()} for entry in registry.dashboard_links.values()]


@register.inclusion_tag("admin/review_dashboard.html")
def review_dashboard() -> dict[str, Any]:
    return {"queues": queue_rows(), "decisions": decisions_today(), "link_groups": link_groups()}
