"""The offline consolidator on a companion chat (character "neiri", user bob), en/ru/zh: the character's wishes and
encouragement are no memories of it, health and safety facts matter most (then a life's turns, then likes, then
small talk), and a past event keeps the day its relative date meant."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memoryhub.models import Conversation
from rag.memories import consolidation
from rag.memories.rules import Turn, consolidate_rules
from rag.models import Chunk, MemoryConsolidation

SAID = datetime(2026, 12, 3, 10, 0, tzinfo=UTC)


def consolidated(client, tenant, session_id: str, turns: list[tuple[str, str]], *,
                 character: str) -> dict[str, Chunk]:
    """Post `turns` as bob's chat with `character` through the API, consolidate them offline (the rules),
    and return the character's memories but the emotions one, by text."""
    posted = client.post(f"/api/v1/users/bob/sessions/{session_id}/messages", {"messages": [
        {"role": role, "text": text, "speaker": character if role == "assistant" else "bob",
         "created_at": SAID.isoformat(), "meta": {"conf_uid": "neiri"}} for role, text in turns]}, format="json")
    assert posted.status_code == 202, posted.content
    conversation = Conversation.objects.get(tenant=tenant, session_id=session_id)
    run_id = consolidation.consolidation_request(conversation, trigger="request")["consolidation"]
    consolidation.consolidation_run(run_id=run_id)
    run = MemoryConsolidation.objects.get(pk=run_id)
    assert run.status == "done" and run.consolidator == "rules", run.error
    return {m.text: m for m in Chunk.objects.filter(tenant=tenant, type="memory", conf_uid="neiri")
            if m.category != "Emotions"}
LISTS = ("facts_about_user", "past_events", "self_beliefs", "objectives", "key_facts")


def _kept(output: dict) -> dict[str, dict]:
    return {item["text"]: item for key in LISTS for item in output[key]}


@pytest.mark.parametrize(("user", "replies"), [
    ("Yesterday was my birthday and I got a new job!", [
        "Happy belated birthday!", "You'll do great, I believe in you.", "Happy birthday!", "Congrats on the new job!",
        "Good luck tomorrow!", "You'll do great", "I believe in you",
        "Congratulations on your new job, that's so important!",
        "Bob, good luck with your exam next Friday, remember to sleep well!",
        "I believe in you, you'll always manage.", "Sorry about your breakup, that must hurt.",
    ]),
    ("Вчера был мой день рождения, и я нашёл новую работу!", [
        "Поздравляю с новой работой!", "С днём рождения!", "Удачи!", "Ты справишься!", "Ты обязательно справишься!",
        "С днём рождения, Боб! Желаю тебе всегда оставаться таким же добрым.",
        "Удачи тебе завтра на важном собеседовании, я в тебя верю!",
        "Я верю в тебя, у тебя всё обязательно получится!",
    ]),
    ("昨天是我的生日，我还找到了新工作！", [
        "生日快乐！", "恭喜你！", "加油！", "你一定可以的", "祝你生日快乐，永远开心！", "恭喜你找到新工作，这很重要！",
        "鲍勃，你一定可以的！", "我相信你，你一定能成功！",
    ]),
])
def test_the_characters_wishes_and_encouragement_are_no_memories_of_it(user: str, replies: list[str]) -> None:
    """"neiri: Happy belated birthday!" was stored as the character's key fact (0.7: "birthday", "happy"), "You'll
    do great, I believe in you." as its self-belief: they answer the user's turn, which is the memory."""
    output = consolidate_rules([Turn("bob", user, False, SAID)] + [Turn("neiri", r, True, SAID) for r in replies],
                               "neiri")
    kept = _kept(output)
    assert not [text for text in kept if text.startswith("neiri: ")], kept
    assert [text for text in kept if text.startswith("bob: ")], kept


def test_the_characters_own_statements_stay_beside_its_wishes() -> None:
    own = ["I love dogs.", "I was born in Kyoto", "Я люблю собак.", "我喜欢狗。"]
    output = consolidate_rules([Turn("neiri", said, True, SAID) for said in
                                ["Happy birthday!", *own, "Поздравляю!", "加油！", "Bob, I love cats too."]], "neiri")
    assert sorted(_kept(output)) == sorted(f"neiri: {said}" for said in [*own, "Bob, I love cats too."])


@pytest.mark.parametrize(("health", "life_event", "preference", "small_talk"), [
    (["I'm allergic to peanuts, so restaurants are tricky.", "I'm diabetic.", "I take insulin every day.",
      "I'm terrified of heights."],
     "I got a new job at Google!", "I love jazz.", "I had pasta for lunch."),
    (["У меня аллергия на орехи.", "Я диабетик.", "Я боюсь высоты.", "Я пью таблетки от давления каждый день."],
     "Я переехала в Берлин.", "Я люблю джаз.", "Я ела пасту на обед."),
    (["我对花生过敏。", "我有糖尿病。", "我恐高。", "我每天都要吃药。"],
     "我换了新工作。", "我喜欢爵士乐。", "我昨天吃了意大利面。"),
])
def test_health_and_safety_facts_matter_most_then_a_lifes_turns_then_likes_then_small_talk(
        health: list[str], life_event: str, preference: str, small_talk: str) -> None:
    """"I'm allergic to peanuts, so restaurants are tricky." got 0.6 and no tag, under the character's birthday
    wish; "Я диабетик" and "我有糖尿病" were not kept at all."""
    output = consolidate_rules([Turn("bob", said, False) for said in [*health, life_event, preference, small_talk]],
                               "neiri")
    kept = _kept(output)
    for said in health:
        fact = kept[f"bob: {said}"]
        assert "health" in fact["tags"] and fact["about"] == "user", fact
        assert f"bob: {said}" in [i["text"] for i in output["facts_about_user"]], output
    event = kept[f"bob: {life_event}"]
    assert "life_events" in event["tags"], event
    liked = kept[f"bob: {preference}"]
    assert min(kept[f"bob: {said}"]["importance"] for said in health) > event["importance"] > liked["importance"]
    chat = kept.get(f"bob: {small_talk}")
    assert chat is None or liked["importance"] > chat["importance"], chat


def test_the_floor_only_lifts_and_the_characters_words_about_the_user_get_none() -> None:
    """Asked to be remembered, a preference still scores higher than its floor; the character telling the user
    their own news ("Your birthday is on Friday, right.") is worth no life event's floor."""
    output = consolidate_rules([Turn("bob", "Remember, I love jazz, it is important to me.", False),
                                Turn("bob", "My mom is allergic to cats.", False),
                                Turn("neiri", "Your birthday is on Friday and your mom will come.", True)], "neiri")
    kept = _kept(output)
    assert kept["bob: Remember, I love jazz, it is important to me."]["importance"] == 1.0
    mom = kept["bob: My mom is allergic to cats."]
    assert mom["importance"] == 0.9 and {"family", "health"} <= set(mom["tags"])
    assert not [text for text in kept if text.startswith("neiri: ")], kept


def test_a_companion_chat_is_consolidated_as_qa_found_it(client_a) -> None:
    client, tenant = client_a
    turns = [("user", "Yesterday was my birthday, I turned 30."), ("assistant", "Happy belated birthday!"),
             ("user", "I'm allergic to peanuts, so restaurants are tricky."),
             ("assistant", "You'll do great, I believe in you."), ("user", "У меня аллергия на орехи."),
             ("assistant", "Поздравляю с новой работой!"), ("user", "我对花生过敏。"), ("assistant", "恭喜你！加油！"),
             ("assistant", "I love dogs.")]
    memories = consolidated(client, tenant, "chat", turns, character="neiri")
    assert [t for t in memories if t.startswith("neiri: ")] == ["neiri: I love dogs."], sorted(memories)
    for said in ("I'm allergic to peanuts, so restaurants are tricky.", "У меня аллергия на орехи.", "我对花生过敏。"):
        allergy = memories[f"bob: {said}"]
        assert (allergy.kind, allergy.category) == ("user", "FactsAboutUser") and "health" in allergy.tags
        assert allergy.importance == 0.9
    assert memories["bob: Yesterday was my birthday, I turned 30."].importance == 0.8


@pytest.mark.parametrize(("reactions", "facts"), [
    (["That must have been tough for you.", "I bet you had a great time.", "I'm so glad you enjoyed it!",
      "I'm so proud of you!", "I'm always here for you!", "Congrats - you must be so stoked!",
      "It must feel incredible to have a supportive team like that.", "I can only imagine how tough it must be."],
     ["I'm so glad I moved to Lisbon last year.", "I'm so glad my sister got the job at Google.",
      "I'm so proud of my son, he got into Stanford!", "I'm sure my brother will move to Berlin next year.",
      "I'm allergic to peanuts, I can only imagine cake."]),
    (["Должно быть, тебе было тяжело.", "Я так рада за тебя!", "Поздравляю с новой работой!",
      "Представляю, как это было здорово!"],
     ["Я рада, что переехала в Казань.", "У меня аллергия на орехи."]),
    (["那一定很难受吧。", "我为你感到骄傲！", "恭喜你找到新工作！", "真替你高兴，太棒了！"],
     ["我很高兴搬到了杭州。", "我为我女儿感到骄傲，她考上了北大。", "我对花生过敏。"]),
], ids=["en", "ru", "zh"])
def test_the_users_reactions_to_the_other_side_are_no_memories_of_the_user(
        reactions: list[str], facts: list[str]) -> None:
    """Consolidated, a LoCoMo conversation (two people, each a user of the chat) kept "Tim: You must have been
    elated up there with that trophy." and "Nate: I'm always here for you!" as key facts and past events of the
    speaker: reactions to what the other side told, which is the memory. The user's own news, said with the same
    words, and their people's stay."""
    kept = _kept(consolidate_rules([Turn("bob", said, False, SAID) for said in [*reactions, *facts]], "neiri"))
    assert not [said for said in reactions if f"bob: {said}" in kept], kept
    # A plan keeps the day it meant: "… next year (2027)."
    assert [said for said in facts if not any(said.rstrip(".!。") in text for text in kept)] == [], kept


@pytest.mark.parametrize(("said", "kept"), [
    ("Last weekend we went to the lake, Max rowed a boat for the first time.", True),
    ("We went to the museum with the kids yesterday.", True),
    ("В субботу ходили с коллегами на Кремль, потом ели чак-чак.", True),
    ("Мы вчера поругались с мужем.", True),
    ("上周末我们去了西湖，小宇第一次划船，特别开心。", True),
    ("我们昨天吵架了。", True),
    # "Us" and "our" are not who did it.
    ("It kept us focused on our dreams.", False), ("Our loved ones gave us strength.", False),
], ids=["en-lake", "en-museum", "ru-kremlin", "ru-quarrel", "zh-lake", "zh-quarrel", "en-us", "en-our"])
def test_what_we_did_is_a_past_event_of_the_user(said: str, kept: bool) -> None:
    """A QA pass through the API: "上周末我们去了西湖，小宇第一次划船，特别开心。" gave no memory at all, nor "Last
    weekend we went to the lake…" nor "В субботу ходили с коллегами на Кремль…": a past event needed "I" (or
    someone else) as its subject, and a household tells what it did with "we"."""
    output = consolidate_rules([Turn("bob", said, False, SAID)], "neiri")
    assert (f"bob: {said}" in [item["text"] for item in output["past_events"]]) is kept, output
