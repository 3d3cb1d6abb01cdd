"""Used by `make run`: a demo tenant with a fresh key, an admin user, and a little data to try."""

from __future__ import annotations

import secrets
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils import timezone

from memoryhub import services
from memoryhub.models import ApiKey, Conversation, Tenant

DEMO_TENANT = "demo"
DEMO_KEY_NAME = "make-run"
DEMO_USER = "demo-user"

DEMO_SESSIONS: list[tuple[str, list[tuple[str, str]]]] = [
    ("welcome", [
        ("user", "Hi! My name is Anna, I live in Berlin and I work as a data engineer."),
        ("assistant", "Nice to meet you, Anna! How can I help today?"),
        ("user", "My colleague Petrov and I are planning the Q3 migration project."),
        ("assistant", "Sounds like a big project. What is the first milestone?"),
    ]),
    ("weekend", [
        ("user", "Меня зовут Анна, на выходных мы с сестрой Машей ездили в Потсдам."),
        ("assistant", "Как вам Потсдам?"),
        ("user", "我喜欢喝乌龙茶，周末常去公园跑步。"),
        ("assistant", "听起来很惬意！"),
    ]),
]


class Command(BaseCommand):
    help = "Create (once) the demo tenant, demo data and an admin user; print a fresh demo API key."

    def handle(self, *args: object, **options: object) -> None:
        with transaction.atomic():
            tenant, _ = Tenant.objects.get_or_create(name=DEMO_TENANT)
            # A key is shown only once, so every `make run` prints a new one and retires the last.
            for old in ApiKey.objects.filter(tenant=tenant, name=DEMO_KEY_NAME, revoked_at__isnull=True):
                services.api_key_revoke(api_key=old)
            _, raw = services.api_key_create(tenant=tenant, name=DEMO_KEY_NAME, scopes=ApiKey.Scope.values)
        if not Conversation.objects.filter(tenant=tenant, user_id=DEMO_USER).exists():
            start = timezone.now() - timedelta(days=2)
            for day, (session_id, turns) in enumerate(DEMO_SESSIONS):
                services.messages_append(
                    tenant=tenant,
                    user_id=DEMO_USER,
                    session_id=session_id,
                    messages=[
                        services.IncomingMessage(
                            role=role, text=text, created_at=start + timedelta(days=day, minutes=i),
                            external_id=f"{session_id}-{i}",
                        )
                        for i, (role, text) in enumerate(turns)
                    ],
                    auto_extract=True,
                )
            self.stdout.write(f"demo data loaded for user {DEMO_USER!r}")

        User = get_user_model()
        password_line = "admin user exists (reset with: .venv/bin/python manage.py changepassword admin)"
        if not User.objects.filter(username="admin").exists():
            password = secrets.token_urlsafe(12)
            User.objects.create_superuser("admin", "admin@localhost", password)
            password_line = f"admin login: admin / {password}  (shown once)"

        self.stdout.write("")
        self.stdout.write(self.style.SUCCESS("MemoryHub is starting on http://127.0.0.1:8000"))
        self.stdout.write(f"  demo API key: {raw}")
        self.stdout.write(f"  {password_line}")
        self.stdout.write("  try: curl -H 'Authorization: Bearer <key>' "
                          f"http://127.0.0.1:8000/api/v1/users/{DEMO_USER}/sessions/welcome/messages")
        self.stdout.write("  API docs: http://127.0.0.1:8000/api/docs/   admin: http://127.0.0.1:8000/admin/")
        self.stdout.write("")
