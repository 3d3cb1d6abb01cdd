"""The profiles app's settings, read lazily with their defaults (none is required).

PROFILE_CONFIDENCE_THRESHOLD    0.7   facts below it wait for review and never reach a prompt
PROFILE_DECAY_AFTER_DAYS        180   an active fact not confirmed for this long starts to decay
PROFILE_DECAY_FACTOR            0.9   each decay multiplies the confidence by this
PROFILE_DECAY_INTERVAL_DAYS     30    a fact decays at most once per this many days
PROFILE_LLM_DEFAULT_CONFIDENCE  0.8   confidence of an LLM fact that comes without one (seed 002)
PROFILE_EXTRACT_WINDOW_TOKENS   3000  conversation tokens sent per extraction call
"""

from __future__ import annotations

from django.conf import settings


def confidence_threshold() -> float:
    return float(getattr(settings, "PROFILE_CONFIDENCE_THRESHOLD", 0.7))


def decay_after_days() -> float:
    return float(getattr(settings, "PROFILE_DECAY_AFTER_DAYS", 180))


def decay_factor() -> float:
    return float(getattr(settings, "PROFILE_DECAY_FACTOR", 0.9))


def decay_interval_days() -> float:
    return float(getattr(settings, "PROFILE_DECAY_INTERVAL_DAYS", 30))


def llm_default_confidence() -> float:
    return float(getattr(settings, "PROFILE_LLM_DEFAULT_CONFIDENCE", 0.8))


def extract_window_tokens() -> int:
    return int(getattr(settings, "PROFILE_EXTRACT_WINDOW_TOKENS", 3000))
