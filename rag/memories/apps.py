"""Hooks of typed memories into the kernel, called from rag's AppConfig.ready()."""

from __future__ import annotations


def ready() -> None:
    from memoryhub import registry
    from rag.memories import api, consolidation, selectors, services
    from rag.memories import tasks as _tasks  # noqa: F401  (registers the Celery tasks)

    # Every stored batch: ask for a consolidation when the session has MEMORY_CONSOLIDATION_EVERY
    # messages not yet consolidated. Only a row and an on_commit enqueue: indexing never waits.
    registry.register_job_step(
        registry.INDEX, "memories_trigger",
        prepare=lambda job, messages: None,
        apply=lambda job, messages, prepared: consolidation.consolidation_request_if_due(job.conversation),
    )
    # A session's end is the beat's idle check (memories_consolidate_due), not a step of the
    # extract job: a consolidation costs its own LLM call and must not hold up facts and people.
    registry.register_eraser("memories", services.user_erase)
    registry.register_review_queue(registry.ReviewQueue(
        name="memories", label="Typed memories waiting for review (low confidence)",
        pending=selectors.review_pending, describe=selectors.review_describe,
        url="/admin/rag/memoryreview/?status__exact=pending", decided_since=selectors.review_decided_since,
        api=api.REVIEW_API,
    ))
