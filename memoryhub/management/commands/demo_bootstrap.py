"""Used by `make run`: a demo tenant with its key, an admin user, and a little data to try."""

from __future__ import annotations

import secrets
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils import timezone

from memoryhub import services
from memoryhub.auth import hash_key
from memoryhub.models import ApiKey, Conversation, Tenant

DEMO_TENANT = "demo"
DEMO_KEY_NAME = "make-run"
DEMO_USER = "demo-user"


def demo_key_file() -> Path:
    return Path(settings.VAR_DIR) / "demo_api_key"


def demo_key_store(raw: str) -> None:
    """Keep the demo key's raw value beside the embedded database it opens (owner-only), so a
    client configured with it keeps working across restarts until the key is rotated."""
    path = demo_key_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch(mode=0o600, exist_ok=True)
    path.chmod(0o600)
    path.write_text(raw + "\n")


def demo_key_current(tenant: Tenant) -> str | None:
    """The stored demo key if it still opens the demo tenant, else None."""
    path = demo_key_file()
    if not path.exists():
        return None
    raw = path.read_text().strip()
    key = ApiKey.objects.filter(tenant=tenant, key_hash=hash_key(raw)).first()
    # A key made before a scope existed lacks it: the demo key opens every part of the demo.
    usable = key is not None and key.is_active and set(ApiKey.Scope.values) <= set(key.scopes)
    return raw if usable else None

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
    help = ("Create (once) the demo tenant, demo data and an admin user; print the demo API key "
            "(the same one on every run until `manage.py apikey_rotate demo` replaces it).")

    def handle(self, *args: object, **options: object) -> None:
        with transaction.atomic():
            tenant, _ = Tenant.objects.get_or_create(name=DEMO_TENANT)
            raw = demo_key_current(tenant)
            if raw is None:
                # No usable stored key (first run, or it was revoked): retire the demo keys whose
                # value nobody can show any more and make one that is kept.
                for old in ApiKey.objects.filter(tenant=tenant, name=DEMO_KEY_NAME, revoked_at__isnull=True):
                    services.api_key_revoke(api_key=old)
                _, raw = services.api_key_create(tenant=tenant, name=DEMO_KEY_NAME, scopes=ApiKey.Scope.values)
                demo_key_store(raw)
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
        self.stdout.write(f"  demo API key: {raw}  (kept in var/demo_api_key; replace it with: "
                          ".venv/bin/python manage.py apikey_rotate demo)")
        self.stdout.write(f"  {password_line}")
        self.stdout.write("  try: curl -H 'Authorization: Bearer <key>' "
                          f"http://127.0.0.1:8000/api/v1/users/{DEMO_USER}/sessions/welcome/messages")
        self.stdout.write("  API docs: http://127.0.0.1:8000/api/docs/   admin: http://127.0.0.1:8000/admin/")
        self.stdout.write("")
