from __future__ import annotations

import json

import numpy as np
import pytest
from django.core.exceptions import ImproperlyConfigured

from lore import config as lore_config
from lore import selectors, services, smoke
from lore.models import Alias, KnowledgeChange, KnowledgeVersion, Source, World
from lore.normalize import SourceOptions
from memoryhub.exceptions import ApplicationError
from rag.models import Chunk, Namespace
from tests.concurrency import at_once, errors_of
from tests.lore.conftest import SPELLS, as_bytes


def _search(version: KnowledgeVersion, query: str, **kwargs: object) -> selectors.KnowledgeResult:
    targets = selectors.targets_resolve(tenant_id=version.tenant_id, world_slug=version.world.slug,
                                        domains=[version.domain], **kwargs)  # type: ignore[arg-type]
    return selectors.knowledge_search(tenant_id=version.tenant_id, targets=targets, query=query, k=5)


def test_ingest_builds_a_staged_version_whose_chunks_carry_entry_id_title_and_heading_path(staged):
    assert staged.status == KnowledgeVersion.Status.STAGED
    assert staged.version == "1.0.0" and staged.namespace == "lore:dnd5e:srd:1.0.0"
    assert staged.entry_count == 6 and staged.chunk_count == 6
    assert Alias.objects.get(world=staged.world, domain="srd", name="stage").version == staged
    chunk = Chunk.objects.get(namespace=staged.namespace, meta__entry_id="Spells/fireball")
    assert chunk.meta["title"] == "Fireball"
    assert chunk.meta["heading_path"] == ["Spells", "Fireball"]
    assert chunk.kind == "en" and chunk.tags == ["Spells"]
    # Nested fields are rendered into searchable text, references by their name.
    assert "Range: 150 feet" in chunk.text and "School: Evocation" in chunk.text
    ru = Chunk.objects.get(namespace=staged.namespace, meta__entry_id="Conditions/blinded", kind="ru")
    assert ru.meta["title"] == "Ослепление"
    # Sources are kept byte for byte, so the version can be rebuilt.
    stored = staged.sources.get(filename="Spells.json")
    assert bytes(stored.content) == as_bytes(SPELLS)


def test_reingest_reuses_vectors_of_unchanged_entries_and_embeds_only_the_changed_one(staged, monkeypatch):
    embedded: list[str] = []
    real = services.get_embedder

    class Counting:
        def __init__(self) -> None:
            self.inner = real()
            self.name = self.inner.name

        def embed(self, texts: list[str]) -> np.ndarray:
            embedded.extend(texts)
            return self.inner.embed(texts)

    monkeypatch.setattr(services, "get_embedder", Counting)
    changed = [dict(SPELLS[0], desc=["A much smaller explosion of flame now."]), *SPELLS[1:]]
    second = services.knowledge_ingest(world=staged.world, domain="srd",
                                       files=[services.UploadedFile("Spells.json", as_bytes(changed), "en")])
    assert second.version == "1.1.0"
    assert second.chunk_count == 6  # the conditions were carried over from 1.0.0's sources
    assert second.reused_chunks == 5
    assert len(embedded) == 1 and "much smaller explosion" in embedded[0]
    old = Chunk.objects.get(namespace=staged.namespace, meta__entry_id="Spells/misty-step")
    new = Chunk.objects.get(namespace=second.namespace, meta__entry_id="Spells/misty-step")
    assert np.allclose(old.embedding, new.embedding) and old.terms == new.terms
    assert Alias.objects.get(world=staged.world, domain="srd", name="stage").version == second


def test_long_entry_is_split_at_its_headings_and_every_piece_keeps_the_entry(world, settings):
    settings.LORE_CHUNK_MAX_TOKENS = 60
    settings.LORE_CHUNK_TARGET_TOKENS = 40
    sentence = "The party rests by the fire and tells stories of old battles. "
    text = (f"# Combat\n\nIntro.\n\n## Surprise\n\n{sentence * 8}\n\n### Ambush\n\n{sentence * 8}\n\n"
            f"## Initiative\n\nShort.\n")
    version = services.knowledge_ingest(world=world, domain="lore",
                                        files=[services.UploadedFile("rules.md", text.encode(), "en")],
                                        options=SourceOptions(entry_level=2))
    chunks = list(Chunk.objects.filter(namespace=version.namespace).order_by("id"))
    ids = {c.meta["entry_id"] for c in chunks}
    assert ids == {"rules/combat", "rules/combat/surprise", "rules/combat/initiative"}
    surprise = [c for c in chunks if c.meta["entry_id"] == "rules/combat/surprise"]
    assert len(surprise) > 1  # long: split
    assert all(c.meta["title"] == "Surprise" for c in surprise)
    assert any(c.meta["heading_path"][-1] == "Ambush" for c in surprise)
    assert next(c for c in chunks if c.meta["entry_id"] == "rules/combat/initiative").text.endswith("Short.")
    assert all(c.meta["line"] for c in chunks)


@pytest.mark.parametrize(("content", "location"), [
    (b'[{"index": "a", "name": "A", "desc": "x"},\n {"index": "b", "name": }]', "line 2 column"),
    (b'{"index": "a"}', "$"),
    (b'[{"index": "a", "desc": "x"}, {"name": "B", "desc": "y"}]', "$[1].index"),
    (b'[{"index": "a", "name": "A", "desc": "x"}, "oops"]', "$[1]"),
    (b'\xff\xfe[', "line 1"),
])
def test_malformed_source_is_refused_naming_the_file_and_where(world, content, location):
    with pytest.raises(ApplicationError) as caught:
        services.knowledge_ingest(world=world, domain="srd", files=[services.UploadedFile("Bad.json", content, "en")])
    assert caught.value.status_code == 400
    assert caught.value.message.startswith("Bad.json ") and location in caught.value.message
    assert caught.value.extra["file"] == "Bad.json"


@pytest.mark.parametrize(("given", "said"), [("[1, 2]", "not an array"), ('{"n": 1}', "not an object"),
                                            ("true", "not a boolean"), ("1.5", "not a number")])
def test_an_id_of_the_wrong_type_is_named_as_such_not_as_missing(world, given, said):
    content = f'[{{"index": {given}, "name": "A", "desc": "x"}}]'.encode()
    with pytest.raises(ApplicationError) as caught:
        services.knowledge_ingest(world=world, domain="srd", files=[services.UploadedFile("Bad.json", content, "en")])
    assert caught.value.status_code == 400 and "$[0].index" in caught.value.message
    assert f"must be a string or an integer, {said}" in caught.value.message and "missing" not in caught.value.message


def test_duplicate_entry_ids_are_listed(world):
    data = [{"index": "a", "name": "A", "desc": "x"}, {"index": "a", "name": "A2", "desc": "y"},
            {"index": "b", "name": "B", "desc": "z"}, {"index": "b", "name": "B2", "desc": "w"}]
    with pytest.raises(ApplicationError) as caught:
        services.knowledge_ingest(world=world, domain="srd", files=[services.UploadedFile("X.json", as_bytes(data))])
    assert caught.value.extra["duplicates"] == ["X/a", "X/b"]


def test_a_failed_ingest_leaves_no_version_sources_or_chunks(staged):
    chunks_before = Chunk.objects.count()
    good = services.UploadedFile("Spells.json", as_bytes(SPELLS[:1]), "en")
    with pytest.raises(ApplicationError):  # fails while reading the second file
        services.knowledge_ingest(world=staged.world, domain="srd",
                                  files=[good, services.UploadedFile("Bad.json", b"[", "en")])
    with pytest.raises(ApplicationError) as caught:  # fails inside the write transaction (a rebuild's number taken)
        services.knowledge_ingest(world=staged.world, domain="srd", files=[good], version="1.0.0", from_sources=[])
    assert caught.value.status_code == 409
    assert KnowledgeVersion.objects.count() == 1 and Source.objects.count() == 3
    assert Chunk.objects.count() == chunks_before


def test_search_by_alias_returns_entries_with_version_and_component_scores(staged):
    result = _search(staged, "explosion of flame in a sphere", alias="stage")
    top = result.hits[0]
    assert top.entry_id == "Spells/fireball" and top.title == "Fireball" and top.version == "1.0.0"
    assert top.heading_path == ["Spells", "Fireball"]
    assert set(top.components) == {"bm25", "vector"} and set(top.ranks) == {"bm25", "vector"}
    ru = _search(staged, "существо не видит", alias="stage").hits[0]
    assert (ru.entry_id, ru.language) == ("Conditions/blinded", "ru")


def test_a_version_embedded_by_another_embedder_is_searched_by_its_words(staged):
    Namespace.objects.filter(name=staged.namespace).update(vector_space="hashing-v0")
    top = _search(staged, "explosion of flame in a sphere", alias="stage").hits[0]
    assert top.entry_id == "Spells/fireball" and set(top.components) == {"bm25"}  # no vector compared
    Namespace.objects.filter(name=staged.namespace).update(vector_space="")
    assert set(_search(staged, "explosion of flame in a sphere", alias="stage").hits[0].components) == {
        "bm25", "vector"}


def test_search_filters_by_language_and_category(staged):
    targets = selectors.targets_resolve(tenant_id=staged.tenant_id, world_slug="dnd5e", domains=["srd"], alias="stage")
    # The question's words are in both languages' text of the condition; the filter keeps the Russian.
    only_ru = selectors.knowledge_search(tenant_id=staged.tenant_id, targets=targets,
                                         query="blinded creature, ослеплённое существо",
                                         filters=selectors.KnowledgeFilters(languages=("ru",)))
    assert only_ru.hits and {h.language for h in only_ru.hits} == {"ru"}
    spells = selectors.knowledge_search(tenant_id=staged.tenant_id, targets=targets, query="creature",
                                        filters=selectors.KnowledgeFilters(categories=("Spells",)))
    assert spells.hits and all(h.entry_id.startswith("Spells/") for h in spells.hits)


def test_unknown_world_alias_or_another_tenants_world_is_404(staged, api_client_for):
    _, other = api_client_for("tenant-b")
    for kwargs in ({"tenant_id": other.pk, "world_slug": "dnd5e", "domains": ["srd"], "alias": "stage"},
                   {"tenant_id": staged.tenant_id, "world_slug": "nope", "domains": ["srd"], "alias": "stage"},
                   {"tenant_id": staged.tenant_id, "world_slug": "dnd5e", "domains": ["srd"], "alias": "latest"}):
        with pytest.raises(ApplicationError) as caught:
            selectors.targets_resolve(**kwargs)
        assert caught.value.status_code == 404


def test_publish_needs_a_passing_smoke_run_and_a_forced_publish_needs_a_reason(staged, golden_dir):
    with pytest.raises(ApplicationError) as caught:
        services.lore_version_publish(version=staged, actor="ed")
    assert caught.value.status_code == 409 and caught.value.code == "smoke_failed"
    golden_dir([{"id": "x", "language": "en", "query": "zzz qqq", "expected": ["Spells/nope"]}])
    result = smoke.version_smoke(version=staged)
    assert result["by_language"]["en"]["hit@10"] == 0.0
    with pytest.raises(ApplicationError) as caught:
        services.lore_version_publish(version=staged, actor="ed")
    assert caught.value.extra["smoke"]["by_language"]["en"]["hit@5"] == 0.0
    with pytest.raises(ApplicationError) as caught:
        services.lore_version_publish(version=staged, actor="ed", force=True)
    assert caught.value.field == "reason"
    change = services.lore_version_publish(version=staged, actor="ed", force=True, reason="hotfix before session")
    assert change.action == KnowledgeChange.Action.FORCED_PUBLISH and change.reason == "hotfix before session"


def test_publish_then_rollback_moves_latest_and_writes_the_changelog(staged, golden_dir):
    figures = smoke.version_smoke(version=staged)
    assert figures["overall"]["hit@5"] == 1.0
    first = services.lore_version_publish(version=staged, actor="ed")
    assert first.from_version is None and first.smoke["overall"]["hit@5"] == 1.0
    edited = [SPELLS[0], dict(SPELLS[1], desc=["Touch heals 2d8 hit points."]), SPELLS[2]]
    second = services.knowledge_ingest(world=staged.world, domain="srd",
                                       files=[services.UploadedFile("Spells.json", as_bytes(edited), "en")])
    smoke.version_smoke(version=second)
    services.lore_version_publish(version=second, actor="ed")
    assert _search(staged, "flame", alias="latest").versions == {"srd": "1.1.0"}
    assert not Alias.objects.filter(world=staged.world, name="stage").exists()
    staged.refresh_from_db()
    assert staged.status == KnowledgeVersion.Status.RETIRED
    back = services.lore_version_rollback(world=staged.world, domain="srd", actor="ed", reason="bad text")
    assert (back.from_version, back.to_version) == (second, staged)
    assert _search(staged, "flame", alias="latest").versions == {"srd": "1.0.0"}
    assert [c.action for c in KnowledgeChange.objects.order_by("id")] == ["publish", "publish", "rollback"]
    with pytest.raises(ApplicationError) as caught:  # 1.0.0 was the first live version
        services.lore_version_rollback(world=staged.world, domain="srd", actor="ed")
    assert caught.value.status_code == 409


def test_fit_dims_keeps_cosine_of_the_truncated_vectors():
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(2, 384)).astype(np.float32)
    fa, fb = services.fit_dims(np.stack([a, b]), 128)
    expected = a[:128] @ b[:128] / np.linalg.norm(a[:128]) / np.linalg.norm(b[:128])
    assert fa.shape == (384,) and not fa[128:].any()
    assert float(fa @ fb) == pytest.approx(float(expected), abs=1e-5)


def test_knowledge_config_errors_name_the_key(settings, tmp_path):
    good = lore_config._load()
    assert good["srd"].k_vector == 12 and good["srd"].k_keyword == 50
    raw = {name: {"store": "pgvector", "embedding": "default", "dims": 64,
                  "retrieval": {"mode": "vector", "k_vector": 8}} for name in ("srd", "lore", "episode", "artcards")}
    raw["lore"]["retrieval"]["k_vector"] = "ten"
    with pytest.raises(ImproperlyConfigured, match=r"knowledge\.lore\.retrieval\.k_vector"):
        lore_config.validate(raw)
    raw["lore"]["retrieval"]["k_vector"] = 10
    raw["srd"]["retrieval"]["mode"] = "hybrid"  # hybrid needs k_keyword
    with pytest.raises(ImproperlyConfigured, match=r"knowledge\.srd\.retrieval"):
        lore_config.validate(raw)
    raw["srd"]["retrieval"]["k_keyword"] = 50
    raw["episode"]["dims"] = 4096
    with pytest.raises(ImproperlyConfigured, match=r"knowledge\.episode\.dims"):
        lore_config.validate(raw)
    raw["episode"]["dims"] = 64
    raw["lore"]["embedding"] = "text-embedding-3-large"  # the seed's example: not a per-domain setting here
    with pytest.raises(ImproperlyConfigured, match=r"knowledge\.lore\.embedding: 'default' was expected"):
        lore_config.validate(raw)
    path = tmp_path / "k.yaml"
    path.write_text(json.dumps({"knowledge": {"srd": {}}}))
    settings.KNOWLEDGE_CONFIG = path
    lore_config.reload()
    try:
        with pytest.raises(ImproperlyConfigured, match="knowledge"):
            lore_config._load()
    finally:
        del settings.KNOWLEDGE_CONFIG
        lore_config.reload()


def test_world_slug_and_languages_are_validated(tenant):
    with pytest.raises(ApplicationError) as caught:
        services.world_create(tenant=tenant, slug="Bad Slug")
    assert caught.value.field == "slug"
    with pytest.raises(ApplicationError) as caught:
        services.world_create(tenant=tenant, slug="ok", languages=["english"])
    assert caught.value.field == "languages"
    services.world_create(tenant=tenant, slug="ok")
    assert World.objects.get(slug="ok").languages == ["en"]


def test_an_entry_whose_whole_title_the_question_says_comes_first(world, monkeypatch):
    """The README's own example answered with a long rule section that says "character" and
    "blinded", above the condition Blinded; the title is a third vote in the fusion."""
    import dataclasses

    from tests.lore.conftest import as_bytes

    sections = [{"index": "the-environment", "name": "The Environment", "desc": (
        "## Vision and Light\nA character in a heavily obscured area effectively suffers from the blinded "
        "condition. What happens to a character depends on the light: a character who cannot see is treated "
        "as blinded, and a character's allies may guide the character when it happens.")},
                {"index": "resting", "name": "Resting", "desc": "A character can take a short rest."}]
    conditions = [{"index": "blinded", "name": "Blinded", "desc": ["- A blinded creature can't see."]},
                  {"index": "prone", "name": "Prone", "desc": ["- A prone creature's only movement is to crawl."]}]
    version = services.knowledge_ingest(world=world, domain="srd", actor="test", files=[
        services.UploadedFile("Rule-Sections.json", as_bytes(sections), "en"),
        services.UploadedFile("Conditions.json", as_bytes(conditions), "en")])
    targets = [selectors.Target("srd", version.version, version.namespace)]

    def top(query: str) -> str:
        return selectors.knowledge_search(tenant_id=world.tenant_id, targets=targets, query=query).hits[0].entry_id

    assert top("what happens when my character is blinded?") == "Conditions/blinded"
    assert top("a character in a heavily obscured area") == "Rule-Sections/the-environment"
    # A filter holds for the title's vote too.
    only_rules = selectors.knowledge_search(tenant_id=world.tenant_id, targets=targets, query="blinded",
                                            filters=selectors.KnowledgeFilters(categories=("Rule-Sections",)))
    assert only_rules.hits[0].entry_id == "Rule-Sections/the-environment"
    assert all(h.entry_id.startswith("Rule-Sections/") for h in only_rules.hits)
    srd = lore_config.domain_config("srd")
    assert dict(srd.weights)["title"] == 1.0
    untitled = dataclasses.replace(srd, weights=(("bm25", 1.0), ("vector", 1.0)))
    monkeypatch.setattr(lore_config, "domain_config", lambda domain: untitled if domain == "srd" else srd)
    assert top("what happens when my character is blinded?") == "Rule-Sections/the-environment"


def test_a_russian_short_participle_finds_the_condition_by_its_words(world):
    """"Персонаж ослеплён" is how a player asks; the rules say "Ослепление", "ослеплённое существо".
    Snowball stems the short form apart ("ослепл" / "ослеплен"), so BM25 and the title vote missed
    the condition and a section that says "персонаж" came first."""
    from tests.lore.conftest import as_bytes

    scores = [{"index": "con", "name": "ТЕЛ", "desc": ["Телосложение определяет здоровье персонажа. Персонаж "
                                                        "с высоким Телосложением дольше держится, что бы ни "
                                                        "происходило с персонажем в пути."]}]
    conditions = [
        {"index": "blinded", "name": "Ослепление", "desc": ["- Ослеплённое существо не видит и автоматически "
                                                            "проваливает проверки, требующие зрения."]},
        {"index": "poisoned", "name": "Отравление", "desc": ["- Отравленное существо совершает с помехой "
                                                             "броски атаки и проверки характеристик."]},
        {"index": "charmed", "name": "Очарование", "desc": ["- Очарованное существо не может атаковать "
                                                            "очаровавшего."]},
    ]
    version = services.knowledge_ingest(world=world, domain="srd", actor="test", files=[
        services.UploadedFile("Ability-Scores.json", as_bytes(scores), "ru"),
        services.UploadedFile("Conditions.json", as_bytes(conditions), "ru")])
    targets = [selectors.Target("srd", version.version, version.namespace)]
    for query, expected in (("что происходит, когда персонаж ослеплён?", "Conditions/blinded"),
                            ("мой персонаж отравлен, что это значит", "Conditions/poisoned"),
                            ("герой очарован", "Conditions/charmed")):
        top = selectors.knowledge_search(tenant_id=world.tenant_id, targets=targets, query=query).hits[0]
        assert top.entry_id == expected, query
        assert {"bm25", "title"} <= set(top.ranks), (query, top.ranks)


def test_a_question_that_is_mostly_a_title_gets_that_entry_first(world, monkeypatch):
    """"fireball" answered with the Wand and the Necklace of Fireballs, short items that say the word
    again and again, above the spell itself, whose long text says it once: a title that holds most
    of the question's weight is a fourth vote (`name`), while one said in passing is not."""
    import dataclasses

    from tests.lore.conftest import as_bytes

    spells = [{"index": "fireball", "name": "Fireball", "desc": [
        "A bright streak flashes from your pointing finger to a point you choose within range and then "
        "blossoms with a low roar into an explosion of flame. Each creature in a 20-foot-radius sphere "
        "centered on that point must make a Dexterity saving throw. A target takes 8d6 fire damage on a "
        "failed save, or half as much damage on a successful one. The fire spreads around corners and "
        "ignites flammable objects in the area that aren't being worn or carried."]},
              {"index": "etherealness", "name": "Etherealness", "desc": [
                  "You step into the border regions of the Ethereal Plane."]}]
    items = [{"index": "wand-of-fireballs", "name": "Wand of Fireballs", "desc": [
        "This wand has 7 charges. Expend charges to cast the fireball spell; each fireball is a 3rd-level "
        "fireball, and more charges make a bigger fireball."]},
             {"index": "necklace-of-fireballs", "name": "Necklace of Fireballs", "desc": [
                 "Each bead of this necklace is a fireball: throw a bead and it detonates as a fireball."]}]
    sections = [{"index": "the-planes", "name": "The Planes of Existence", "desc": (
        "## The Astral and the Ethereal\nThe planes of existence: the Astral Plane is a silver sea and the "
        "Ethereal Plane a misty border; both planes look different to every traveller.")}]
    version = services.knowledge_ingest(world=world, domain="srd", actor="test", files=[
        services.UploadedFile("Spells.json", as_bytes(spells), "en"),
        services.UploadedFile("Magic-Items.json", as_bytes(items), "en"),
        services.UploadedFile("Rule-Sections.json", as_bytes(sections), "en")])
    targets = [selectors.Target("srd", version.version, version.namespace)]
    # In the whole SRD the spell is 4th on BM25 and not among the vectors' 12: here, 4 and 2.
    srd = lore_config.domain_config("srd")
    assert dict(srd.weights)["name"] == 1.0
    shallow = dataclasses.replace(srd, k_vector=2, k_keyword=4)
    monkeypatch.setattr(lore_config, "domain_config", lambda domain: shallow if domain == "srd" else srd)

    def top(query: str) -> selectors.KnowledgeHit:
        return selectors.knowledge_search(tenant_id=world.tenant_id, targets=targets, query=query).hits[0]

    for query in ("fireball", "Fireball spell"):
        hit = top(query)
        assert hit.entry_id == "Spells/fireball", query
        assert "name" in hit.ranks, (query, hit.ranks)
    # A title said in passing gets no such vote.
    hits = selectors.knowledge_search(tenant_id=world.tenant_id, targets=targets,
                                      query="the planes of existence: a silver sea on the astral plane, a misty "
                                            "ethereal border").hits
    assert hits[0].entry_id == "Rule-Sections/the-planes"
    ethereal = next(h for h in hits if h.entry_id == "Spells/etherealness")
    assert "title" in ethereal.ranks and "name" not in ethereal.ranks
    unnamed = dataclasses.replace(shallow, weights=tuple(w for w in srd.weights if w[0] != "name"))
    monkeypatch.setattr(lore_config, "domain_config", lambda domain: unnamed if domain == "srd" else srd)
    assert top("fireball").entry_id != "Spells/fireball"


def test_with_the_embedder_away_knowledge_is_searched_by_words_and_titles(world, remote_embedder) -> None:
    """A remote embedder away made every rules lookup, and so every scene's prompt, a 503; the
    knowledge is now searched by its BM25 and title lists alone until the embedder is back."""
    from tests.llm_server import HTTPError

    llm_server = remote_embedder
    conditions = [{"index": "blinded", "name": "Blinded", "desc": ["- A blinded creature can't see."]},
                  {"index": "prone", "name": "Prone", "desc": ["- A prone creature's only movement is to crawl."]}]
    version = services.knowledge_ingest(world=world, domain="srd", actor="test", files=[
        services.UploadedFile("Conditions.json", as_bytes(conditions), "en")])
    llm_server.script_embeddings(*[HTTPError(503)] * 5)
    hits = selectors.knowledge_search(tenant_id=world.tenant_id, query="what happens when I am blinded?",
                                      targets=[selectors.Target("srd", version.version, version.namespace)]).hits
    assert hits[0].entry_id == "Conditions/blinded"
    assert "vector" not in hits[0].ranks and {"bm25", "title"} <= set(hits[0].ranks)


def test_the_players_i_is_no_search_word_of_the_rules(world) -> None:
    """"I try to persuade the Harbourmaster…" put Madness (a table of first-person flaws: "I am
    convinced…", "I can't…") in the scene's rules block: "I" was a search word, as in the memory
    search before it (memoryhub.text.pronoun_terms)."""
    from tests.lore.conftest import as_bytes

    sections = [{"index": "madness", "name": "Madness", "desc": (
        "## Indefinite Madness\nI am convinced that powerful beings are watching me. I can't stop. I keep a "
        "trophy. I think everyone is plotting against me, and I must tell them all.")}]
    skills = [{"index": "persuasion", "name": "Persuasion", "desc": [
        "When you persuade someone or a group of people with tact, social graces, or good nature, the GM "
        "might ask you to make a Charisma (Persuasion) check. A guard may let you pass."]}]
    version = services.knowledge_ingest(world=world, domain="srd", actor="test", files=[
        services.UploadedFile("Rule-Sections.json", as_bytes(sections), "en"),
        services.UploadedFile("Skills.json", as_bytes(skills), "en")])
    hits = selectors.knowledge_search(tenant_id=world.tenant_id, query="I try to persuade the guard to let me in",
                                      targets=[selectors.Target("srd", version.version, version.namespace)]).hits
    assert hits[0].entry_id == "Skills/persuasion"
    assert all("bm25" not in h.ranks for h in hits if h.entry_id == "Rule-Sections/madness")


def _extra(name: str, index: str) -> services.UploadedFile:
    return services.UploadedFile(f"{name}.json", as_bytes([{"index": index, "name": name, "desc": [f"About {name}."]}]),
                                 "en")


@pytest.mark.django_db(transaction=True)
def test_an_upload_whose_base_moved_while_it_was_embedded_is_built_again_on_the_new_base(world, small_files):
    """The write's own guard: a build whose base moved before its write is made again on the new base.
    (Builds of a domain queue on its advisory lock, which the same session re-enters: the write injected
    here from the progress callback is what a publish or rollback moving the base looks like.) Before,
    the build written second dropped the other's file."""
    services.knowledge_ingest(world=world, domain="srd", files=small_files, actor="setup")
    other: list[KnowledgeVersion] = []

    def meanwhile(done: int, total: int) -> None:
        # The first build's vectors are made; another editor's upload lands before its write.
        if done == total and not other:
            other.append(services.knowledge_ingest(world=world, domain="srd", files=[_extra("Traps", "pit")],
                                                   actor="bob"))

    first = services.knowledge_ingest(world=world, domain="srd", files=[_extra("Gods", "tyr")], actor="alice",
                                      progress=meanwhile)
    [bobs] = other
    assert (bobs.version, first.version) == ("1.1.0", "1.2.0")
    assert set(first.sources.values_list("filename", flat=True)) == {
        "Spells.json", "Conditions.json", "Traps.json", "Gods.json"}
    assert Alias.objects.get(world=world, domain="srd", name="stage").version == first
    assert first.reused_chunks >= first.chunk_count - 1  # the second build re-used the first's vectors


@pytest.mark.django_db(transaction=True)
def test_an_explicit_version_is_checked_again_when_it_is_written(world, small_files):
    """Two uploads naming versions at once: 1.5.0 checked against 1.0.0 must not be written after 2.0.0."""
    services.knowledge_ingest(world=world, domain="srd", files=small_files, actor="setup")

    def meanwhile(done: int, total: int) -> None:
        if done == total and not KnowledgeVersion.objects.filter(version="2.0.0").exists():
            services.knowledge_ingest(world=world, domain="srd", files=[_extra("Traps", "pit")], version="2.0.0")

    with pytest.raises(ApplicationError) as refused:
        services.knowledge_ingest(world=world, domain="srd", files=[_extra("Gods", "tyr")], version="1.5.0",
                                  progress=meanwhile)
    assert (refused.value.code, refused.value.status_code, refused.value.field) == ("version_not_newer", 409, "version")
    assert Alias.objects.get(world=world, domain="srd", name="stage").version.version == "2.0.0"
    assert not KnowledgeVersion.objects.filter(world=world, version="1.5.0").exists()


@pytest.mark.django_db(transaction=True)
def test_six_uploads_at_once_all_reach_the_newest_version(world, small_files):
    """Builds of a domain queue: with three tries of an optimistic write, 3 of 6 uploads at once were
    refused (`stage_moved`)."""
    services.knowledge_ingest(world=world, domain="srd", files=small_files, actor="setup")
    names = ["Gods", "Traps", "Planes", "Herbs", "Ships", "Songs"]
    errors = errors_of(at_once(*(lambda n=name: services.knowledge_ingest(
        world=world, domain="srd", files=[_extra(n, n.lower())], actor=n, wait=60) for name in names)))
    assert not errors, errors
    newest = KnowledgeVersion.objects.filter(world=world).order_by("-id").first()
    assert newest.version == "1.6.0"
    assert {f"{name}.json" for name in names} <= set(newest.sources.values_list("filename", flat=True))
    assert Alias.objects.get(world=world, domain="srd", name="stage").version == newest


@pytest.mark.django_db(transaction=True)
def test_a_build_that_cannot_start_within_its_wait_is_refused_as_busy(world, small_files):
    import threading

    from django.db import connection

    from memoryhub.locks import advisory_lock

    held, release = threading.Event(), threading.Event()

    def other_build() -> None:  # another process's build of the same domain
        try:
            with advisory_lock(f"lore-build:{world.pk}:srd", 4):
                held.set()
                release.wait(30)
        finally:
            connection.close()

    thread = threading.Thread(target=other_build)
    thread.start()
    try:
        assert held.wait(10)
        steps: list[str] = []
        with pytest.raises(ApplicationError) as busy:
            services.knowledge_ingest(world=world, domain="srd", files=small_files, wait=0.3, on_step=steps.append)
        assert (busy.value.code, busy.value.status_code, steps) == ("world_busy", 409, ["waiting"])
        # Another domain of the world is not held.
        services.knowledge_ingest(world=world, domain="lore", files=[_extra("Gods", "tyr")], wait=0)
    finally:
        release.set()
        thread.join()
    built = services.knowledge_ingest(world=world, domain="srd", files=small_files, wait=0, on_step=steps.append)
    assert built.version == "1.0.0" and steps[-2:] == ["embedding", "writing"]


def test_long_words_are_left_out_of_the_terms_not_a_500(world):
    """A word over 128 characters (a data URI, a run of letters) broke the insert of the terms column."""
    long_word = "Supercalifragilistic" * 20
    source = f"## Tower\nThe {long_word} tower.\n\n## Img\n![map](data:image/png;base64,{'QUJD' * 100})\n"
    version = services.knowledge_ingest(world=world, domain="lore", files=[services.UploadedFile(
        "Towers.md", source.encode(), "en")])
    terms = [t for chunk in Chunk.objects.filter(namespace=version.namespace) for t in chunk.terms]
    assert "tower" in terms and max(len(t) for t in terms) <= 128
    # A file name too long for its category (a chunk tag) or its source row: a 400 naming the file.
    for name in (f"{'n' * 65}.md", f"{'n' * 300}.md"):
        with pytest.raises(ApplicationError) as refused:
            services.knowledge_ingest(world=world, domain="lore", files=[services.UploadedFile(name, b"## A\nB.\n")])
        assert refused.value.field == "files" and refused.value.status_code == 400
    named = services.knowledge_ingest(world=world, domain="lore", options=SourceOptions(id_prefix="maps"),
                                      files=[services.UploadedFile(f"{'n' * 65}.md", b"## A\nB.\n")])
    assert Chunk.objects.filter(namespace=named.namespace, tags=["maps"]).exists()


def test_a_source_of_no_entries_is_refused_naming_the_file(world, small_files):
    services.knowledge_ingest(world=world, domain="srd", files=small_files)
    for replace_all in (False, True):
        with pytest.raises(ApplicationError) as refused:
            services.knowledge_ingest(world=world, domain="srd", files=[services.UploadedFile("Empty.json", b"[]")],
                                      replace_all=replace_all)
        assert refused.value.field == "files" and "Empty.json $: the array holds no entries" in refused.value.message
    assert KnowledgeVersion.objects.filter(world=world).count() == 1


def test_an_unlabelled_file_in_a_world_of_several_languages_labels_each_entry_by_its_own(tenant):
    """QA: a Markdown file of English, Russian and Chinese sections, uploaded without `language`, was
    all the world's first language: a search filtered to Russian missed its Russian section."""
    world = services.world_create(tenant=tenant, slug="moon", languages=["en", "ru", "zh"])
    text = ("## Moon Gate\n\nThe moon gate opens only under a full moon.\n\n"
            "## Лунные врата\n\nЛунные врата открываются только в полнолуние.\n\n"
            "## 月门\n\n月门只在满月时打开。\n")
    unlabelled = services.knowledge_ingest(world=world, domain="lore",
                                           files=[services.UploadedFile("gates.md", text.encode())])
    chunks = Chunk.objects.filter(namespace=unlabelled.namespace)
    assert {c.meta["title"]: c.meta["language"] for c in chunks} == {
        "Moon Gate": "en", "Лунные врата": "ru", "月门": "zh"}
    only_ru = selectors.knowledge_search(
        tenant_id=tenant.pk, query="врата",
        targets=selectors.targets_resolve(tenant_id=tenant.pk, world_slug="moon", domains=["lore"], alias="stage"),
        filters=selectors.KnowledgeFilters(languages=("ru",)))
    assert [h.title for h in only_ru.hits] == ["Лунные врата"]
    # A rebuild carrying the source labels its entries as the upload did; a file given its language keeps it.
    note = services.UploadedFile("notes.md", "## Note\n\nЗаметка.\n".encode(), "en")
    labelled = services.knowledge_ingest(world=world, domain="lore", files=[note])
    chunks = Chunk.objects.filter(namespace=labelled.namespace)
    assert {c.meta["title"]: c.meta["language"] for c in chunks} == {
        "Moon Gate": "en", "Лунные врата": "ru", "月门": "zh", "Note": "en"}
