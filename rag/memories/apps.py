"""Hooks of typed memories into the kernel, called from rag's AppConfig.ready()."""

from __future__ import annotations


def ready() -> None:
    from memoryhub import registry
    from rag.memories import consolidation, services
    from rag.memories import tasks as _tasks  # noqa: F401  (registers the Celery tasks)

    # Every stored batch: ask for a consolidation when the session has MEMORY_CONSOLIDATION_EVERY
    # messages not yet consolidated. Only a row and an on_commit enqueue: indexing never waits.
    registry.register_job_step(
        registry.INDEX, "memories_trigger",
        prepare=lambda job, messages: None,
        apply=lambda job, messages, prepared: consolidation.consolidation_request_if_due(job.conversation),
    )
    # A session's extraction (its end, its size, or an explicit request) consolidates it too.
    registry.register_job_step(
        registry.EXTRACT, "memories_trigger",
        prepare=lambda job, messages: None,
        apply=lambda job, messages, prepared: consolidation.consolidation_request(
            job.conversation, trigger="extract"),
    )
    registry.register_eraser("memories", services.user_erase)
