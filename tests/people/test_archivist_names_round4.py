"""What a seventh held-out batch of chat messages (issue 14) and the misses the last round left showed the archivist
not to read: first names of Spanish, Turkish, Nordic, West African, Indonesian and Japanese friends said in English
("Joaquin", "Hiroshi"), accents left out or kept; a relative named in a request for help ("help me plan a party for my
husband?"); someone of a client's or vendor's side ("our vendor's rep, Yusuf", "客户的刘经理"); a Russian first name
as friends say it, which the dictionary does not list ("Егорка", "с другом Вованом", "Катюха"); 小芳 before a verb
jieba glues to her; a grandchild of the user's parents-in-law; "a long call with Tariq". Each failed before its
change; the guards beside them passed either way."""

from __future__ import annotations

import pytest

from people import lexicon
from tests.people.test_archivist_names_round3 import names
from tests.people.test_archivist_rules import people_of


@pytest.mark.parametrize(("sentence", "name"), [
    ("Went climbing with Joaquin on Saturday.", "Joaquin"),
    ("Went climbing with Joaquín on Saturday.", "Joaquín"),
    ("Went hiking with Hiroshi yesterday.", "Hiroshi"),
    ("Saw Willem at the gym.", "Willem"),
    ("Got a postcard from Chinedu in Lagos.", "Chinedu"),
])
def test_first_names_of_more_countries_are_people(sentence: str, name: str) -> None:
    assert name in names(sentence)


@pytest.mark.parametrize("sentence", [
    "We moved to Los Angeles last year.",
    "Mats and ties are on sale.",  # Swedish and Dutch first names, English plurals
    "Among the guests was my boss.",
])
def test_words_the_larger_gazetteer_might_take_are_no_one(sentence: str) -> None:
    assert not names(sentence) - {"boss"}


def test_the_gazetteer_keeps_a_name_with_and_without_its_accents() -> None:
    from people.management.commands.first_names_build import first_names, latin_forms

    assert latin_forms("Joaquín") == {"joaquín", "joaquin"}
    assert latin_forms("Ἀλέξανδρος") == set() and latin_forms("健太") == set()
    # A word English uses otherwise is left out with its accents too ("Ángeles" of "Los Ángeles").
    assert first_names({"joaquín", "joaquin", "ángeles", "angel", "mats", "among"}) == ["joaquin", "joaquín"]
    assert {"joaquin", "hiroshi", "chinedu", "willem", "yusuf"} <= lexicon.EN_FIRST_NAMES
    assert {"angeles", "mats", "among", "nana"}.isdisjoint(lexicon.EN_FIRST_NAMES - lexicon.EN_COMMON_FIRST_NAMES)


@pytest.mark.parametrize(("sentence", "name"), [
    ("Can you help me plan a surprise party for my husband?", "Husband"),
    ("What should I get my mom for her birthday?", "Mom"),
    ("Что подарить маме на юбилей?", "мама"),
    ("Подскажи, что приготовить свекрови?", "свекровь"),
    ("帮我给老婆挑个礼物？", "老婆"),
])
def test_a_relative_a_request_for_help_is_for_is_the_users(sentence: str, name: str) -> None:
    person = people_of(sentence)[name]
    assert person.circle == "Family"
    assert person.bio == ""  # a question is still no line of their life


@pytest.mark.parametrize("sentence", [
    "What's my brother's name?",
    "Did my wife tell you about the trip?",
    "Как зовут мою сестру?",
    "我姐姐叫什么名字？",
])
def test_a_question_about_a_relative_still_makes_no_one(sentence: str) -> None:
    assert people_of(sentence) == {}


@pytest.mark.parametrize(("sentence", "name"), [
    ("Our vendor's rep, Yusuf, keeps missing deadlines.", "Yusuf"),
    ("Our client's CFO, Dana, signed the deal.", "Dana"),
    ("Our client's manager Dana called.", "Dana"),
    ("供应商的王经理说货要延迟。", "王经理"),
    ("客户的刘经理来公司开会。", "刘经理"),
])
def test_someone_of_a_clients_or_vendors_side_is_an_outside_work_contact(sentence: str, name: str) -> None:
    assert people_of(sentence)[name].circle == "Work_Outer"


def test_a_clients_wife_is_no_work_contact() -> None:
    assert people_of("The client's wife, Anna, was there too.")["Anna"].circle is None


@pytest.mark.parametrize(("sentence", "name", "circle"), [
    ("Племянник Егорка пошёл в первый класс.", "Егорка", "Family"),
    ("Созвонился с другом Вованом.", "Вован", "Friends"),
    ("Катюха, подружка моя, выходит замуж.", "Катюха", "Friends"),
    ("Вчера видел Толяна у метро.", "Толян", None),
    ("Светка опять опоздала.", "Светка", None),  # a sentence's first word: no word of Russian has that form
])
def test_a_russian_first_name_as_friends_say_it_is_a_person(sentence: str, name: str, circle: str | None) -> None:
    people = people_of(sentence)
    assert name in people and people[name].circle == circle
    assert "племянник" not in people


@pytest.mark.parametrize("word", ["Иран", "Милан", "Лиман", "Казань", "Сумка", "Тарелка", "Машинка"])
def test_a_word_the_dictionary_knows_is_no_colloquial_name(word: str) -> None:
    from people.names import ru_colloquial_name

    assert ru_colloquial_name(word) is None


def test_no_name_in_a_trip_to_a_place_that_looks_like_one() -> None:
    assert set(people_of("Ездили в Иран с женой.")) == {"жена"}


@pytest.mark.parametrize(("sentence", "name", "circle"), [
    ("室友小芳养了一只仓鼠。", "小芳", "Friends"),
    ("同事小王画了一幅画。", "小王", "Work_Inner"),
])
def test_a_nickname_before_a_verb_jieba_glues_to_it(sentence: str, name: str, circle: str) -> None:
    assert people_of(sentence)[name].circle == circle


def test_a_master_craftsman_is_no_name_of_his_own() -> None:
    assert set(people_of("师傅老周教我开车。")) == {"老周"}


@pytest.mark.parametrize(("sentence", "elders"), [
    ("公公婆婆下周来看孙子。", {"公公", "婆婆"}),
    ("Свекровь приехала понянчить внука.", {"свекровь"}),
])
def test_the_grandchild_of_the_users_parents_in_law_is_not_the_users(sentence: str, elders: set[str]) -> None:
    assert set(people_of(sentence)) == elders


@pytest.mark.parametrize(("sentence", "name"), [("我孙子今年上小学了。", "孙子"), ("孙女考上大学了。", "孙女")])
def test_the_users_own_grandchild_stays_family(sentence: str, name: str) -> None:
    assert people_of(sentence)[name].circle == "Family"


def test_a_neighbours_grandmother_is_a_neighbour() -> None:
    assert people_of("邻居家的李奶奶送了我们一些饺子。")["李奶奶"].circle == "Other"


@pytest.mark.parametrize(("sentence", "name"), [
    ("Had a long call with Tariq about the merger.", "Tariq"),
    ("Brunch with Oyelaran tomorrow!", "Oyelaran"),
])
def test_who_one_has_lunch_or_a_call_with_is_someone(sentence: str, name: str) -> None:
    assert name in names(sentence)


@pytest.mark.parametrize("sentence", [
    "Had a meeting with Stripe about the integration.",
    "Drinks with PayPal folks tonight.",
    "We had a game with Arsenal fans.",
])
def test_a_company_one_meets_is_no_one(sentence: str) -> None:
    assert names(sentence) == set()


# An eighth held-out batch, run on the code above before its own fixes.

@pytest.mark.parametrize(("sentence", "name"), [
    ("Bumped into my old manager Siddharth at the airport.", "Siddharth"),
    ("My former boss Kate called.", "Kate"),
    ("Мой бывший начальник Сергей звонил.", "Сергей"),
    ("Встретила бывшую коллегу Олю.", "Оля"),
    ("和前同事周洁一起吃了火锅。", "周洁"),
])
def test_a_former_boss_or_colleague_is_no_longer_at_work(sentence: str, name: str) -> None:
    assert people_of(sentence)[name].circle == "Other"


def test_an_old_friend_is_still_a_friend() -> None:
    assert people_of("My old friend Tom called.")["Tom"].circle == "Friends"


@pytest.mark.parametrize("sentence", ["Our pastor, Father Declan, is retiring next spring.",
                                      "Father Declan gave a great sermon."])
def test_a_priests_title_is_no_father(sentence: str) -> None:
    person = people_of(sentence)["Declan"]
    assert person.circle in (None, "Other") and person.aliases == ["Father Declan"]


def test_a_capitalised_sister_the_user_owns_is_still_kin() -> None:
    assert people_of("My Sister Anna is visiting.")["Anna"].circle == "Family"


@pytest.mark.parametrize(("sentence", "name", "circle"), [
    ("My mentor at work, Oluwaseun, says I should apply for the lead role.", "Oluwaseun", "Work_Inner"),
    ("Мой наставник на работе, Олег, хвалит меня.", "Олег", "Work_Inner"),
    ("Our account manager at the agency, Celeste, sent the invoices.", "Celeste", "Work_Outer"),
])
def test_a_short_phrase_of_where_between_a_cue_and_its_name(sentence: str, name: str, circle: str) -> None:
    assert people_of(sentence)[name].circle == circle


@pytest.mark.parametrize("sentence", ["We went to see the new Wes Anderson movie.",
                                      "We went to a Taylor Swift concert."])
def test_the_maker_of_a_film_or_a_concert_is_no_one_the_user_knows(sentence: str) -> None:
    assert names(sentence) == set()


@pytest.mark.parametrize(("sentence", "name"), [("Anna books the tickets.", "Anna"), ("Tom's movie was great.", "Tom")])
def test_a_name_before_a_verb_or_owning_a_work_stays_someone(sentence: str, name: str) -> None:
    assert name in names(sentence)


@pytest.mark.parametrize(("sentence", "name"), [
    ("Встретила Наташку, мы вместе учились в школе.", "Наташка"),
    ("我和王磊一起上学。", "王磊"),
])
def test_who_studied_with_the_user_is_a_classmate(sentence: str, name: str) -> None:
    assert people_of(sentence)[name].circle == "Friends"


def test_someone_who_studies_without_the_user_is_no_classmate() -> None:
    assert people_of("Маша учится в школе.")["Маша"].circle is None


@pytest.mark.parametrize(("sentence", "name", "circle"), [
    ("我小姑子丽丽下周来我家住几天。", "丽丽", "Family"),
    ("合作方的赵总约我们下周谈合同。", "赵总", "Work_Outer"),
    ("组里新来的小孙特别能干。", "小孙", "Work_Inner"),
])
def test_chinese_in_laws_counterparts_and_a_groups_newcomer(sentence: str, name: str, circle: str) -> None:
    assert people_of(sentence)[name].circle == circle


@pytest.mark.parametrize("sentence", ["小心点。", "小时候我很胖。", "老师说我进步了。"])
def test_words_that_open_with_a_nickname_prefix_are_no_one(sentence: str) -> None:
    assert people_of(sentence) == {}


def test_the_sons_head_teacher_is_related_to_the_son() -> None:
    from people.archivist import rules
    from tests.people.test_archivist_rules import Msg

    relations = rules.extract([Msg("儿子的班主任王老师今天打电话来了。", pk=1)], ()).relations
    assert [(r.subject, r.kind, r.object) for r in relations] == [("王老师", "other", "儿子")]
