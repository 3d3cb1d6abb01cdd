"""Scene assembly (seed 003 §8.6, §8.13.2): one call builds a scene's prompt context within budget.

Blocks, in the seed's order: system (tone rules), rules (1–2 SRD chunks, only when the player's
input needs a rule), lore (top-N for the location, the NPCs, the scene and the input), episode (the
party's flags, then its summaries at the scene's location or with its NPCs, then its last ones), npc
(profiles with their latest disposition changes towards the party, and their dispositions towards single
heroes), art (canon markers and style), user (the input, as is). Budgets come from `config/prompt_budgets.yaml`
(`scene:`). With nothing retrieved it degrades as §8.14 says (engine state and SRD only, no lore)
and says so in `degraded` / `notes`.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db.models import Case, Q, When

from lore import selectors as lore_selectors
from lore.campaigns import selectors
from lore.campaigns.models import HERO_PREFIX, Campaign, EpisodicSummary, Party
from lore.campaigns.services import summary_text
from lore.models import Alias, World
from memoryhub.exceptions import NotFound
from memoryhub.text import count_tokens, detect_language, truncate_to_tokens

ORDER = ("system", "rules", "lore", "episode", "npc", "art", "user")
ROLE = ("You are the narrator of this scene. Rules, rolls and outcomes belong to the game engine: "
        "describe them, never decide them.")
DEGRADED_LINE = ("No lore was retrieved for this scene: say nothing new about the world; rely on the rules "
                 "and the engine's state below.")

# Words that mean the input asks for a rule (seed §8.6.2: SRD only when terms are needed), in English,
# Russian and Chinese. A miss costs only the rules block; a false hit costs ~2 chunks. Verbs as well as
# nouns: "I try to persuade the guard", "уговорить / убедить стражника" asked for persuasion but matched
# none of "persuasion", "убежд" (убеждение), so no rule came. "захват" and "реакция" are grapple and
# reaction in Russian. The combat actions and movement a player names by their verb ("I try to shove the
# guard", "I jump the gap", "I sneak past") are rules too: the SRD's Shoving a Creature, Jumping,
# Climbing and Swimming, Dodge, Dash, Disengage. Players also say it as gamers do: "What is my AC?",
# "кастую", "КД", "кидаю кубик"; and every Chinese input asked for nothing ("我施放火球术", "我进行敏捷
# 豁免"), the list having no Chinese.
#
# The conditions are rules by name ("what happens when my character is blinded?", the README's own example,
# "I am poisoned", "Я ослеплён", "我中毒了"): only "grappled" was there, by its stem.
#
# Stems take any ending; the short or ambiguous words only whole ones: "cast" but not "castle", "AC" but
# not "across", "урон" (damage) but not "уронил" (dropped), "кастую" but not "кастрюля" (a pot). Latin
# and Cyrillic words end where their own script's letters end, so "我的AC是多少" finds "AC" after Han
# letters; Chinese has no spaces, so its words are found anywhere, and only ones a table says of a rule
# ("攻击" attack, "检定" check, not "反应", which is every reaction, or "专注", every focus).
_LATIN_STEMS = ("roll check save saving.throw attack spell advantage disadvantage damage initiative grapple "
                "stealth hide perception persua insight condition opportunity reaction bonus.action shove "
                "shoving push grab jump climb swim sneak dodge dash disengage cantrip concentrat counterspell "
                "armou?r.class hit.points?")
_LATIN_WORDS = ("cast casts casting caster dc ac hp d20 blinded charmed deafened frightened incapacitated invisible "
                "paralyzed paralysed petrified poisoned prone restrained stunned unconscious exhaustion exhausted")
_CYRILLIC_STEMS = ("бросо?к кида провер спасбросок атак заклинан колду урона уроном урону кастова касту скасту "
                   "инициатив преимуществ помех скрыт незамет восприят убежд убед уговор захват проницат "
                   "состояни реакци толкн толка оттолк прыг прыжк карабк плыв плав подкрад крад уклон отход "
                   "класс.доспех кубик ослепл ослеп очарован оглох оглуш испуган напуган недееспособ невидим "
                   "парализ окамен отравл опутан обездвиж ошеломл истощ")
_CYRILLIC_WORDS = "урон кд к20 без.сознания сбит.с.ног"
_HAN_WORDS = ("施放 施法 法术 咒语 戏法 检定 豁免 掷骰 投骰 骰子 先攻 攻击 护甲等级 擒抱 推撞 潜行 躲藏 察觉 洞察 "
              "说服 威吓 欺瞒 优势 劣势 伤害 借机 附赠动作 疾走 撤离 闪避 跳跃 攀爬 游泳 生命值 "
              "目盲 失明 魅惑 耳聋 恐慌 力竭 失能 隐形 麻痹 石化 中毒 倒地 束缚 震慑 昏迷")


def _alternatives(words: str) -> str:
    return "|".join(w.replace(".", r"\s+") for w in words.split())


# What the player does, and the rule that settles it, first in the rules block: the search of the input alone
# found the things it names, not the action. "I attack the goblin with my longsword" brought the Longsword and
# the Sun Blade, not the attack roll; "I try to deceive the witch", "Я пытаюсь обмануть ведьму", "我试图欺骗
# 女巫" asked for no rule at all, and "I persuade the guard" brought Deception. Each action names its SRD entry
# by id (an entry keeps its id in every language, so a Russian or Chinese input gets it in the world's
# language nearest its own) and the part of it by heading ("" for its opening). Its words, like the triggers':
# Latin and Cyrillic words end where their script's letters end, "*" takes any ending, "_" is a space; Han
# words anywhere. Not "hit points" (a hit), "lie down" (a lie), "краду" (to steal, not to sneak), "захватывающий"
# (breathtaking), "столкнулся" (ran into) or "推开门" (push a door open). A Russian player says an attempt with the
# infinitive ("Я пытаюсь схватить Ли Шэня", "хочу оттолкнуть", "пробую перелезть"), which the first-person forms
# alone missed: that input got no rules block at all.
ACTION_RULES: tuple[tuple[str, str, str, str, str], ...] = (
    ("Rule-Sections/making-an-attack", "Attack Rolls",
     "attack* strike strikes striking struck hit(?!_(?:points?|dice|die)) hits(?!_points) hitting shoot shoots "
     "shooting stab stabs stabbing slash slashes slashing",
     "атак* бью бьёт бьет бьём бьем бьёшь бьешь бьют ударю ударяю ударяет ударил ударила ударить стреля* выстрел* "
     "нападаю нападу напасть нападаем нападём нападем рублю рубану зарублю",
     "攻击 砍 射击 射箭"),
    # A grapple and a shove are attacks of their own, each with its part of the section.
    ("Rule-Sections/making-an-attack", "Grappling", "grapple grapples grappling(?!_hook) wrestl*",
     "захват захватываю захватывает захвачу захватить захватил захватила схвачу схвати* схватыва* хватаю хватать "
     "ухвачу ухвати* вцеплюсь вцепляюсь вцепиться",
     "擒抱 擒住 抓住 扭住 摔跤 扭打"),
    ("Rule-Sections/making-an-attack", "Shoving a Creature", "shove shoves shoving",
     "толкаю толкну оттолкну столкну сталкиваю толкнуть оттолкнуть столкнуть толкать отталкиваю спихну спихнуть "
     "спихиваю", "推撞 推倒 推下"),
    ("Skills/deception", "", "deceiv* deceit* decept* bluff* lie_to lies_to lying_to lied_to",
     "обман* солгу солгать лгу лжёт лжет вру соврать совру навру наврать блеф*", "欺骗 欺瞒 撒谎 说谎 哄骗 蒙骗"),
    ("Skills/persuasion", "", "persua* convinc*", "убежд* убед* уговор* уговар*", "说服 劝说 劝服"),
    ("Skills/intimidation", "", "intimidat* threaten*", "запуг* угрож*", "威吓 恐吓 威胁"),
    ("Skills/stealth", "", "stealth* sneak* hide hides hiding",
     "скрытн* незаметн* подкрад* крадусь крадётся крадется крадёмся крадемся красться прячусь спрячусь прятаться "
     "спрятаться прячемся спрячемся", "潜行 躲藏 溜过 藏起来 躲起来"),
    ("Skills/athletics", "", "climb* swim swims swimming swam",
     "карабка* вскарабка* лезу лезет лезем лезть залез* перелез* взбираюсь взберусь взобраться плыву плывёт плывет "
     "плыть переплы*", "攀爬 攀登 爬上 游泳 游过"),
    ("Skills/insight", "", "insight*", "проницат*", "洞察"),
    ("Skills/perception", "", "perception* perceiv*", "восприят*", "察觉"),
    ("Skills/investigation", "", "investigat*", "расследов* обыск*", "调查 搜查"),
    ("Skills/sleight-of-hand", "", "pickpocket* steal steals stealing sleight_of_hand",
     "украду украсть стащу стащить карманн*", "偷窃 扒窃 顺手牵羊"),
)


def _action_words(latin: str, cyrillic: str, han: str) -> str:
    alternatives = []
    for words, letters in ((latin, "a-z"), (cyrillic, "а-яё")):
        for word in words.split():
            body = word.removesuffix("*").replace("_", r"\s+")
            alternatives.append(rf"(?<![{letters}]){body}" + (f"[{letters}]*" if word.endswith("*") else
                                                               f"(?![{letters}])"))
    return "|".join([*alternatives, *han.split()])


_ACTIONS = tuple((entry_id, heading, re.compile(_action_words(latin, cyrillic, han), re.IGNORECASE))
                 for entry_id, heading, latin, cyrillic, han in ACTION_RULES)


# What an action leaves its target in, after the rules of every action said: a grapple's rule tells how to
# grab, the Grappled condition what the grabbed one can then do (speed 0, how to escape), which the game master
# narrates next. Without it, "Я пытаюсь схватить Ли Шэня" got Charisma second (the search's "пытаетесь"), and
# "I shove Li Shen off the bridge" Wall of Stone. A shove knocks prone or pushes; Prone is the state it leaves.
ACTION_COMPANIONS: dict[tuple[str, str], tuple[str, str]] = {
    ("Rule-Sections/making-an-attack", "Grappling"): ("Conditions/grappled", ""),
    ("Rule-Sections/making-an-attack", "Shoving a Creature"): ("Conditions/prone", ""),
}


CASTING_RULE = ("Rule-Sections/casting-a-spell", "")


def action_rules(user_input: str) -> list[tuple[str, str]]:
    """The rules of the actions the input says, as (entry id, heading), in the order it says them; then the
    conditions they leave a target in (`ACTION_COMPANIONS`)."""
    said = sorted((found.start(), entry_id, heading) for entry_id, heading, words in _ACTIONS
                  if (found := words.search(user_input)))
    actions = list(dict.fromkeys((entry_id, heading) for _, entry_id, heading in said))
    return list(dict.fromkeys([*actions, *(ACTION_COMPANIONS[a] for a in actions if a in ACTION_COMPANIONS)]))


# A question about a rule ("can I attack while riding a horse…", "как работает невидимость в бою, атаки по
# невидимому", "персонаж парализован — атаки по нему критические?") is answered by its search; the rule of an
# action it says in passing only fills a place the search leaves. Measured on the SRD golden questions read as
# the rules block does (no monster or language answers): with the attack roll first, en-07, ru-05 and ru-06
# lost their answer's first or second place. A question: "?" or 吗 at the end, or a sentence that opens with a
# question or modal word (not a clause: "атакую гоблина, что стоит у моста" is an attack).
_QUESTION = re.compile(
    r"[?？]\W*$|吗\W*$"
    r"|(?:^|[.!…]\s+)(?:how|what|when|which|why|who|where|can|could|do|does|did|is|are|may|should|will|would)"
    r"(?![a-z])"
    r"|(?:^|[.!…]\s+)(?:как|что|какой|какая|какое|какие|когда|сколько|почему|зачем|можно|может|могу|кто|где)"
    r"(?![а-яё])"
    r"|怎么|如何|什么|多少|能否|为什么|哪",
    re.IGNORECASE,
)


def is_rules_question(user_input: str) -> bool:
    return _QUESTION.search(user_input.strip()) is not None


RULE_TRIGGERS = re.compile(
    rf"(?<![a-z])(?:{_alternatives(_LATIN_STEMS)})[a-z]*|(?<![a-z])(?:{_alternatives(_LATIN_WORDS)})(?![a-z])"
    rf"|(?<![а-яё])(?:{_alternatives(_CYRILLIC_STEMS)})[а-яё]*"
    rf"|(?<![а-яё])(?:{_alternatives(_CYRILLIC_WORDS)})(?![а-яё])"
    rf"|{_alternatives(_HAN_WORDS)}"
    # An action is a rule: "I try to deceive the witch" asked for none.
    + "".join(f"|{words.pattern}" for _, _, words in _ACTIONS),
    re.IGNORECASE,
)

_BLOCK = {
    "type": "object", "additionalProperties": False, "required": ["max_tokens"],
    "properties": {"max_tokens": {"type": "integer", "minimum": 0}, "max_items": {"type": "integer", "minimum": 1},
                   "item_tokens": {"type": "integer", "minimum": 1},
                   "exclude_categories": {"type": "array", "items": {"type": "string", "minLength": 1}},
                   "cast_exclude_categories": {"type": "array", "items": {"type": "string", "minLength": 1}}},
}
_CONFIG = {
    "type": "object", "additionalProperties": False, "required": ["total_tokens", "blocks", "default_tone"],
    "properties": {
        "total_tokens": {"type": "integer", "minimum": 100},
        "default_tone": {"type": "string"},
        "blocks": {"type": "object", "additionalProperties": False,
                   "required": ["system", "rules", "lore", "episode", "npc", "art"],
                   "properties": dict.fromkeys(ORDER[:-1], _BLOCK)},
    },
}


@cache
def scene_config() -> dict[str, Any]:
    path = Path(getattr(settings, "PROMPT_BUDGETS_CONFIG", settings.BASE_DIR / "config" / "prompt_budgets.yaml"))
    data = (yaml.safe_load(path.read_text()) or {}).get("scene")
    errors = sorted(jsonschema.Draft202012Validator(_CONFIG).iter_errors(data), key=lambda e: list(e.path))
    if errors:
        where = ".".join(str(p) for p in errors[0].absolute_path)
        raise ImproperlyConfigured(f"{path} scene.{where}: {errors[0].message}")
    return data


@dataclass
class Item:
    source: str
    text: str
    # Retrieved items only: the fused rank and each component's (1-based), so a caller sees why it
    # came and the quality figures can compare the fusion with BM25 alone.
    ranks: dict[str, int] | None = None

    @property
    def tokens(self) -> int:
        return count_tokens(self.text)


@dataclass
class Block:
    name: str
    budget: int | None
    items: list[Item] = field(default_factory=list)

    @property
    def tokens(self) -> int:
        return sum(item.tokens for item in self.items)

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "tokens": self.tokens, "budget": self.budget,
                "items": [{"source": i.source, "tokens": i.tokens, "text": i.text,
                           **({"ranks": i.ranks} if i.ranks is not None else {})} for i in self.items]}


@dataclass
class SceneRequest:
    party: str
    location: str = ""
    npcs: list[str] = field(default_factory=list)
    scene_text: str = ""
    user_input: str = ""


@dataclass
class _Packer:
    remaining: int
    cut: list[dict[str, Any]] = field(default_factory=list)

    def pack(self, name: str, candidates: list[Item], cfg: dict[str, Any]) -> Block:
        block = Block(name, cfg["max_tokens"])
        for index, item in enumerate(candidates):
            if "max_items" in cfg and index >= cfg["max_items"]:
                self.cut.append({"block": name, "source": item.source, "reason": "max_items"})
                continue
            if "item_tokens" in cfg and item.tokens > cfg["item_tokens"]:
                original = item.tokens
                item = Item(item.source, truncate_to_tokens(item.text, cfg["item_tokens"]), item.ranks)
                self.cut.append({"block": name, "source": item.source, "reason": "truncated",
                                 "tokens_before": original, "tokens_after": item.tokens})
            room = min(cfg["max_tokens"] - block.tokens, self.remaining)
            if item.tokens > room:
                self.cut.append({"block": name, "source": item.source,
                                 "reason": "block_budget" if room < self.remaining else "total_budget"})
                continue
            block.items.append(item)
            self.remaining -= item.tokens
        return block


def _hits(tenant_id: int, world: str, domain: str, query: str, k: int, exclude: tuple[str, ...] = (),
          canary_key: str | None = None, actions: list[tuple[str, str]] | None = None,
          languages: list[str] | None = None, actions_first: bool = True) -> list[Item] | None:
    """The domain's `latest` hits; None when the world has published no version of the domain.

    `actions`: the rules of what the player does (`action_rules`), the parts of those entries in the first of
    `languages` the world has them in, before the search's hits (after them when not `actions_first`), an
    entry once, `k` in all. They are named by the input, not retrieved, so they carry no ranks: the quality
    figures rank the search alone."""
    try:
        # A canary of the world's knowledge serves a party always or never (`canary_key`), as it does a session.
        targets = lore_selectors.targets_resolve(tenant_id=tenant_id, world_slug=world, domains=[domain],
                                                 canary_key=canary_key)
    except NotFound:
        return None
    result = lore_selectors.knowledge_search(tenant_id=tenant_id, targets=targets, query=query, k=k,
                                             filters=lore_selectors.KnowledgeFilters(exclude_categories=exclude))
    named = lore_selectors.entry_parts(tenant_id=tenant_id, target=targets[0], wanted=actions,
                                       languages=languages or []) if actions else []
    searched = [(hit, {"fused": position, **hit.ranks}) for position, hit in enumerate(result.hits, start=1)]
    ordered = [(hit, None) for hit in named] + searched if actions_first else searched + [(hit, None) for hit in named]
    items: dict[str, Item] = {}
    for hit, ranks in ordered:
        items.setdefault(hit.entry_id, Item(f"{domain}:{hit.entry_id}@{hit.version}", f"{hit.title}: {hit.text}",
                                            ranks))
    return list(items.values())[:k]


def _unpublished(world: World, domain: str, what: str) -> str:
    """Why a domain gave nothing because the world has none live: "no chunk was found" sent a game master
    looking for a poor search where the world simply has no rules, or has them staged and not published."""
    staged = (Alias.objects.filter(world=world, domain=domain, name=Alias.Name.STAGE)
              .values_list("version__version", flat=True).first())
    then = (f"its {domain} version {staged} is staged, not published: publish it" if staged
            else f"upload {domain} sources and publish a version")
    return f"world {world.slug!r} has no {what} published ({then})"


def _episodes(party: Party, location: str, npc_ids: list[str], n: int) -> list[EpisodicSummary]:
    """The party's `n` live summaries for the scene: those at its location (`where.location_id`) or with its
    NPCs (`who.npcs`, or a disposition change of theirs) first, the more of the scene they share the sooner,
    newest first among equals; the latest fill the rest. The latest alone showed a scene at the moon bridge
    with Li Shen the forge and the swamp, and not the bargain he struck with the party on that bridge."""
    live = EpisodicSummary.objects.filter(party=party, expired_at__isnull=True).prefetch_related("disposition_changes")
    shared: list[Any] = []
    if location:
        shared.append(Case(When(location_id=location, then=1), default=0))
    for npc_id in npc_ids:
        shared.append(Case(When(Q(document__who__npcs__contains=[npc_id])
                                | Q(document__relations_delta__contains=[{"npc_id": npc_id}]), then=1), default=0))
    chosen: list[EpisodicSummary] = []
    if shared:
        score = shared[0]
        for more in shared[1:]:
            score = score + more
        chosen = list(live.annotate(shared=score).filter(shared__gt=0).order_by("-shared", "-when", "-id")[:n])
    if len(chosen) < n:
        chosen += list(live.exclude(pk__in=[s.pk for s in chosen]).order_by("-when", "-id")[:n - len(chosen)])
    return chosen


def _flags_line(party: Party, summaries: list[EpisodicSummary], words: set[str], cap: int, room: int) -> Item | None:
    """The party's flags (`selectors.party_flags`): engine state a scene must not contradict. Only those the
    shown summaries set or whose key shared a word with the scene came before, so a scene at the moon bridge
    shown the forge's and the swamp's summaries missed gate_moon_door=open and quest_moon_key=obtained,
    which session_fetch listed.

    Whole flags, by key, those left out counted. Those that bear on the scene (set by a summary shown, or a
    word of the key in the location, the NPCs, the scene or the input: quest_moon_key for loc_moon_bridge)
    come first, up to `cap` tokens: the hard facts go before older prose, as they always did. The rest only
    in the `room` the summaries leave: forty rumours of an old tavern scene pushed the bridge's own summary
    out of the block."""
    flags = selectors.party_flags(party)
    if not flags:
        return None
    shown = {key for s in summaries for key in s.document["flags"]}

    def bears(flag: dict[str, Any]) -> bool:
        return flag["key"] in shown or bool(set(re.split(r"[_.:-]", flag["key"].lower())) & words)

    said: list[str] = []
    for flag in sorted(flags, key=lambda flag: not bears(flag)):  # stable: by key within each group
        pair = f"{flag['key']}={flag['value']}"
        rest = len(flags) - len(said) - 1  # if none after this one fits
        line = "Flags: " + ", ".join([*said, pair]) + (f" (and {rest} more)" if rest else "") + "."
        if count_tokens(line) <= (cap if bears(flag) else min(cap, room)):
            said.append(pair)
    left = len(flags) - len(said)
    said.sort()  # shown by key, as session_fetch lists them: the ranking only chose which fit
    text = ("Flags: " + ", ".join(said) + (f" (and {left} more)" if left else "") + "." if said
            else f"Flags: {left} set, not shown for lack of room.")
    return Item(f"flags:{party.slug}", text)


def _npc_text(profile: dict[str, Any], party: Party) -> str:
    static = profile["static"]
    value = profile["dynamic"]["disposition"][f"party_id:{party.slug}"]
    parts = [f"{static['name']} ({profile['npc_id']}, {static['archetype']}"
             + (f", voice {static['voice_tts']}" if static.get("voice_tts") else "") + ")."]
    latest = "; ".join(f"{c['applied']:+d} {c['reason']} [{c['summary_id']}]" for c in profile["latest_changes"]
                       if c["towards"] == "party")
    parts.append(f"Disposition towards the party: {value:+d}" + (f" (latest: {latest})." if latest else "."))
    # Values only: the party's line already carries the why, and the NPC block holds ~100 tokens an NPC.
    heroes = [f"{key.removeprefix(HERO_PREFIX)} {held:+d}" for key, held in profile["dynamic"]["disposition"].items()
              if key.startswith(HERO_PREFIX)]
    if heroes:
        parts.append("Towards heroes: " + ", ".join(heroes) + ".")
    if static.get("secrets"):
        parts.append("Secrets (hidden from players): " + ", ".join(static["secrets"]) + ".")
    if static.get("lore_refs"):
        parts.append("Lore: " + ", ".join(static["lore_refs"]) + ".")
    return " ".join(parts)


def scene_context(*, campaign: Campaign, request: SceneRequest) -> dict[str, Any]:
    started = time.perf_counter()
    selectors.require_active(campaign, "assembling a scene")
    cfg = scene_config()
    blocks_cfg = cfg["blocks"]
    party = selectors.party_get(campaign=campaign, slug=request.party)
    npcs = selectors.npcs_get(campaign=campaign, npc_ids=list(dict.fromkeys(request.npcs)))
    tenant_id, world = campaign.tenant_id, campaign.world.slug
    packer = _Packer(remaining=cfg["total_tokens"])
    notes: list[str] = []

    # Retrieval first: whether lore came back decides what the system block says.
    trigger = RULE_TRIGGERS.search(request.user_input)
    rules_items: list[Item] = []
    if trigger:
        # Stat blocks are no rules: a grapple's rule, not the monsters that grapple; and a spell cast needs
        # the spell's rule, not the things and creatures it is cast on (prompt_budgets.yaml).
        exclude = tuple(blocks_cfg["rules"].get("exclude_categories", ()))
        # The rule of what the player does comes first; but in a cast the spell is the action (its entry says
        # whether it attacks), so "I cast shield against the orc's attack" keeps the Shield spell first, and a
        # question about a rule is answered by its search first.
        actions = action_rules(request.user_input)
        casting = lore_selectors.CASTING.search(request.user_input) is not None
        if casting:
            exclude += tuple(blocks_cfg["rules"].get("cast_exclude_categories", ()))
            # After what the search finds, how casting works: a spell named in words no entry holds ("Кастую
            # огненный шар", the Russian subset having no spells) found nothing, and the block was empty.
            actions = [*actions, CASTING_RULE]
        found_rules = _hits(tenant_id, world, "srd", request.user_input, blocks_cfg["rules"].get("max_items", 2),
                            exclude, canary_key=f"{campaign.slug}/{party.slug}", actions=actions,
                            languages=[detect_language(request.user_input), *campaign.world.languages],
                            actions_first=not casting and not is_rules_question(request.user_input))
        if found_rules is None:
            notes.append(f"The input needs a rule, but {_unpublished(campaign.world, 'srd', 'rules (SRD)')}.")
        elif not found_rules:
            notes.append("The input needs a rule but no SRD chunk was found.")
        rules_items = found_rules or []
    # The player's words too: "I ask Old Marrow how to ring the Drowned Bell" needs the Bell's entry,
    # which neither the location, the NPCs nor the scene text name.
    lore_query = " ".join([request.location.replace("_", " "), *(n.name for n in npcs), request.scene_text,
                           request.user_input]).strip()
    found_lore = (_hits(tenant_id, world, "lore", lore_query, blocks_cfg["lore"].get("max_items", 3),
                        canary_key=f"{campaign.slug}/{party.slug}") if lore_query else [])
    lore_items = found_lore or []
    degraded = not lore_items
    if degraded:
        why = f": {_unpublished(campaign.world, 'lore', 'lore')}" if found_lore is None else ""
        notes.append(f"Degraded (seed §8.14): no lore retrieved{why}; the scene rests on the SRD and the engine's "
                     "state (summaries, flags, dispositions).")

    system_text = "\n".join([ROLE, campaign.tone_rules or cfg["default_tone"], *([DEGRADED_LINE] if degraded else [])])
    blocks = [packer.pack("system", [Item("config:tone" if not campaign.tone_rules else f"campaign:{campaign.slug}",
                                          system_text)], blocks_cfg["system"])]
    blocks.append(packer.pack("rules", rules_items, blocks_cfg["rules"]))
    blocks.append(packer.pack("lore", lore_items, blocks_cfg["lore"]))

    episode_cfg = blocks_cfg["episode"]
    max_summaries = max(1, episode_cfg.get("max_items", 3) - 1)
    summaries = _episodes(party, request.location, [npc.npc_id for npc in npcs], max_summaries)
    # Ids are words too: loc_moon_bridge says "moon" and "bridge".
    words = {w for w in re.split(r"[\W_]+", " ".join([request.location, *request.npcs, request.scene_text,
                                                      request.user_input]).lower()) if len(w) > 2}
    episode_items = [Item(f"summary:{s.summary_id}", summary_text(
        s.document, [c.applied for c in sorted(s.disposition_changes.all(), key=lambda c: c.pk)]))
        for s in summaries]
    cap = min(episode_cfg.get("item_tokens", episode_cfg["max_tokens"]), episode_cfg["max_tokens"])
    room = episode_cfg["max_tokens"] - sum(min(item.tokens, cap) for item in episode_items)
    flags = _flags_line(party, summaries, words, cap, room)
    # Flags first: they are the hard facts the engine guarantees, worth more than older prose.
    blocks.append(packer.pack("episode", ([flags] if flags else []) + episode_items, blocks_cfg["episode"]))

    profiles = [selectors.npc_profile(npc.npc_id, party, campaign) for npc in npcs]
    blocks.append(packer.pack("npc", [Item(f"npc:{p['npc_id']}", _npc_text(p, party)) for p in profiles],
                              blocks_cfg["npc"]))

    art = selectors.art_suggest(campaign, location=request.location or None, npcs=request.npcs)
    art_items = []
    if art["cards"]:
        text = (f"Art: style {art['style'] or 'any'}; keep {', '.join(art['keep']) or '-'}"
                + (f"; avoid {', '.join(art['avoid'])}" if art["avoid"] else "")
                + f"; tags {', '.join(art['visual_tags'][:8])}.")
        art_items.append(Item("art:" + ",".join(c["image_id"] for c in art["cards"]), text))
    blocks.append(packer.pack("art", art_items, blocks_cfg["art"]))

    user = Block("user", None, [Item("user", request.user_input)] if request.user_input else [])
    blocks.append(user)
    prompt = "\n\n".join(f"## {b.name}\n" + "\n".join(i.text for i in b.items) for b in blocks if b.items)
    total = sum(b.tokens for b in blocks)
    return {
        "campaign": campaign.slug,
        "party": party.slug,
        "blocks": [b.as_dict() for b in blocks],
        "tokens": {"total": total, "without_user": total - user.tokens, "budget": cfg["total_tokens"]},
        "rules_needed": bool(trigger),
        "rules_trigger": trigger.group(0) if trigger else None,
        "degraded": degraded,
        "notes": notes,
        "cut": packer.cut,
        "art": {"keep": art["keep"], "avoid": art["avoid"], "style": art["style"]},
        "prompt": prompt,
        "took_ms": round((time.perf_counter() - started) * 1000, 3),
    }
