"""The profiles app's settings, read at call time. Defaults and validation live in
memoryhub/settings.py (overridable from the environment); this says what each means.

PROFILE_CONFIDENCE_THRESHOLD    facts below it wait for review and never reach a prompt
PROFILE_DECAY_AFTER_DAYS        an active fact not confirmed for this long starts to decay
PROFILE_DECAY_FACTOR            each decay multiplies the confidence by this
PROFILE_DECAY_INTERVAL_DAYS     a fact decays at most once per this many days
PROFILE_LLM_DEFAULT_CONFIDENCE  confidence of an LLM fact that comes without one (seed 002)
PROFILE_EXTRACT_WINDOW_TOKENS   conversation tokens sent per extraction call
"""

from __future__ import annotations

from django.conf import settings


def confidence_threshold() -> float:
    return float(settings.PROFILE_CONFIDENCE_THRESHOLD)


def decay_after_days() -> float:
    return float(settings.PROFILE_DECAY_AFTER_DAYS)


def decay_factor() -> float:
    return float(settings.PROFILE_DECAY_FACTOR)


def decay_interval_days() -> float:
    return float(settings.PROFILE_DECAY_INTERVAL_DAYS)


def llm_default_confidence() -> float:
    return float(settings.PROFILE_LLM_DEFAULT_CONFIDENCE)


def extract_window_tokens() -> int:
    return int(settings.PROFILE_EXTRACT_WINDOW_TOKENS)
