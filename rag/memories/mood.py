"""Mood, affinity and trust of a user towards a character (seed 004's Emotions and Mood).

mood      = 0.7 * previous + 0.3 * new, where new is the mean of the signed emotion scores of
            a consolidation (-1..1; the rules score intensity times the emotion's valence);
affinity  -100..100, moves by 10 * rel per consolidation;
trust     0..100, +2 per consolidation with a non-negative rel, -5 with a negative one
          (trust is slow to win and quick to lose).
`new` takes all the user's emotions: the mood is how the user feels. `rel`, the same mean, takes only the
emotions that concern the relationship (`relationship_emotions`): seed 004 took them all, so fury at a
landlord ("I'm furious at my landlord") or sadness confided to the character lowered its affinity. By whom
an emotion is about (its `target`, from the consolidator):
  "character"    anger at it ("you're useless", "ты бесполезен", "你真没用"), thanks to it: counts either way;
  none known     ("I'm so angry!", no one named): counts either way, as the seed had it;
  "user"         the user's own life shared with it ("I'm so sad today"): counts only when positive, since
                 a sorrow confided is no grievance against the listener;
  "third_party"  someone else ("my boss", "мой арендодатель", "我老板", Tom): does not count.
A consolidation with emotions but none that counts leaves affinity and trust where the drift puts them.
Affinity and trust drift back to neutral (0 and 50) with a half-life of
MEMORY_RELATION_HALF_LIFE_DAYS of inactivity; the drift is applied when the figures are read and
before each update, so no beat job has to touch every row.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Avg
from django.utils import timezone

from memoryhub.models import Tenant
from rag.models import CharacterMood

MOOD_KEEP = 0.7
NEUTRAL_AFFINITY = 0.0
NEUTRAL_TRUST = 50.0


def emotion_signal(emotions: dict[str, float]) -> float | None:
    """The mean of a consolidation's emotion scores (signed, -1..1, seed 004), or None."""
    if not emotions:
        return None
    return sum(emotions.values()) / len(emotions)


def relationship_emotions(emotions: Iterable[tuple[str, float, str | None]]) -> dict[str, float]:
    """The emotions (name, signed score, target) that move affinity and trust, by the rule of the module's
    docstring; the strongest score per emotion."""
    out: dict[str, float] = {}
    for name, score, target in emotions:
        if target == "third_party" or (target == "user" and score < 0):
            continue
        if abs(score) > abs(out.get(name, 0.0)) or name not in out:
            out[name] = score
    return out


def _decayed(value: float, neutral: float, since: datetime, now: datetime) -> float:
    days = max(0.0, (now - since).total_seconds() / 86400)
    return neutral + (value - neutral) * 0.5 ** (days / settings.MEMORY_RELATION_HALF_LIFE_DAYS)


def _figures(row: CharacterMood, now: datetime) -> dict[str, Any]:
    return {
        "user_id": row.user_id, "mood": round(row.mood, 4),
        "affinity": round(_decayed(row.affinity, NEUTRAL_AFFINITY, row.last_interaction_at, now), 2),
        "trust": round(_decayed(row.trust, NEUTRAL_TRUST, row.last_interaction_at, now), 2),
        "emotions": row.emotions, "interactions": row.interactions, "last_interaction_at": row.last_interaction_at,
    }


def mood_update(*, tenant: Tenant, user_id: str, conf_uid: str, emotions: dict[str, float],
                toward: dict[str, float] | None = None, now: datetime | None = None) -> CharacterMood:
    """Fold one consolidation's emotions into the user's figures. Runs in the caller's transaction.
    `toward`: the emotions that move affinity and trust (`relationship_emotions`); None, all of them."""
    now = now or timezone.now()
    with transaction.atomic():
        row, created = CharacterMood.objects.select_for_update().get_or_create(
            tenant=tenant, user_id=user_id, conf_uid=conf_uid, defaults={"last_interaction_at": now})
        signal = emotion_signal(emotions)
        relation = signal if toward is None else emotion_signal(toward)
        row.affinity = _decayed(row.affinity, NEUTRAL_AFFINITY, row.last_interaction_at, now)
        row.trust = _decayed(row.trust, NEUTRAL_TRUST, row.last_interaction_at, now)
        if signal is not None:
            row.mood = signal if created else MOOD_KEEP * row.mood + (1 - MOOD_KEEP) * signal
            row.emotions = {name: round(score, 3) for name, score in emotions.items()}
        if relation is not None:
            row.affinity = min(100.0, max(-100.0, row.affinity + 10 * relation))
            row.trust = min(100.0, max(0.0, row.trust + (2.0 if relation >= 0 else -5.0)))
        row.interactions += 1
        row.last_interaction_at = now
        row.save()
    return row


def character_mood(*, tenant_id: int, conf_uid: str, user_id: str | None = None) -> dict[str, Any]:
    now = timezone.now()
    rows = CharacterMood.objects.filter(tenant_id=tenant_id, conf_uid=conf_uid)
    if user_id:
        rows = rows.filter(user_id=user_id)
    aggregate = rows.aggregate(mood=Avg("mood"))
    listed = list(rows.order_by("-last_interaction_at")[:200])
    return {"conf_uid": conf_uid, "mood": round(aggregate["mood"] or 0.0, 4), "users": rows.count(),
            "relationships": [_figures(r, now) for r in listed]}
