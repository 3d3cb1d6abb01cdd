"""The score threshold of dedup's transliteration rule, measured on generated pairs (no database).

Positives: a Russian name ("Сергей Петров") against its Latin transliteration (BGN/PCGN or a common
variant) with one typo in one word (a letter replaced by a keyboard neighbour, dropped, doubled, or two
swapped). Negatives: a Latin name against another person's Cyrillic name: the same first name with
another surname (Петров / Ветров / Петрова) or another first name with the same surname. Prints, per
threshold, how many positives the rule scores at or above it and how many negatives.

    .venv/bin/python bench/dedup_translit_threshold.py
"""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")

import django

django.setup()

from people import dedup, translit  # noqa: E402

FIRST = ["Сергей", "Дмитрий", "Александр", "Михаил", "Екатерина", "Мария", "Марина", "Наталья", "Ольга", "Елена",
         "Иван", "Ивана", "Алексей", "Андрей", "Николай", "Татьяна", "Юлия", "Владимир", "Анастасия", "Ксения",
         "Павел", "Полина", "Кирилл", "Григорий", "Людмила", "Светлана", "Евгений", "Валентина", "Галина", "Борис"]
LAST = ["Петров", "Ветров", "Иванов", "Сидоров", "Кузнецов", "Смирнов", "Попов", "Соколов", "Лебедев", "Козлов",
        "Новиков", "Морозов", "Волков", "Соловьёв", "Васильев", "Зайцев", "Павлов", "Семёнов", "Голубев", "Виноградов",
        "Богданов", "Воробьёв", "Фёдоров", "Михайлов", "Беляев", "Тарасов", "Белов", "Комаров", "Орлов", "Киселёв"]
VARIANTS = {"й": "i", "х": "h", "ю": "iu", "я": "ia", "ё": "yo", "ж": "j"}
NEIGHBOURS = {c: n for row in ("qwertyuiop", "asdfghjkl", "zxcvbnm")
              for c, n in zip(row, row[1:] + row[-2], strict=True)}


def latin(name: str, rng: random.Random) -> str:
    variant = rng.random() < 0.5
    return "".join(VARIANTS.get(c, translit._CYRILLIC_TO_LATIN.get(c, c)) if variant and c in VARIANTS
                   else translit._CYRILLIC_TO_LATIN.get(c, c) for c in name.lower())


def typo(word: str, rng: random.Random) -> str:
    i = rng.randrange(1, len(word) - 1)  # typos rarely hit the first letter, and the rule refuses those
    kind = rng.choice(("replace", "drop", "double", "swap"))
    if kind == "replace":
        return word[:i] + NEIGHBOURS.get(word[i], word[i]) + word[i + 1:]
    if kind == "drop":
        return word[:i] + word[i + 1:]
    if kind == "double":
        return word[:i] + word[i] + word[i:]
    return word[:i] + word[i + 1] + word[i] + word[i + 2:]


def main() -> None:
    rng = random.Random(7)
    positives, negatives = [], []
    for _ in range(600):
        first, last = rng.choice(FIRST), rng.choice(LAST)
        words = [latin(first, rng), latin(last, rng)]
        k = rng.randrange(2)
        words[k] = typo(words[k], rng)
        positives.append((" ".join(words), f"{first} {last}".lower().replace("ё", "е")))
    for _ in range(600):
        first, last = rng.choice(FIRST), rng.choice(LAST)
        other_first, other_last = first, last
        while (other_first, other_last) == (first, last):
            if rng.random() < 0.5:
                other_last = rng.choice(LAST) + ("а" if rng.random() < 0.3 else "")
            else:
                other_first = rng.choice(FIRST)
        negatives.append((f"{latin(first, rng)} {latin(last, rng)}",
                          f"{other_first} {other_last}".lower().replace("ё", "е")))
    pos = [dedup._translit(a, b) for a, b in positives]
    neg = [dedup._translit(a, b) for a, b in negatives]
    print(f"{len(pos)} positives (a transliteration with one typo), {len(neg)} negatives (another person)")
    print(f"{'threshold':>9}{'recall':>8}{'false+':>8}{'precision':>11}")
    for threshold in (0.7, 0.75, 0.8, 0.83, 0.85, 0.9):
        tp = sum(s >= threshold for s in pos)
        fp = sum(s >= threshold for s in neg)
        print(f"{threshold:>9.2f}{tp / len(pos):>8.3f}{fp:>8d}{tp / max(tp + fp, 1):>11.3f}")
    fps = sorted({(a, b, round(s, 3)) for (a, b), s in zip(negatives, neg, strict=True) if s >= 0.7})
    for a, b, s in fps[:10]:
        print(f"  false+ at {s}: {a!r} ~ {b!r}")


if __name__ == "__main__":
    main()
