"""Beat jobs of the people app."""

from __future__ import annotations

from celery import shared_task

from people.models import Person
from people.services.vectors import people_embed_pending


@shared_task
def people_vectors_fill(limit_users: int = 200) -> int:
    """Embed the people whose vector a write left missing (the embedder was away after a PATCH or
    an admin edit, or a job stopped before its after phase). Without it they would wait for their
    user's next extract job. Returns the number of vectors stored."""
    users = (Person.objects.filter(status=Person.Status.ACTIVE, embedding__isnull=True)
             .values_list("tenant_id", "user_id").distinct().order_by()[:limit_users])
    stored = 0
    for tenant_id, user_id in list(users):
        stored += len(people_embed_pending(tenant_id=tenant_id, user_id=user_id))
    return stored
