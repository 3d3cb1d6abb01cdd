"""Text analysis shared by BM25, deduplication and token budgets (English, Russian, Chinese).

Everything that turns raw text into terms goes through this module, so that the index, the queries and the
deduplicator always agree on what a "word" is:

- ``normalize``: NFKC, casefold, 'ё'→'е', typographic apostrophes → "'", collapsed whitespace.
- ``words``: normalised words; runs of Han characters are segmented with jieba (``rjieba``).
- ``analyze``: ``words`` minus function words, then Snowball stems (English / Russian by script).
- ``detect_language``: cheap script counts → 'en' | 'ru' | 'zh'.
- ``count_tokens`` / ``truncate_to_tokens``: an offline estimate of cl100k-style LLM token counts.
- ``char_ngrams``: fastText-style character n-grams for the hashing embedder and fuzzy dedup.

Pure Python, no Django: it is imported by workers, management commands and benchmarks alike.
"""

from __future__ import annotations

import functools
import math
import re
import threading
import unicodedata
from collections.abc import Iterable

import rjieba
import Stemmer

__all__ = [
    "analyze",
    "analyze_many",
    "analyze_query",
    "char_ngrams",
    "count_tokens",
    "detect_language",
    "join_sentences",
    "normalize",
    "split_sentences",
    "term",
    "truncate_to_tokens",
    "words",
]

# ---------------------------------------------------------------------------------------------------------
# Character classes
# ---------------------------------------------------------------------------------------------------------

# CJK Unified Ideographs + Extension A, compatibility ideographs and the supplementary-plane extensions.
_HAN = (
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ebef\U0002f800-\U0002fa1f\U00030000-\U0003134f"
)
_CYR = "\u0400-\u052f"
# Latin letters incl. accented ones; × (U+00D7) and ÷ (U+00F7) sit inside Latin-1 but are symbols.
_LAT = "A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u1e00-\u1eff"

_HAN_CHAR = re.compile(f"[{_HAN}]")
_CYR_CHAR = re.compile(f"[{_CYR}]")
_LAT_CHAR = re.compile(f"[{_LAT}]")

# A word is a run of letters/digits (no underscore) with optional internal apostrophes: "don't", "o'brien".
# Hyphens split words ("e-mail" → e, mail; "кто-то" → кто, то), which is what BM25 wants.
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
# Same, but Han runs are matched separately so that "我在google工作" does not become one token.
# The per-character lookahead is slower, so it is only used when the text contains Han at all.
_NOT_HAN_WORD_CHAR = f"(?:(?![{_HAN}])[^\\W_])"
_WORD_OR_HAN = re.compile(f"(?P<han>[{_HAN}]+)|{_NOT_HAN_WORD_CHAR}+(?:['’]{_NOT_HAN_WORD_CHAR}+)*")

# ---------------------------------------------------------------------------------------------------------
# Normalisation and word split
# ---------------------------------------------------------------------------------------------------------

_NORMALIZE_TABLE = str.maketrans(
    {
        "ё": "е",
        # NFKC leaves typographic apostrophes alone; unify them so "don’t" and "don't" are the same word.
        "\u2019": "'",
        "\u02bc": "'",
        "\u2018": "'",
        # Invisible format characters from copy-paste would otherwise split words in two.
        "\u00ad": None,  # soft hyphen
        "\u200b": None,  # zero-width space
        "\u200c": None,  # zero-width non-joiner
        "\u200d": None,  # zero-width joiner
        "\u2060": None,  # word joiner
        "\ufeff": None,  # BOM / zero-width no-break space
    }
)


class NotUTF8(ValueError):
    """Bytes that are not UTF-8 text; `line` is where the first bad byte is (1-based)."""

    def __init__(self, line: int) -> None:
        super().__init__(f"not valid UTF-8 (line {line})")
        self.line = line


def decode_utf8(content: bytes) -> str:
    """An uploaded file's text: UTF-8, a byte-order mark dropped; NotUTF8 names the line at fault."""
    try:
        return content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise NotUTF8(content[: exc.start].count(b"\n") + 1) from exc


def normalize(text: str) -> str:
    """NFKC + casefold + 'ё'→'е' + unified apostrophes, whitespace collapsed to single spaces and stripped."""
    text = unicodedata.normalize("NFKC", text).casefold().translate(_NORMALIZE_TABLE)
    return " ".join(text.split())


@functools.lru_cache(maxsize=65_536)
def _cut_han(run: str) -> tuple[str, ...]:
    # Cached because the same memory text is analysed repeatedly (indexing, dedup, re-ranking).
    return tuple(rjieba.cut(run))


def words(text: str) -> list[str]:
    """Normalised words of ``text``; Han runs are segmented with jieba, other scripts split on non-letters."""
    norm = normalize(text)
    if not _HAN_CHAR.search(norm):
        return _WORD.findall(norm)
    out: list[str] = []
    for match in _WORD_OR_HAN.finditer(norm):
        if match.lastgroup == "han":
            out.extend(_cut_han(match.group()))
        else:
            out.append(match.group())
    return out


# ---------------------------------------------------------------------------------------------------------
# Stopwords and stemming
# ---------------------------------------------------------------------------------------------------------

# Function words only, question words included ("кто" and its case forms as "who", "哪位" as "哪个"): a
# question's frame says nothing of what it asks for. Personal pronouns and negations are deliberately
# kept: deduplication runs on these terms, and "I like coffee" / "I don't like coffee" or "she is a
# doctor" / "I am a doctor" must not look like duplicates. Frequent content words are left to BM25's idf.
_STOP_EN = """
a an the and or but nor if then else than so as because while whether although though
of in on at by for with from to into onto upon about above below over under between among through
during before after since until via per against within without toward towards
is am are was were be been being has have had having do does did doing
will would shall should can could may might must
this that these those it its it's itself there there's here that's what's who's
which who whom whose what when where why how
also just very too quite rather really such some any each every both either own same other
"""
_STOP_RU = """
и а но да или либо что чтобы как так же ли бы если когда потому поэтому хотя тоже также зато причем чем
в во на с со к ко по о об обо от до за из изо у для без под подо над при про через между перед около
вокруг после среди кроме вместо ради
вот вон ведь уж уже ещё лишь только даже разве именно то нибудь либо ка
это этот эта эти этого этой этому этим этих этом тот та те того той тому тем тех том
такой такая такое такие который которая которое которые которого которой котором которым которых
быть был была было были будет будут буду будем будешь будете есть является
здесь тут там где куда откуда весь вся всё все всего всех всем свой своя своё свои своего своей очень
какой какая какое какие какого какую каком каким какими каких какому сколько зачем почему чей чья чьё чьи
кто кого кому кем ком чего чему
"""
_STOP_ZH = """
的 了 是 在 和 与 跟 及 或 也 就 都 而 但 还 又 被 把 给 让 着 过 吗 呢 吧 啊 呀 嘛 哦 之 以 于 从 向 对 为
这 那 这个 那个 这些 那些 一个 其 等 所 则 即 因为 所以 如果 虽然 但是 而且 并 很 得 地 么
什么 为什么 怎么 怎么样 怎样 哪 哪里 哪儿 哪个 哪位 哪些 多少 几 谁 什 啥
"""
# Normalised like the text they are compared with (ещё → еще, it's stays it's).
STOPWORDS: frozenset[str] = frozenset(normalize(w) for w in (_STOP_EN + _STOP_RU + _STOP_ZH).split())

# Russian surnames and possessive adjectives (Петров, Пушкин, Соловьёв) decline like nouns in the
# nominative but like adjectives elsewhere, so Snowball stems "петров" → "петр" but "петровым" → "петров".
# Re-stemming stems that still end in such a suffix folds the whole paradigm; measured on ~12k random
# pymorphy3 lexemes it raises fully-folded lemmas from 74% to 77% at almost no extra collisions, whereas
# stemming everything to a fixpoint also merges names such as Иван and Иванов.
_RU_SURNAME_SUFFIXES = ("ов", "ев", "ин", "ын")


class _Stemmers(threading.local):
    # Snowball stemmer objects keep per-call state and are not thread-safe: one pair per thread.
    def __init__(self) -> None:
        self.en = Stemmer.Stemmer("english")
        self.ru = Stemmer.Stemmer("russian")


_STEMMERS = _Stemmers()


@functools.lru_cache(maxsize=262_144)
def _term(word: str) -> str:
    """Index term for one normalised word, '' for a stopword. Cached: this is analyze()'s hot path."""
    if word in STOPWORDS:
        return ""
    if _CYR_CHAR.search(word):
        stemmer = _STEMMERS.ru
        stem: str = stemmer.stemWord(word)
        while stem.endswith(_RU_SURNAME_SUFFIXES):
            shorter: str = stemmer.stemWord(stem)
            if shorter == stem:
                break
            stem = shorter
        return stem
    if _LAT_CHAR.search(word):
        return str(_STEMMERS.en.stemWord(word))
    return word  # Han words (already segmented), numbers, other scripts: kept verbatim.


# One word's BM25 term, for callers that keep the word too (memoryhub.wordvectors).
term = _term
# A Han character: for callers that treat Chinese words apart (no spaces bound them).
HAN_CHAR = _HAN_CHAR


def analyze(text: str) -> list[str]:
    """BM25 terms: ``words()`` without stopwords, stemmed by script (Snowball en/ru, Han as is).

    A Chinese word of several characters also yields its characters, so a query segmented
    differently from the text still matches ("茶" in a question finds "乌龙茶" in a memory).
    """
    out: list[str] = []
    for word in words(text):
        term = _term(word)
        if not term:
            continue
        out.append(term)
        if len(term) > 1 and _HAN_CHAR.match(term):
            out.extend(c for c in term if _term(c))
    return out


# A sentence ends at Chinese or other end marks, at "." or "…" followed by a space or a Chinese character (not
# inside "72.5"), or at a line break; an abbreviation's dot ("Dr.", "St. Luke", "т.е.", "ул. Ленина") ends none.
_SENTENCE_END = re.compile(rf"(?<=[。！？!?])\s*|(?<=[.…])\s+|(?<=[.…])(?=[{_HAN}])|\n+")
_ABBREVIATIONS = re.compile(r"(?:^|\s)(?:mr|mrs|ms|dr|prof|st|jr|sr|т\.е|др|г|ул|им)\.$", re.IGNORECASE)


def split_sentences(text: str) -> list[str]:
    """The sentences of `text`, stripped (`_SENTENCE_END`)."""
    parts = [p.strip() for p in _SENTENCE_END.split(text) if p and p.strip()]
    merged: list[str] = []
    for part in parts:
        if merged and _ABBREVIATIONS.search(merged[-1]):
            merged[-1] = f"{merged[-1]} {part}"
        else:
            merged.append(part)
    return merged


def join_sentences(pieces: Iterable[str]) -> str:
    """Sentences joined as their writing does: a space between, none beside Chinese (or other CJK) text,
    which has no spaces ("…五岁。上周末…", not "…五岁。 上周末…")."""
    out = ""
    for piece in pieces:
        if not piece:
            continue
        out += piece if not out or out[-1] >= "\u3000" or piece[0] >= "\u3000" else f" {piece}"
    return out


# Personal pronouns: stored as terms (deduplication needs them, see STOPWORDS) but no search word of a
# query. In a user's memories "I" and "my" are on most turns; in a new user's few turns they were the
# one word an unrelated question shared with the best of them ("What should I cook for dinner
# tonight?" brought back "Hi! My name is Anna…"). Not "им" or "ему": Snowball stems them like "имя"
# and "ем". A Chinese word's characters are terms of their own: 们 (of 我们) is listed, 自 and 己 (of 自己,
# and of 自行车) are not.
_PRONOUNS_EN = ("i me my mine myself you your yours yourself yourselves we us our ours ourselves he him his himself "
                "she her hers herself they them their theirs themselves")
# With the reflexive "себя" / "свой": "кастую щит на себя" brought Deception and Sleight of Hand, whose
# text says "себя" most.
_PRONOUNS_RU = ("я меня мне мной мой моя моё мои ты тебя тебе твой твоя он его она её ей мы нас нам наш наша "
                "вы вас вам ваш они их себя себе собой свой своя своё свои")
_PRONOUNS_ZH = ("我", "我们", "你", "你们", "他", "她", "它", "他们", "她们", "咱们", "咱", "们")


@functools.cache
def pronoun_terms() -> frozenset[str]:
    """The BM25 terms of personal pronouns in English, Russian and Chinese."""
    return frozenset(_term(normalize(w)) for w in (*_PRONOUNS_EN.split(), *_PRONOUNS_RU.split(), *_PRONOUNS_ZH)) - {""}


def analyze_many(texts: Iterable[str]) -> list[list[str]]:
    """``analyze`` over a batch (corpus indexing)."""
    return [analyze(t) for t in texts]


# A Russian short passive participle: "ослеплён(а/о/ы)", "очарован", "отравлен" (normalised: ё → е).
_RU_SHORT_PARTICIPLE = re.compile(r"^([а-я]{3,}[еая]н)[аоы]?$")


def analyze_query(text: str) -> list[str]:
    """``analyze`` for a query: its terms, plus for each Russian short participle the term of its
    verbal noun. "Персонаж ослеплён" is how a player asks about the condition the rules call
    "Ослепление" and describe as "ослеплённое существо", but Snowball reads the short form's -ен as a
    verb ending ("ослепл") while the noun and the long participle keep it ("ослеплен"), so the words
    never met. Query side only: indexed terms are unchanged, and a word that is no participle
    ("стакан") adds a term that matches its own other forms at most.
    """
    terms = analyze(text)
    for word in words(text):
        match = _RU_SHORT_PARTICIPLE.match(word)
        if match is None:
            continue
        noun = _term(match.group(1) + "ие")
        if noun and noun not in terms:
            terms.append(noun)
    return terms


# ---------------------------------------------------------------------------------------------------------
# Language detection
# ---------------------------------------------------------------------------------------------------------

# One Han character carries about as much as three Latin letters (an English word averages ~4.7 letters,
# a Chinese word ~1.5 characters), so Chinese with embedded brand names ("我在Microsoft工作") stays 'zh'.
_HAN_WEIGHT = 3


def detect_language(text: str) -> str:
    """'zh' when Han characters dominate, 'ru' when Cyrillic does, otherwise 'en' (also for no letters)."""
    han = len(_HAN_CHAR.findall(text)) * _HAN_WEIGHT
    cyr = len(_CYR_CHAR.findall(text))
    lat = len(_LAT_CHAR.findall(text))
    if han > max(cyr, lat):
        return "zh"
    if cyr > lat:
        return "ru"
    return "en"


# ---------------------------------------------------------------------------------------------------------
# Token estimation
# ---------------------------------------------------------------------------------------------------------

# Estimates of OpenAI cl100k_base behaviour (no tokenizer files are downloaded). A leading space is
# merged into the following word, so words are costed, not spaces.
# Latin: nearly every frequent English word up to ~6 letters is a single " word" token; longer or rarer
# words split into ~4-letter pieces. Typical prose lands at ~1.3 tokens/word, ~4–5 chars/token.
LATIN_FREE_CHARS = 6
LATIN_CHARS_PER_TOKEN = 4.0
# Cyrillic: the vocabulary has far fewer Russian merges; ~2.7 characters per token, short words 1 token.
CYRILLIC_CHARS_PER_TOKEN = 2.7
# Han: common characters are one token, rarer ones two or three byte-level tokens; 1.0 is the
# conservative end of the usual 1–1.5 characters/token so that budgets are not overrun.
HAN_CHARS_PER_TOKEN = 1.0
# Other scripts (Greek, Arabic, Devanagari, Hangul, kana…): poorly covered, ~1.5 characters per token.
OTHER_CHARS_PER_TOKEN = 1.5
# Digits are split into groups of at most three.
DIGITS_PER_TOKEN = 3
# ASCII punctuation runs partly merge ("...", "?!", "://"): first char one token, each further one half.
PUNCT_EXTRA_COST = 0.5
# Emoji and other astral-plane symbols are byte-level: usually 2–3 tokens.
ASTRAL_SYMBOL_COST = 2.0

_TOKEN_RUN = re.compile(
    f"(?P<han>[{_HAN}]+)"
    f"|(?P<cyr>[{_CYR}]+)"
    f"|(?P<lat>[{_LAT}]+(?:['’][{_LAT}]+)*)"
    r"|(?P<num>\d+)"
    r"|(?P<nl>[\r\n]+)"
    r"|(?P<ws>\s+)"
    f"|(?P<other>(?:(?![{_HAN}{_CYR}{_LAT}])[^\\W\\d_])+)"
    r"|(?P<sym>(?:[^\w\s]|_)+)"
)
_APOSTROPHES = re.compile("['’]")


def _latin_cost(segment_len: int) -> float:
    return 1.0 + max(0, segment_len - LATIN_FREE_CHARS) / LATIN_CHARS_PER_TOKEN


def _symbol_cost(run: str) -> float:
    cost = 0.0
    seen_ascii = False
    for ch in run:
        if ch.isascii():
            cost += PUNCT_EXTRA_COST if seen_ascii else 1.0
            seen_ascii = True
        elif ord(ch) > 0xFFFF:
            cost += ASTRAL_SYMBOL_COST
        else:
            cost += 1.0
    return cost


def count_tokens(text: str) -> int:
    """Estimated cl100k-style token count of raw ``text``; at least 1 for any non-empty string.

    Monotonic: a prefix never costs more than the whole text, which ``truncate_to_tokens`` relies on.
    """
    if not text:
        return 0
    total = 0.0
    for match in _TOKEN_RUN.finditer(text):
        kind = match.lastgroup
        run = match.group()
        if kind == "lat":
            # "don't" is two tokens ("don", "'t"): each apostrophe-separated segment is costed as a word.
            if "'" in run or "’" in run:
                total += sum(_latin_cost(len(seg)) for seg in _APOSTROPHES.split(run))
            else:
                total += _latin_cost(len(run))
        elif kind == "cyr":
            total += max(1.0, len(run) / CYRILLIC_CHARS_PER_TOKEN)
        elif kind == "han":
            total += len(run) / HAN_CHARS_PER_TOKEN
        elif kind == "num":
            total += math.ceil(len(run) / DIGITS_PER_TOKEN)
        elif kind == "nl":
            total += 1.0  # "\n", "\n\n"… are single tokens
        elif kind == "ws":
            total += 1.0 if len(run) > 1 else 0.0  # indentation runs are tokens; one space merges
        elif kind == "other":
            total += max(1.0, len(run) / OTHER_CHARS_PER_TOKEN)
        else:
            total += _symbol_cost(run)
    return max(1, math.ceil(total))


_ELLIPSIS = "…"
# Trailing separators that look odd right before the ellipsis ("Hello,…").
_TRAILING_JUNK = " \t\r\n,;:-–—"


def _word_ends(text: str) -> list[int]:
    """Offsets in raw ``text`` right after each word (jieba words inside Han runs)."""
    ends: list[int] = []
    for match in _WORD_OR_HAN.finditer(text):
        if match.lastgroup == "han":
            pos = match.start()
            for piece in _cut_han(match.group()):
                pos += len(piece)
                ends.append(pos)
        else:
            ends.append(match.end())
    return ends


def truncate_to_tokens(text: str, max_tokens: int) -> str:
    """``text`` if it fits in ``max_tokens``, else its longest word-boundary prefix + '…' that does.

    Falls back to a character cut only when even the first word does not fit (e.g. a long URL or blob).
    """
    if max_tokens <= 0:
        return ""
    if count_tokens(text) <= max_tokens:
        return text

    def clipped(end: int) -> str:
        return text[:end].rstrip(_TRAILING_JUNK) + _ELLIPSIS

    def fits(end: int) -> bool:
        return count_tokens(clipped(end)) <= max_tokens

    # count_tokens is monotonic in the prefix, so the largest fitting boundary can be binary-searched.
    for cuts in (_word_ends(text), range(len(text))):
        lo, hi = 0, len(cuts)  # invariant: cuts[:lo] fit, cuts[hi:] do not
        while lo < hi:
            mid = (lo + hi) // 2
            if fits(cuts[mid]):
                lo = mid + 1
            else:
                hi = mid
        if lo and text[: cuts[lo - 1]].strip(_TRAILING_JUNK):
            return clipped(cuts[lo - 1])
    return _ELLIPSIS if max_tokens >= count_tokens(_ELLIPSIS) else ""


# ---------------------------------------------------------------------------------------------------------
# Character n-grams
# ---------------------------------------------------------------------------------------------------------


def char_ngrams(word: str, n_min: int = 3, n_max: int = 5) -> list[str]:
    """fastText-style n-grams of ``'<' + word + '>'``, ordered by n then position, duplicates kept.

    The boundary markers let prefixes and suffixes hash differently from word-internal n-grams. A word too
    short for ``n_min`` yields its marked form so that it still produces one feature. Pass words from
    ``words()``: no normalisation happens here.
    """
    if n_min < 1 or n_max < n_min:
        raise ValueError(f"need 1 <= n_min <= n_max, got n_min={n_min}, n_max={n_max}")
    if not word:
        return []
    marked = f"<{word}>"
    grams = [marked[i : i + n] for n in range(n_min, n_max + 1) for i in range(len(marked) - n + 1)]
    return grams or [marked]
