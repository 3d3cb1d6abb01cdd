from django.apps import AppConfig


class LoreConfig(AppConfig):
    name = "lore"
    verbose_name = "Game-master knowledge"

    def ready(self) -> None:
        # A bad `knowledge:` section in config/knowledge.yaml stops start-up, naming the key.
        from lore import config

        config.domain_config("srd")

        from lore import edits, edits_api
        from lore import tasks as _lore_tasks  # noqa: F401  (registers the background builds' tasks)
        from lore.campaigns import tasks as _campaign_tasks  # noqa: F401  (registers the beat's Celery tasks)
        from lore.metrics import knowledge_versions
        from memoryhub import registry

        registry.register_dashboard_links(registry.DashboardLinks(
            name="world_quality", label="Game-master quality per world (seed 003 §8.10)", links=_world_quality_links,
            permission="lore.view_world"))
        registry.register_scrape_metrics("lore_versions", knowledge_versions)
        from lore.campaigns import art

        registry.register_reindexer(registry.Reindexer(
            name="artcards", label="art cards", units=art.artcards_reindex_campaigns,
            run=lambda campaign: art.artcards_reindex(campaign=campaign)))
        registry.register_review_queue(registry.ReviewQueue(
            name="lore_edits", label="Lore edits waiting for an editor",
            pending=edits.review_pending, describe=edits.review_describe,
            url="/admin/lore/knowledgeedit/?status__exact=pending", decided_since=edits.review_decided_since,
            api=edits_api.REVIEW_API,
        ))


def _world_quality_links() -> list[tuple[str, str]]:
    from django.urls import reverse

    from lore.models import World

    worlds = World.objects.select_related("tenant").order_by("tenant__name", "slug")[:50]
    return [(f"{w.tenant.name} / {w.slug}", reverse("admin:lore_world_quality", args=[w.pk])) for w in worlds]
