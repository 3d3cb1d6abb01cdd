from django.apps import AppConfig


class PeopleConfig(AppConfig):
    name = "people"
    verbose_name = "People graph"

    def ready(self) -> None:
        from memoryhub import registry
        from people import services

        # After rag's indexing step (rag is listed before people in INSTALLED_APPS).
        registry.register_archival_step("people", services.people_archival_step)
        registry.register_eraser("people", services.people_user_erase)
