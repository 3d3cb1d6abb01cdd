from django.apps import AppConfig


class ProfilesConfig(AppConfig):
    name = "profiles"
    verbose_name = "Profiles (long-term user facts)"

    def ready(self) -> None:
        from memoryhub import registry
        from profiles import services

        # After rag's indexing step (apps are ready in INSTALLED_APPS order): the batch is already
        # searchable even when extraction fails.
        registry.register_archival_step("profiles", services.facts_extract_for_job)
        registry.register_eraser("profiles", services.user_erase)
