"""Keys take the American spelling of their words since 2026-12-03 ("favourite_colour" → "favorite_color",
the key the rules write). Facts and events stored before under a British spelling move to that key, so
the per-key API, which now normalises to it, still reaches them. A fact the key already holds under the
new spelling is the same fact: the old row goes, its history joins the key's. An active value meeting
another active value of a single-valued key waits for review beside it, as a competing value does.
Reversing leaves the keys, which older code reads as any other free-form key."""

from __future__ import annotations

from typing import Any

from django.db import migrations


def americanise_keys(apps: Any, schema_editor: Any) -> None:
    from memoryhub.exceptions import ApplicationError
    from profiles.keys import key_normalize

    UserProfile = apps.get_model("profiles", "UserProfile")
    FactEvent = apps.get_model("profiles", "FactEvent")
    keys = set(UserProfile.objects.values_list("key", flat=True).distinct()) | set(
        FactEvent.objects.values_list("key", flat=True).distinct())
    for key in sorted(keys):
        try:
            new = key_normalize(key)
        except ApplicationError:
            continue
        if new == key:
            continue
        for fact in UserProfile.objects.filter(key=key).order_by("pk"):
            held = UserProfile.objects.filter(tenant_id=fact.tenant_id, user_id=fact.user_id, key=new)
            if held.filter(value_norm=fact.value_norm).exists():
                fact.delete()
                continue
            if fact.status == "active" and not fact.multi and held.filter(status="active").exists():
                fact.status = "pending"
            fact.key = new
            fact.save(update_fields=["key", "status"])
        FactEvent.objects.filter(key=key).update(key=new)


class Migration(migrations.Migration):

    dependencies = [
        ("profiles", "0003_fact_event_fact_ref"),
    ]

    operations = [
        migrations.RunPython(americanise_keys, migrations.RunPython.noop),
    ]
