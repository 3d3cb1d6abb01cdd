"""The review dashboard on the admin's home page: what waits for an editor, per queue, and links to
the pages of figures apps register (a world's quality page)."""

from __future__ import annotations

from typing import Any

from django import template
from django.utils import timezone

from memoryhub import registry

register = template.Library()


def _may_view(user: Any, queue: registry.ReviewQueue) -> bool:
    """A reviewer sees a queue (its count, oldest item and decisions) when they may view its items:
    the view or the change permission, as the admin's own pages decide."""
    opts = queue.pending().model._meta
    return any(user.has_perm(f"{opts.app_label}.{action}_{opts.model_name}") for action in ("view", "change"))


def _queues(user: Any) -> list[registry.ReviewQueue]:
    return [queue for queue in registry.review_queues.values() if _may_view(user, queue)]


def queue_rows(user: Any) -> list[dict[str, Any]]:
    rows = []
    for queue in _queues(user):
        pending = queue.pending()
        oldest = pending.order_by(queue.age_field).first()
        rows.append({
            "label": queue.label, "url": queue.url, "count": pending.count(),
            "oldest": queue.describe(oldest) if oldest is not None else "",
            "oldest_at": getattr(oldest, queue.age_field) if oldest is not None else None,
        })
    return rows


def decisions_today(user: Any) -> list[registry.Decision]:
    midnight = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
    decided = [d for queue in _queues(user) for d in queue.decided_since(midnight)]
    return sorted(decided, key=lambda d: d.when, reverse=True)[:30]


def link_groups(user: Any) -> list[dict[str, Any]]:
    return [{"label": entry.label, "links": entry.links()} for entry in registry.dashboard_links.values()
            if not entry.permission or user.has_perm(entry.permission)]


@register.inclusion_tag("admin/review_dashboard.html", takes_context=True)
def review_dashboard(context: dict[str, Any]) -> dict[str, Any]:
    # Only what the logged-in reviewer may view: the home page is open to every staff login.
    user = context["request"].user
    return {"queues": queue_rows(user), "decisions": decisions_today(user), "link_groups": link_groups(user)}
