"""The LLM archivist: a prompt with stable typed ids, a schema, and a tolerant reading of the reply.

The model sees every known person as `[Person:ID] Name (@user) (aka A, B) [Circle]: bio`, the
user's facts as `[Fact:ID] …` and the conversation with timestamps and speakers, and answers with
seed 000's operations (Added / Updated / Merged) plus relations. The reply is validated for its
structure (a re-ask on failure, by `LLMClient.chat_json`); each operation is then read on its
own, tolerantly: ids as "Person:5", "[Person:5]" or 5, aliases as a list or a comma-separated
string, arrays wrapped in an object or a one-element array. An operation that cannot be used
(an id the model invented, a person without a name, an unknown op) is dropped and reported,
never applied.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, model_validator

from memoryhub.llm import LLMClient
from memoryhub.sensitive import redact
from people.archivist.tokens import KnownPerson, MessageLike
from people.names import clean_name, clean_username, kin_name, kin_of, script_of
from people.ops import AddOp, Extraction, MergeOp, PersonDraft, PersonOp, RelationDraft, UpdateOp

SYSTEM_PROMPT = """You are the archivist of a long-term memory service for a chat bot. From a conversation \
between a user and the bot you maintain the user's people graph: the people the user mentions, how close \
each is to the user (circle), and how they relate to each other.

Rules:
- Facts come only from the user's own lines. A claim made by the bot counts only if the user confirmed it.
- Known people are listed as `[Person:ID] Name (@username) (aka A, B) [Circle]: bio`. Refer to a known \
person only by that id. Never invent ids.
- Write names in their dictionary (nominative) form: "с Петровым" -> "Петров". Chinese nicknames \
(小张, 老王, 阿杰) are names; a gloss of a name in another script ("小张 (Xiao Zhang)") is an alias.
- The user's own relative without a name ("my mom", "мама", "с мамой", "我妈妈") is a person too: \
display_name is the kin word in the user's language, in its dictionary form ("Mom", "мама", "妈妈"), \
circle Family. Not someone else's unnamed relative ("his wife", "У Наташи мама"), not several people \
("my parents"). When the user names one ("my mom Olga"), add the kin word as an alias of that person.
- Anyone else without a name is skipped.
- Animals are not people: a pet's name ("my dog Rex", "мою кошку зовут Муся", "我的猫叫米饭") adds no one \
(the user's profile keeps the pet).
- Organisations are not people: an employer or a company ("I work at Stripe", "работаю в Тинькофф", \
"我在腾讯工作") adds no one.
- Circles: Family (relatives, and a partner: boyfriend, girlfriend, spouse, fiancé(e); "мой парень", "моя \
девушка"; 男朋友, 女朋友, 对象), Work_Inner (boss, close colleagues, team), Friends, Work_Outer \
(clients, contractors, people from other teams), Other. A relation stated by a verb counts too: \
"I report to Priya" (Work_Inner), "мы с Лёшей дружим" (Friends), "我跟刘伟一起工作" (Work_Inner). A break-up \
or a divorce the user states ("Tom and I broke up", "мы с Олей расстались", "我和小红分手了") makes that \
person an ex: Updated with circle Other, and the bio says they broke up. So does a departure from the \
user's work ("Tom left the company", "Петров уволился", "王强离职了"): a boss or colleague who left is Updated \
with circle Other (moved to another team: Work_Outer), and the bio says so. A relative stays Family when \
the user says they also work together ("My sister Anna is my manager now"): the bio says the role.
- bio: one to three sentences on who the person is to the user; keep what is already known. A bio is read \
long after the conversation: write a date the user gives relative to when they spoke ("last week", \
"вчера", "上个月") as the date it means by the line's timestamp ("in the week of 2024-05-06").
- Updated: a known person gets a new alias, circle, username or more bio. A new display_name renames them.
- Added: someone not in the list. Merged: two known people are the same person (source merges into target).
- relations: every stated link between two people, e.g. "Maria is Petrov's wife" -> subject Maria, kind \
spouse, object Petrov; also through a pronoun: "Anna came with Tom, her husband" -> Tom spouse Anna; \
"Мы с Катей и её мужем Андреем" -> Андрей spouse Катя; "我老婆的妹妹小雪" -> 小雪 sibling 老婆 (the \
user's wife, added as a person). kind is one of: spouse, partner, parent, child, sibling, relative, \
manager, report, colleague, friend, other. subject and object are "Person:ID" or the name of a person \
you add.

Reply with JSON only, in this form:
{"people_operations": [
  {"op": "Added", "person": {"display_name": "Петров", "aliases": [], "username": null, "circle": "Work_Inner", \
"bio": "Коллега по проекту X."}},
  {"op": "Updated", "id": "Person:5", "person": {"aliases": ["Маша"], "circle": "Friends", "bio": "..."}},
  {"op": "Merged", "source_id": "Person:7", "target_id": "Person:5", "reason": "the same person"}
 ],
 "relations": [{"subject": "Person:5", "kind": "spouse", "object": "Петров", "label": "жена"}]}
When nothing changes: {"people_operations": [], "relations": []}"""

_ID = re.compile(r"(?:person|p)?\s*[:#]?\s*(\d+)", re.IGNORECASE)
_OP_NAMES = {
    "added": "Added", "add": "Added", "create": "Added", "created": "Added", "new": "Added",
    "updated": "Updated", "update": "Updated", "edit": "Updated", "edited": "Updated", "modify": "Updated",
    "merged": "Merged", "merge": "Merged",
}
_OPS_KEYS = ("people_operations", "operations", "peopleOperations", "people", "ops")
_REL_KEYS = ("relations", "relationships", "edges")
RELATION_KINDS = frozenset({"spouse", "partner", "parent", "child", "sibling", "relative", "manager", "report",
                            "colleague", "friend", "other"})
_RELATION_SYNONYMS = {"wife": "spouse", "husband": "spouse", "married": "spouse", "boss": "manager",
                      "mother": "parent", "father": "parent", "son": "child", "daughter": "child",
                      "brother": "sibling", "sister": "sibling", "girlfriend": "partner", "boyfriend": "partner",
                      "coworker": "colleague", "subordinate": "report"}


def unwrap_list(value: Any) -> list[Any]:
    """`[...]`, `{"items": [...]}`, `[[...]]`, a single object or null → a flat list."""
    if value is None:
        return []
    if isinstance(value, dict):
        lists = [v for v in value.values() if isinstance(v, list)]
        if len(value) == 1 and lists:
            return unwrap_list(lists[0])
        return [value]
    if isinstance(value, list):
        if len(value) == 1 and isinstance(value[0], list):
            return unwrap_list(value[0])
        return value
    return [value]


def parse_id(value: Any) -> int | None:
    """5, "5", "Person:5", "[Person:5]", ["Person:5"] → 5; anything else → None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list) and len(value) == 1:
        return parse_id(value[0])
    if isinstance(value, str):
        match = _ID.fullmatch(value.strip().strip("[]() "))
        return int(match.group(1)) if match else None
    return None


class ArchivistReply(BaseModel):
    """The reply's structure; each operation is read on its own afterwards (see `read_reply`)."""

    people_operations: list[Any]
    relations: list[Any] = []

    @model_validator(mode="before")
    @classmethod
    def _unwrap(cls, data: Any) -> Any:
        if isinstance(data, list):
            return {"people_operations": unwrap_list(data), "relations": []}
        if not isinstance(data, dict):
            return data
        inner = data.get("result") or data.get("response")
        if isinstance(inner, dict) and not any(k in data for k in _OPS_KEYS):
            data = inner
        ops_key = next((k for k in _OPS_KEYS if k in data), None)
        if ops_key is None:
            return data  # fails validation: the model is asked again
        rel_key = next((k for k in _REL_KEYS if k in data), None)
        return {"people_operations": unwrap_list(data[ops_key]),
                "relations": unwrap_list(data[rel_key]) if rel_key else []}


def _aliases(value: Any) -> list[str]:
    items: list[Any] = []
    stack = [value]
    while stack:
        item = stack.pop(0)
        if isinstance(item, list):
            stack[:0] = item
        elif isinstance(item, str):
            items.extend(part for part in re.split(r"[,;/]", item))
        elif item is not None:
            items.append(str(item))
    return list(dict.fromkeys(n for n in (clean_name(i) for i in items) if n))


def _telegram_id(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def draft_from(person: dict[str, Any]) -> PersonDraft:
    name = person.get("display_name") or person.get("name") or person.get("full_name") or ""
    circle = person.get("circle")
    name = clean_name(name if isinstance(name, str) else "")
    kin = kin_of(name)
    if kin is not None:
        # An unnamed relative is named by the kin word's dictionary form, whatever form the model
        # wrote ("маме", "mother"), so the rule-based and LLM archivists name her alike.
        name = kin_name(kin, script_of(name))
        circle = circle or "Family"
    draft = PersonDraft(
        display_name=name,
        aliases=_aliases(person.get("aliases") or person.get("alias")),
        username=clean_username(person.get("username") if isinstance(person.get("username"), str) else None),
        telegram_id=_telegram_id(person.get("telegram_id")),
        circle=str(circle) if circle not in (None, "") else None,
        bio=str(person.get("bio") or "").strip(),
    )
    draft.aliases = [a for a in draft.aliases if a.casefold() != draft.display_name.casefold()]
    return draft


_PERSON_KEYS = frozenset({"display_name", "name", "full_name", "aliases", "alias", "username", "telegram_id",
                          "circle", "bio"})


def read_op(raw: Any, known_ids: set[int]) -> tuple[PersonOp | None, str]:
    """One operation from the reply, or (None, why it was dropped)."""
    if not isinstance(raw, dict):
        return None, f"not an object: {str(raw)[:80]}"
    kind_raw = raw.get("op") or raw.get("type") or raw.get("operation") or raw.get("action") or ""
    kind = _OP_NAMES.get(str(kind_raw).strip().lower())
    person = raw.get("person") or raw.get("data") or {k: v for k, v in raw.items() if k in _PERSON_KEYS}
    if not isinstance(person, dict):
        person = {}
    if kind == "Added":
        draft = draft_from(person)
        if not draft.display_name:
            return None, "Added without a name"
        return AddOp(person=draft), ""
    if kind == "Updated":
        person_id = parse_id(raw.get("id", raw.get("person_id", person.get("id"))))
        if person_id is None or person_id not in known_ids:
            return None, f"Updated with an unknown id {raw.get('id', raw.get('person_id'))!r}"
        return UpdateOp(person_id=person_id, person=draft_from(person)), ""
    if kind == "Merged":
        source = parse_id(raw.get("source_id", raw.get("source", raw.get("from"))))
        target = parse_id(raw.get("target_id", raw.get("target", raw.get("into"))))
        if source is None or target is None or source == target or not {source, target} <= known_ids:
            return None, f"Merged with unknown ids {source!r} → {target!r}"
        return MergeOp(source_id=source, target_id=target, reason=str(raw.get("reason") or "")[:500]), ""
    return None, f"unknown operation {kind_raw!r}"


def _endpoint(value: Any, known_ids: set[int]) -> int | str | None:
    person_id = parse_id(value)
    if person_id is not None:
        return person_id if person_id in known_ids else None
    if isinstance(value, str) and clean_name(value):
        return clean_name(value)
    return None


def read_relation(raw: Any, known_ids: set[int]) -> tuple[RelationDraft | None, str]:
    if not isinstance(raw, dict):
        return None, "relation is not an object"
    subject = _endpoint(raw.get("subject", raw.get("from")), known_ids)
    obj = _endpoint(raw.get("object", raw.get("to")), known_ids)
    kind = str(raw.get("kind") or raw.get("type") or "other").strip().lower()
    kind = _RELATION_SYNONYMS.get(kind, kind)
    if subject is None or obj is None or subject == obj:
        return None, f"relation with unknown endpoints {raw.get('subject')!r} → {raw.get('object')!r}"
    return RelationDraft(subject=subject, object=obj, kind=kind if kind in RELATION_KINDS else "other",
                         label=str(raw.get("label") or "")[:64]), ""


def read_reply(reply: ArchivistReply, known_ids: set[int], *, max_added: int) -> Extraction:
    extraction = Extraction(source="llm")
    added = 0
    for raw in reply.people_operations:
        op, why = read_op(raw, known_ids)
        if op is None:
            extraction.dropped.append(why)
            continue
        if isinstance(op, AddOp):
            added += 1
            if added > max_added:
                extraction.dropped.append(f"Added beyond the limit of {max_added}: {op.person.display_name}")
                continue
        extraction.ops.append(op)
    for raw in reply.relations:
        relation, why = read_relation(raw, known_ids)
        if relation is None:
            extraction.dropped.append(why)
        else:
            extraction.relations.append(relation)
    return extraction


def conversation_line(message: MessageLike) -> str:
    at = message.created_at.strftime("%Y-%m-%d %H:%M") if message.created_at else ""
    speaker = redact(getattr(message, "speaker", "") or "", where="llm_prompt")
    who = f"{message.role} ({speaker})" if speaker else message.role
    # Masked even when messages are kept raw: the archivist needs no card number to know a person.
    return f"[{at}] {who}: {redact(message.text, where='llm_prompt')}"


def build_messages(*, messages: Sequence[MessageLike], known_lines: Sequence[str],
                   facts: Sequence[tuple[int, str]]) -> list[dict[str, str]]:
    facts_block = "\n".join(f"[Fact:{fid}] {text}" for fid, text in facts) or "(none)"
    people_block = "\n".join(known_lines) or "(none)"
    conversation = "\n".join(conversation_line(m) for m in messages)
    content = (f"Known facts about the user:\n{facts_block}\n\nKnown people:\n{people_block}\n\n"
               f"Conversation:\n{conversation}")
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": content}]


def extract_with_llm(*, client: LLMClient, messages: Sequence[MessageLike], known: Sequence[KnownPerson],
                     known_lines: Sequence[str], facts: Sequence[tuple[int, str]], max_added: int) -> Extraction:
    """Ask the model; raises LLMUnavailable (transient) or LLMResponseError (unusable after a re-ask)."""
    prompt = build_messages(messages=messages, known_lines=known_lines, facts=facts)
    reply, _result = client.chat_json("archivist", prompt, ArchivistReply, parse_retries=1)
    extraction = read_reply(reply, {p.id for p in known}, max_added=max_added)
    _keep_kin(extraction, {p.id: p.circle for p in known})
    return extraction


_WORK_CIRCLES = frozenset({"workinner", "workouter", "work", "inner", "outer"})  # as `normalize_circle` reads them


def _keep_kin(extraction: Extraction, circles: dict[int, str | None]) -> None:
    """Kin is who someone is: a model that moves a relative to a work circle ("My sister Anna … She is my
    manager now") keeps her in Family, as the rule archivist does (`rules._kin_kept`); the bio keeps the role."""
    for op in extraction.ops:
        if isinstance(op, UpdateOp) and circles.get(op.person_id) == "Family" and op.person.circle and \
                re.sub(r"[^a-z]", "", op.person.circle.lower()) in _WORK_CIRCLES:
            extraction.dropped.append(f"a work circle for Person:{op.person_id}, who is family")
            op.person.circle = None
