"""Offline consolidation throughput: the rule-based consolidator (LLM_PROVIDER=off) over every
session of an eval file, and its output for one session.

    .venv/bin/python bench/consolidation_offline.py ../shared/eval/locomo_dev.json [--show 0]

Measures the consolidator itself (rules + kind + importance + emotions + the jsonschema check),
not the database writes; the end-to-end cost shows in eval_retrieval's ingest rate.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")

import django

django.setup()

from rag.memories.consolidation import memory_candidates, validate_consolidation  # noqa: E402
from rag.memories.rules import Turn, consolidate_rules  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("file", type=Path)
    parser.add_argument("--show", type=int, default=0, help="index of the session whose output is printed")
    args = parser.parse_args()
    data = json.loads(args.file.read_text())
    sessions = []
    for conversation in data["conversations"]:
        speakers = sorted({t.get("speaker", "") for s in conversation["sessions"] for t in s["turns"]})
        # LoCoMo is a dialogue of two people: the first speaker plays the user, the second the character.
        character = speakers[-1] if len(speakers) > 1 else "assistant"
        for session in conversation["sessions"]:
            turns = [Turn(t.get("speaker") or "User", t["text"], t.get("speaker") == character)
                     for t in session["turns"] if t["text"].strip()]
            sessions.append((session["session_id"], character, turns))
    messages = sum(len(turns) for _, _, turns in sessions)
    started = time.perf_counter()
    outputs = []
    for session_id, character, turns in sessions:
        output = consolidate_rules(turns, character)
        assert not validate_consolidation(output)
        outputs.append((output, memory_candidates(output, character=character, history_uid=session_id,
                                                  session_id=session_id, default_confidence=0.7)))
    seconds = time.perf_counter() - started
    memories = sum(len(c) for _, c in outputs)
    print(f"{len(sessions)} sessions, {messages} messages -> {memories} memories in {seconds:.2f} s: "
          f"{messages / seconds:.0f} messages/s")
    # Where they went: a rule change shows here as memories moving between categories and kinds.
    print("by category:", dict(Counter(m.category for _, c in outputs for m, _ in c).most_common()))
    print("by kind:", dict(Counter(m.kind for _, c in outputs for m, _ in c).most_common()))
    # Two mistakes a rule change must not bring back: the user's words kept as the character's own
    # memory (a user line that does not speak of the character), and questions kept as if they stated something.
    items = [(item, turns) for (output, _), (_, _, turns) in zip(outputs, sessions, strict=True)
             for key in ("facts_about_user", "past_events", "self_beliefs", "objectives", "key_facts")
             for item in output[key]]
    users_as_self = sum(item["about"] == "self" and not turns[item["from"][0]].is_character for item, turns in items)
    questions = sum(item["text"].rstrip().endswith(("?", "？")) for item, _ in items)
    print(f"user lines kept as the character's own (self): {users_as_self}; questions kept: {questions}")
    output, _ = outputs[args.show]
    print(f"session {sessions[args.show][0]} ({len(sessions[args.show][2])} messages):")
    print(json.dumps({k: (v[:4] if isinstance(v, list) else v) for k, v in output.items()}, ensure_ascii=False,
                     indent=1))
    print({k: len(v) for k, v in output.items() if isinstance(v, list)})


if __name__ == "__main__":
    main()
