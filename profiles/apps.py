from django.apps import AppConfig


class ProfilesConfig(AppConfig):
    name = "profiles"
    verbose_name = "Profiles (long-term user facts)"

    def ready(self) -> None:
        from memoryhub import registry
        from profiles import api, selectors, services

        # Registered before people's step (INSTALLED_APPS order), so the archivist's prompt sees the
        # facts this job has just saved. The LLM is asked in prepare, outside any transaction.
        registry.register_job_step(
            registry.EXTRACT, "profiles", prepare=services.facts_job_prepare, apply=services.facts_job_apply,
        )
        registry.register_eraser("profiles", services.user_erase)
        registry.register_review_queue(registry.ReviewQueue(
            name="profiles", label="Facts waiting for review (low confidence or conflicting)",
            pending=selectors.review_pending,
            describe=selectors.review_describe, url="/admin/profiles/userprofile/?status=pending",
            decided_since=selectors.review_decided_since, api=api.REVIEW_API,
        ))
