from django.apps import AppConfig


class PeopleConfig(AppConfig):
    name = "people"
    verbose_name = "People graph"

    def ready(self) -> None:
        from memoryhub import registry
        from people import api, selectors, services
        from people.metrics import people_by_circle

        # After profiles' step (INSTALLED_APPS order): the archivist's prompt carries the facts the
        # job has just saved. The LLM runs in prepare and the embedder in after, both outside any
        # transaction; apply only writes.
        registry.register_job_step(
            registry.EXTRACT, "people", prepare=services.people_job_prepare, apply=services.people_job_apply,
            after=services.people_job_after,
        )
        registry.register_eraser("people", services.people_user_erase)
        registry.register_scrape_metrics("people", people_by_circle)
        registry.register_review_queue(registry.ReviewQueue(
            name="people", label="Merge proposals", pending=selectors.review_pending,
            describe=selectors.review_describe, url="/admin/people/mergeproposal/?status__exact=pending",
            decided_since=selectors.review_decided_since, api=api.REVIEW_API,
        ))
