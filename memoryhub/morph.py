"""Russian morphology: one pymorphy3 analyser per process, for every app that reads Russian words
(profiles' values, people's names, knowledge search's noun phrases, art card tags, lore_assert).
Its dictionaries take ~20 MB and ~0.1 s to load: loaded at the first Russian word, then shared
(each app had its own copy before)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pymorphy3

_lock = threading.Lock()
_analyzer: pymorphy3.MorphAnalyzer | None = None


def analyzer() -> pymorphy3.MorphAnalyzer:
    global _analyzer
    if _analyzer is None:
        with _lock:
            if _analyzer is None:
                import pymorphy3

                _analyzer = pymorphy3.MorphAnalyzer(lang="ru")
    return _analyzer
