"""English phrasings of the user's facts about themselves."""

from __future__ import annotations

import re

from profiles.keys import en_number, language_code
from profiles.rules.common import (
    Emit,
    Rule,
    RuleFact,
    SentenceFilters,
    SharedSubject,
    lexicon,
    one,
    run_rules,
    said_case,
    words_before,
)

I_AM = r"(?:i'm|i’m|i\s+am|im)"
ADV = r"(?:(?:currently|now|still|actually|also|just|really|already|only)\s+)?"
# Names and places keep their capitals; the (?-i:…) groups switch case-insensitivity off locally.
NAME_CAP = r"(?-i:[A-Z][a-z'’\-]+(?:\s+[A-Z][a-z'’\-]+){0,2})"
NAME_ANY = r"(?-i:[A-Za-z][a-z'’\-]+(?:\s+[A-Z][a-z'’\-]+){0,2})"
PLACE = r"(?-i:[A-Z][\w'’\-]*(?:\s+(?:[A-Z][\w'’\-]*|de|del|do|da|am|upon|on)){0,3})"
# A capitalised name, with the kind of place it is when that follows in lower case ("St Mary hospital").
ORG = (r"(?-i:[A-Z][\w&'’.\-]*(?:\s+[A-Z&][\w&'’.\-]*){0,3}(?:\s+(?:hospital|clinic|school|college|university"
       r"|academy|institute|library|museum|hotel|restaurant|cafe|café|bakery|bank|store|shop|factory|studio)\b)?)")
# A word of a noun phrase ends in a letter, and the words that end the phrase stand apart: "a stay-at-home mom"
# is not "a stay-" before "at".
NP = r"((?:[a-z](?:[a-z\-]*[a-z])?\s+){0,3}?[a-z](?:[a-z\-]*[a-z])?)"
NP_END = (r"(?=\s*(?:$|[,.!;:)])|\s+(?:at|in|for|with|from|and|by|who|since|on|working|based|but|so|now|nowadays"
          r"|currently|these\s+days|there|here)\b)")
NUM_WORD = (
    r"(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:[\s-](?:one|two|three|four|five|six|seven|eight"
    r"|nine))?|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|ten"
)
LANG = (
    r"(?:English|Russian|Chinese|Mandarin|Cantonese|German|French|Spanish|Italian|Portuguese|Japanese|Korean"
    r"|Ukrainian|Polish|Arabic|Turkish|Dutch|Hindi|Czech|Hebrew|Kazakh)"
)
# A language of a list may say how well: "Spanish and a little French".
_LANG_HOW = r"(?:(?:a\s+(?:little|bit)\s+(?:of\s+)?|some\s+|basic\s+|conversational\s+|fluent\s+)?)"
LANGS = rf"({LANG}(?:\s*,\s*{_LANG_HOW}{LANG})*(?:,?\s+and\s+{_LANG_HOW}{LANG})?)"
TZ_STRICT = (
    r"((?:UTC|GMT)\s*[+\-−]\s*\d{1,2}(?::?\d{2})?|[A-Za-z]+/[A-Za-z_]+(?:/[A-Za-z_]+)?"
    r"|(?-i:UTC|GMT|PST|PDT|EST|EDT|MST|CET|CEST|BST|IST|JST|KST|MSK))"
)
# "Pacific time", "Eastern Standard Time", "Central European Time", "London time": checked by timezone_canonical.
TZ_WORD = r"((?-i:[A-Z][a-z]+(?:\s+[A-Z][a-z]+){0,2})\s+(?:time|Time))"
# A second clause of the user's own sentence: "I live in Leeds and work as…", "I'm from Ohio but live in…".
# "I work as hard as I can": a comparison, not a job.
AS_MUCH_AS = r"(?:hard|much|long|fast|well|often|little|best|quick(?:ly)?|many|far|late|early)\s+as\b"
I_HAVE_BEEN = r"\bi(?:'ve|’ve|\s+have)\s+(?:(?:also|now|just)\s+)?been\s+"
AND_I = r"\b(?:i|i'm|i’m|i\s+am)\b[^.;!?]{0,60}?\b(?:and|but)\s+"
# Between "I work" and "as a nurse": a shift or way of working, then a place ("in Boston", "at a hospital in
# Leeds"). Lazy and short, so "I work with kids as much as I can" is still refused by AS_MUCH_AS.
WORK_WHERE = (r"(?:\s+(?:nights|days|weekends|evenings|part[-\s]time|full[-\s]time|remotely|from\s+home"
              r"|(?:night|day|early|late|weekend)\s+shifts?))?"
              r"(?:\s+(?:in|at|for|with)\s+(?:(?!\bas\b)[^,.;!?]){1,40}?)?")
# What may follow a place that ends a subjectless clause ("living in Dublin these days").
PLACE_END = r"(?=\s*(?:$|[,.;!]|these\s+days\b|now\b|at\s+the\s+moment\b|currently\b|for\b|since\b))"
# Fields one works in ("I work in HR"): an occupation where a capitalised word would otherwise read as a place.
FIELDS = (r"(HR|IT|PR|QA|marketing|sales|finance|accounting|tech|retail|hospitality|healthcare|education|insurance"
          r"|consulting|logistics|construction|real\s+estate|customer\s+service|software|banking|journalism"
          r"|advertising|recruiting|recruitment|human\s+resources|research|law|engineering)")

OCCUPATIONS = lexicon("""
engineer developer programmer coder designer manager teacher nurse doctor physician surgeon dentist lawyer attorney
accountant architect student scientist researcher professor lecturer writer author journalist editor artist musician
singer actor actress photographer chef cook baker barista waiter waitress bartender driver pilot mechanic electrician
plumber carpenter farmer soldier officer firefighter paramedic pharmacist therapist psychologist psychiatrist
consultant analyst entrepreneur founder ceo cto cfo freelancer translator interpreter librarian cashier salesman
saleswoman salesperson clerk secretary receptionist economist banker trader investor broker realtor veterinarian vet
tutor coach trainer administrator sysadmin technician tester marketer recruiter intern retiree housewife homemaker
nanny cleaner janitor builder welder miner fisherman tailor hairdresser barber model dancer athlete streamer youtuber
blogger judge diplomat politician priest courier mathematician physicist chemist biologist linguist historian
philosopher statistician midwife optician paralegal surveyor contractor lifeguard caregiver pensioner postman
student illustrator animator copywriter strategist scrum devops sre auditor nutritionist dietitian optometrist
""")
INTOLERANCES = r"(?:lactose|gluten|dairy|fructose|histamine|wheat|egg|soy|caffeine|alcohol)"
DIETS = (r"(vegetarian|vegan|pescatarian|pescetarian|flexitarian|keto|paleo|gluten-free|dairy-free|lactose-free|halal"
         r"|kosher|plant-based)")
# What may follow a diet: "I'm keto these days", "I eat halal, just so you know", "I follow a keto diet".
DIET_END = r"(?:\s+diet)?(?=\s*(?:$|[,.;!)]|now\b|these\s+days\b|so\b|and\b|but\b|btw\b|by\s+the\s+way\b))"
# "I'm a night owl who works as a nurse": a relative clause that goes on about the speaker.
I_WHO = rf"\b{I_AM}\s+(?:a|an)\s+(?:(?!\b(?:and|but)\b)[^.;!?,]){{1,40}}?\bwho\s+(?:also\s+|currently\s+|now\s+)?"
# "a dog person", "a tea person": a taste; these say when or how one is, not what one likes.
NOT_A_TASTE = lexicon("morning night people detail details numbers word words glass half big small")
# Modifiers that make "a good cook" a judgement rather than a job, or a job the user does not hold.
NOT_A_JOB = lexicon("good great bad terrible awful decent excellent amazing huge big real true born natural lousy "
                      "poor aspiring future wannabe former ex would-be")
NOT_A_NAME = lexicon("""
not a an the from in here there so very really just also still back ready done good fine sorry happy sure glad
okay ok home busy tired afraid new old english russian chinese american british canadian french german spanish
italian japanese korean indian irish scottish welsh australian ukrainian polish dutch swedish catholic christian
muslim jewish buddhist hindu atheist vegan vegetarian brazilian mexican argentinian chilean colombian peruvian
cuban portuguese swiss austrian belgian danish norwegian finnish greek turkish egyptian moroccan nigerian kenyan
ethiopian israeli iranian iraqi pakistani bangladeshi vietnamese thai filipino indonesian malaysian singaporean
taiwanese mongolian kazakh uzbek georgian armenian romanian hungarian czech slovak serbian croatian bulgarian
lithuanian latvian estonian belarusian european asian african latino latina arab persian
monday tuesday wednesday thursday friday saturday sunday
january february march april may june july august september october november december bot ai human
""")
PETS = ("guinea pig", "dog", "cat", "puppy", "kitten", "hamster", "parrot", "rabbit", "bunny", "goldfish", "fish",
        "turtle", "tortoise", "snake", "lizard", "ferret", "horse", "pony", "rat", "mouse", "budgie", "bird",
        "chinchilla", "hedgehog", "iguana", "gecko", "canary", "cockatiel", "gerbil")
PET = "(" + "|".join(PETS) + ")"
_PET_SINGULAR = {"puppy": "dog", "puppies": "dog", "kitten": "cat", "bunny": "rabbit", "mice": "mouse"}
LIKE_NOISE = lexicon("you it that this them him her me us those these your his their our my what how when where to "
                       "idea way fact thought one ones thing things point answer question suggestion plan")


def _name(raw: str) -> str | None:
    words = raw.split()
    if not words or words[0].lower() in NOT_A_NAME:
        return None
    while words and words[-1].lower() in NOT_A_NAME:
        words.pop()
    name = " ".join(words)
    return name.title() if name.islower() else name


def _age(raw: str) -> str | None:
    return raw if raw.isdigit() else (str(n) if (n := en_number(raw)) else None)


def _job(raw: str) -> str | None:
    words = raw.lower().split()
    if not words or any(w in NOT_A_JOB for w in words):
        return None
    return said_case(" ".join(words), raw)


_DETAIL = {"short": "brief", "brief": "brief", "concise": "brief", "detailed": "detailed", "long": "detailed",
           "in-depth": "detailed"}


# A job about to begin: "I start at", "I'm starting at", "I'll start my new job at", and when ("on Monday").
_STARTING = (r"\bi(?:'m|’m|\s+am|'ll|’ll|\s+will)?\s+(?:(?:just|finally|officially)\s+)*start(?:ing)?\s+"
             r"(?:my\s+new\s+job\s+|work\s+)?at\s+(?:the\s+)?")
_PROMOTED = (r"\bi(?:'ve|’ve|\s+have)?\s+(?:(?:just|finally|recently|officially)\s+)*(?:got|was|been|have\s+been)"
             r"\s+(?:(?:just|finally|officially)\s+)?promoted\s+to\s+(?:(?:a|an|the)\s+)?")
_SOON = (r"(?:(?:on|next|this)\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|week|month)"
         r"|tomorrow|soon|in\s+(?:a\s+week|two\s+weeks|january|february|march|april|may|june|july|august|september"
         r"|october|november|december))")
_DAYS_AND_MONTHS = lexicon("monday tuesday wednesday thursday friday saturday sunday january february march april "
                           "may june july august september october november december noon night")


# "Hi, it's Christmas!": what a greeting's "it's" may name besides who writes.
_NOT_WRITERS = _DAYS_AND_MONTHS | lexicon("christmas easter halloween thanksgiving me us time official true done over")


def _not_a_day(raw: str) -> str | None:
    """"I start at Dell", not "I start at Monday" or "at Noon": a capitalised day or month is no employer."""
    return None if raw.rstrip(".!?,").lower() in _DAYS_AND_MONTHS else raw


_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_MONTH_NAME = r"(" + "|".join(_MONTHS) + r")"
_DAY_OF_YEAR = (rf"(?:{_MONTH_NAME}\s+(\d{{1,2}})(?:st|nd|rd|th)?\b|(?:the\s+)?(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?"
                rf"{_MONTH_NAME}\b)")
# Foods one keeps out: "I don't eat meat" is a diet, "I don't eat breakfast" is not.
_AVOIDED = r"(meat|red\s+meat|pork|beef|fish|seafood|dairy|eggs|gluten|sugar|spicy\s+food)"
_NAMED_DIET = re.compile(r"\b(?:vegetarian|vegan|pescatarian|pescetarian|keto|paleo)\b", re.IGNORECASE)


def _birthday(match: re.Match[str]) -> Emit:
    """The month and day of a birthday, "October 28", whichever order it was said in."""
    month, day = (match.group(1), match.group(2)) if match.group(1) else (match.group(4), match.group(3))
    return [("birthday", f"{month.capitalize()} {int(day)}")] if 1 <= int(day) <= 31 else []


def _job_in_lexicon(raw: str) -> str | None:
    job = _job(raw)
    return job if job and _head_ok(job) else None


def _job_at(match: re.Match[str]) -> Emit:
    """"I'm a UX designer at Amazon": the job and its employer, both or neither ("I'm a regular at Joe's" names
    no job); a student's school is not an employer."""
    job = _job_in_lexicon(match.group(1))
    if job is None:
        return []
    return [("occupation", job)] + ([] if job.split()[-1].lower() in ("student", "students") else
                                    [("employer", match.group(2))])


def _head_ok(job: str) -> bool:
    words = job.lower().split()
    head = words[-1]
    if head in {"mom", "mum", "dad", "parent", "mother", "father"}:
        return words[0] in {"full-time", "stay-at-home", "homeschooling"}
    return head in OCCUPATIONS or (head.endswith("s") and head[:-1] in OCCUPATIONS)


def _place(raw: str) -> str | None:
    words = raw.split()
    while words and words[-1].lower() in {"on", "de", "del", "do", "da", "am", "upon"}:
        words.pop()
    return " ".join(words) or None


def _langs(match: re.Match[str]) -> Emit:
    names = [re.sub(rf"^{_LANG_HOW}", "", name, flags=re.IGNORECASE)
             for name in re.split(r"\s*,\s*|,?\s+and\s+", match.group(1))]
    return [("languages_spoken", code) for name in names if (code := language_code(name))]


def _pet(match: re.Match[str]) -> Emit:
    return _pet_named(match.group(1), match.group(2) if match.lastindex and match.lastindex >= 2 else None)


def _pet_named(animal: str, name: str | None) -> Emit:
    animal = _PET_SINGULAR.get(animal.lower(), animal.lower())
    return [("pets", f"{animal} ({name})" if name else animal)]


# How much or since when, and which above all: said around a taste, never part of it ("I like jazz lately,
# especially Norah Jones" is jazz and Norah Jones, not "jazz lately" and "especially Norah Jones").
_LIKE_TAIL = re.compile(r"\s+(?:lately|recently|nowadays|these\s+days|a\s+lot|so\s+much|very\s+much|too)$",
                        re.IGNORECASE)
_LIKE_HEAD = re.compile(r"^(?:especially|particularly|mostly|mainly|above\s+all)\s+", re.IGNORECASE)


def _likes(match: re.Match[str]) -> Emit:
    out: Emit = []
    for part in re.split(r"\s*,\s*|\s+and\s+|\s+or\s+", match.group(1).strip()):
        words = _LIKE_HEAD.sub("", _LIKE_TAIL.sub("", part)).split()
        # "I love the new design" is about something in front of the user, not a lasting taste: review it.
        specific = bool(words) and words[0].lower() in {"the", "this", "these"}
        if words and words[0].lower() in {"the", "a", "an"}:
            words = words[1:]
        lowered = [w.lower() for w in words]
        if not words or lowered[0] in LIKE_NOISE or lowered[-1] in LIKE_NOISE or len(words) > 4:
            return []
        value = " ".join(words)
        out.append(("likes", value, 0.6) if specific else ("likes", value))
    return out


# A sentence that opens on the speaker ("I'm…", "Me, I…", "Big fan of…"): its later subjectless clauses are theirs.
_FIRST_PERSON_START = re.compile(r"^\W*(?:(?:honestly|tbh|also|and|but|oh|well|so|ok|okay|anyway|btw),?\s+)*"
                                 r"(?:i\b|i'm\b|i’m\b|im\b|me\b|(?:a\s+)?(?:huge|big|massive|great)\s+fan\s+of\b"
                                 r"|not\s+(?:really\s+)?(?:a|much\s+of\s+a)\s+(?:huge\s+|big\s+)?fan\s+of\b)",
                                 re.IGNORECASE)


def _first_person(sentence: str) -> bool:
    return bool(_FIRST_PERSON_START.match(sentence))


def _favorite(match: re.Match[str], value_group: int = 2, what_group: int = 1) -> Emit:
    what = re.sub(r"[^a-z0-9]+", "_", match.group(what_group).lower()).strip("_")
    # The user's own casing: it names things ("the Beatles", "an iPhone", "AC/DC"); lowering a value that
    # opened in lower case made "the beatles" and "iphone".
    return [(f"favorite_{what}", match.group(value_group).strip())] if what else []


_ID_KEYS = {
    "phone": "phone_number", "mobile": "phone_number", "cell": "phone_number", "email": "email", "e-mail": "email",
    "card": "card_number", "credit card": "card_number", "debit card": "card_number", "bank card": "card_number",
    "passport": "passport_number", "id": "id_number", "iban": "iban", "snils": "snils",
    "social security": "ssn",
}


def _identifier(match: re.Match[str]) -> Emit:
    kind = re.sub(r"\s+(?:number|address)$", "", match.group(1).lower())
    key = _ID_KEYS.get(kind)
    return [(key, match.group(2).strip())] if key else []


def _r(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_NOW = _r(r"\bnow\b")
# "Now I'm a UX designer", "these days I work as a barista": the job said as the one of today, not of before.
_NOW_JOB = _r(r"\b(?:now|nowadays|these\s+days)\b")
# Kinds of workplace one quits by their kind ("I quit the hospital"): the employer whose name ends in it.
WORKPLACES = (r"(hospital|clinic|school|college|university|company|firm|bank|agency|office|store|shop|restaurant"
              r"|cafe|café|bakery|factory|startup|studio|lab|library|museum|hotel|practice|department|ministry)")
# "I got hired", "I've been hired": a new job, said of its start ("I was hired as a waiter once" may be long gone).
HIRED = r"(?:got|(?:have\s+)?been)\s+hired"
_ADV_DONE = r"(?:(?:just|finally|recently|officially|already|actually)\s+)*"
# "I retired my old laptop" retires a thing, not the user.
_NOT_RETIRING = r"(?!\s+(?:my|the|his|her|our|their|a|an|this|that|it|them)\b)"


def _ended_any(_match: re.Match[str]) -> Emit:
    return [("employer", "")]


RULES: tuple[Rule, ...] = (
    # name
    Rule("en.name.my_name_is", _r(rf"\bmy\s+name(?:'s|’s|s|\s+is)\s+({NAME_ANY})"), one("name", transform=_name), 0.9),
    Rule("en.name.call_me", _r(rf"(?:^|[,;]\s*|\b(?:just|please|you\s+can|everyone|people|friends)\s+)call(?:s)?\s+me"
                               rf"\s+({NAME_CAP})\b"), one("name", transform=_name), 0.85),
    Rule("en.name.called", _r(rf"\b(?:{I_AM}\s+called|i\s+go\s+by)\s+({NAME_CAP})"),
         one("name", transform=_name), 0.85),
    Rule("en.name.i_am", _r(rf"\b{I_AM}\s+({NAME_CAP})(?=\s*(?:$|[,.!;]|and\b|from\b|here\b|btw\b|by\s+the\s+way))"),
         one("name", transform=_name), 0.75),
    Rule("en.name.here", _r(rf"^\W*(?:(?:hi|hello|hey)(?:\s+there)?\W+)?({NAME_CAP})\s+here\b(?=\s*(?:$|[,.!;]))"),
         one("name", transform=_name), 0.75),
    Rule("en.name.this_is", _r(rf"^\W*(?:(?:hi|hello|hey)\W+)?this\s+is\s+({NAME_CAP})\s+(?:speaking|here)\b"),
         one("name", transform=_name), 0.8),
    # "hey, it's Marcus.": a greeting that says who writes, the name and nothing after it.
    Rule("en.name.its", _r(rf"^\W*(?:hi|hello|hey|yo)(?:\s+there)?\W+it(?:'s|’s|\s+is)\s+({NAME_CAP})\s*"
                           rf"(?:here\s*)?[.!]*$"),
         one("name", transform=lambda v: None if v.lower() in _NOT_WRITERS else _name(v)), 0.75),
    # age
    Rule("en.age.i_am_n", _r(rf"\b{I_AM}\s+{ADV}(\d{{1,3}}|{NUM_WORD})(?:\s*(?:years?|yrs?)(?:\s+old)?|\s*y\.?o\.?"
                             rf"|-years?-old)?(?=\s*(?:$|[,.!;)]|and\b|but\b|lol\b|now\b|btw\b|so\b|too\b|haha\b|"
                             rf"myself\b|this\s+year\b))"), one("age", transform=_age), 0.85),
    Rule("en.age.after_name", _r(rf"\b{I_AM}\s+{NAME_CAP}\s*,\s*(\d{{1,3}})"
                                 rf"(?=\s*(?:$|[,.!;]|and\b|years?\b|y\.?o\.?))"),
         one("age"), 0.8),
    Rule("en.age.year_old_job", _r(rf"\b{I_AM}\s+(?:a|an)\s+(\d{{1,3}})[\s-]years?[\s-]old\s+{NP}{NP_END}"),
         lambda m: [("age", m.group(1))] + ([("occupation", job)] if (job := _job_in_lexicon(m.group(2))) else []),
         0.85),
    Rule("en.age.turned", _r(r"(?:\bi\s+|^\W*)(?:just\s+|recently\s+|have\s+just\s+|'ve\s+just\s+)?turned\s+"
                             r"(\d{1,3})\b(?!\s*(?:%|percent|degrees|times|minutes|hours|pages))"),
         one("age"), 0.85),
    Rule("en.age.my_age", _r(r"\bmy\s+age\s+is\s+(\d{1,3})\b"), one("age"), 0.9),
    # "my birthday is October 28", "my bday is on the 3rd of May", "I was born on May 3": the day, as a month and day.
    Rule("en.birthday", _r(rf"(?:\bmy\s+(?:birthday|bday|b-day)\s+is|\bi\s+was\s+born)\s+(?:on\s+)?{_DAY_OF_YEAR}"),
         _birthday, 0.85),
    # occupation, employer, diet
    Rule("en.job.i_am_a", _r(rf"\b{I_AM}\s+{ADV}(?:a|an)\s+{NP}{NP_END}"), one("occupation", transform=_job_in_lexicon),
         0.85, change_when=_NOW_JOB),
    # "I'm Jen, a teacher from Leeds": the job after the name.
    Rule("en.job.name_a", _r(rf"\b{I_AM}\s+{NAME_CAP}\s*,\s*(?:a|an)\s+{NP}{NP_END}"),
         one("occupation", transform=_job_in_lexicon), 0.8),
    # "I'm retired now", "I retired last year": no job now, and that is what a chat needs to know.
    Rule("en.job.retired", _r(rf"(?:\b{I_AM}\s+{ADV}(?:now\s+)?(?:happily\s+|finally\s+)?|\bi(?:'ve|’ve|\s+have)?\s+"
                              rf"{_ADV_DONE})retired\b{_NOT_RETIRING}"),
         lambda _m: [("occupation", "retired")], 0.85, change=True),
    Rule("en.employer.retired", _r(rf"\bi(?:'ve|’ve|\s+have)?\s+{_ADV_DONE}retired\b{_NOT_RETIRING}"), _ended_any, 0.8,
         ends=True),
    # "Been a plumber for twenty years": the subject left out at the start of a message or clause.
    Rule("en.job.been_a", _r(rf"(?:\bi(?:'ve|’ve|\s+have)|(?:^|[,;]\s*)\W*)\s*been\s+(?:a|an)\s+{NP}"
                             rf"\s+(?:for|since)\b"),
         one("occupation", transform=_job_in_lexicon), 0.8),
    # "I've been a software engineer at Shopify for three years": the job and where, held for a while and still.
    Rule("en.job.been_a_at", _r(rf"\bi(?:'ve|’ve|\s+have)\s+{ADV}been\s+(?:a|an)\s+{NP}\s+(?:at|with|for)\s+"
                                rf"(?:the\s+)?({ORG})\s+(?:for|since)\b"),
         _job_at, 0.8),
    # "I've worked as a nurse for ten years", "I have been working as a chef at Nobu since 2019": a job held until
    # now. Without "for" or "since" it may be one held once ("I've worked as a waiter, it was awful").
    Rule("en.job.have_worked_as", _r(rf"\bi(?:'ve|’ve|\s+have)\s+{ADV}(?:worked|been\s+working)\s+as\s+"
                                     rf"(?:(?:a|an|the)\s+)?{NP}(?:\s+(?:at|in|for|with)\s+[^,.;!?]{{1,40}}?)?"
                                     rf"\s+(?:for|since)\b"),
         one("occupation", transform=_job_in_lexicon), 0.8),
    # "I teach high school chemistry": the level of school before the subject is no subject; nor is a word that
    # says where, whom or how ("I teach at Stanford" was an "at teacher", "I teach my kids at home" a "my teacher").
    Rule("en.job.teach", _r(r"\bi\s+(?:currently\s+|now\s+)?teach\s+(?:(?:high|middle|elementary|primary|secondary"
                            r"|grade|grad)\s+school\s+)?(?!(?:at|in|on|for|to|from|with|online|part|full|my|your|his|her"
                            r"|our|their|the|a|an|this|that|them|him|us|it|there|here|kids|children|people|students"
                            r"|classes|class)\b)([a-z]+)\b(?!\s+(?:myself|me|you))"),
         one("occupation", transform=lambda subject: said_case(f"{subject.lower()} teacher", subject)), 0.75,
         change_when=_NOW_JOB),
    # "I teach math at Lincoln High in Portland": where the teacher teaches is whom they work for (a place
    # after "in" may be a town: not this rule's).
    Rule("en.employer.teach_at", _r(rf"\bi\s+(?:currently\s+|now\s+)?teach\s+(?:[a-z]+\s+){{0,4}}?at\s+(?:the\s+)?"
                                    rf"({ORG})"),
         one("employer"), 0.8, change_when=_NOW_JOB),
    # "I work in Boston as a nurse", "I work at a hospital in Leeds as a nurse", "I work nights as…": where or
    # when comes before the job.
    Rule("en.job.work_as", _r(rf"\bi\s+{ADV}(?:work{WORK_WHERE}|(?:make|earn)\s+(?:a|my)\s+living)\s+as\s+"
                              rf"(?!{AS_MUCH_AS})(?:(?:a|an|the)\s+)?{NP}{NP_END}"),
         one("occupation", transform=_job), 0.9, change_when=_NOW_JOB),
    Rule("en.job.who_works_as", _r(rf"{I_WHO}works\s+as\s+(?:a|an)\s+{NP}{NP_END}"),
         one("occupation", transform=_job), 0.8, change_when=_NOW_JOB),
    Rule("en.job.and_work_as", _r(rf"{AND_I}{ADV}work\s+as\s+(?:(?:a|an|the)\s+)?{NP}{NP_END}"),
         one("occupation", transform=_job), 0.85, change_when=_NOW_JOB),
    Rule("en.job.and_a", _r(rf"\b{I_AM}\s+(?:(?!\b(?:with|to|of|for|like)\b)[^.;!?]){{1,40}}?\band\s+(?:a|an)\s+"
                            rf"{NP}{NP_END}"),
         one("occupation", transform=_job_in_lexicon), 0.8, change_when=_NOW_JOB),
    # "I work in sales as a manager": the job after "as" says more (en.job.work_as).
    Rule("en.job.work_in_field", _r(rf"\bi\s+{ADV}work\s+in\s+{FIELDS}\b(?!\s+as\b)"),
         lambda m: [("occupation", m.group(1) if m.group(1).isupper() else m.group(1).lower())], 0.8),
    # "I'm a UX designer at Amazon", "I'm a nurse with the NHS".
    Rule("en.job.i_am_a_at", _r(rf"\b{I_AM}\s+{ADV}(?:a|an)\s+{NP}\s+(?:at|for|with)\s+(?:the\s+)?({ORG})"),
         _job_at, 0.85, change_when=_NOW_JOB),
    Rule("en.job.working_at_as", _r(rf"(?:^\W*(?:currently\s+|now\s+)?working|\b{I_AM}\s+{ADV}working|\bi\s+{ADV}work"
                                    rf"|{I_HAVE_BEEN}working)\s+(?:at|for)\s+(?:the\s+)?({ORG})"
                                    rf"(?:\s+(?:for|since)\s+[\w\s]{{1,25}}?)?\s+as\s+(?:(?:a|an|the)\s+)?{NP}{NP_END}"),
         # Both or neither: "Working at Google as an engineer was fun" names no job of today.
         lambda m: [("employer", m.group(1)), ("occupation", job)] if (job := _job_in_lexicon(m.group(2))) else [],
         0.85, change_when=_NOW_JOB),
    Rule("en.employer.working_at", _r(rf"(?:^\W*(?:currently\s+|now\s+)?(?:been\s+)?working|\b{I_AM}\s+{ADV}working"
                                      rf"|{I_HAVE_BEEN}working){WORK_WHERE}\s+(?:at|for)\s+(?:the\s+)?({ORG}){PLACE_END}"),
         one("employer"), 0.8, change_when=_NOW_JOB),
    Rule("en.job.my_job_is", _r(rf"\bmy\s+(?:job(?:\s+title)?|profession|occupation|role)\s+is\s+(?:(?:a|an)\s+)?{NP}"
                                rf"{NP_END}"), one("occupation", transform=_job), 0.9, change_when=_NOW_JOB),
    Rule("en.job.by_profession", _r(rf"\bby\s+(?:profession|trade),?\s+{I_AM}\s+(?:(?:a|an)\s+)?{NP}{NP_END}"),
         one("occupation", transform=_job), 0.9, change_when=_NOW_JOB),
    # "I'm a nurse, work night shifts at Mercy Hospital": a later clause with no subject, in a sentence about "I".
    Rule("en.employer.work_at_clause", _r(rf"[,;]\s*(?:and\s+)?work{WORK_WHERE}\s+(?:at|for)\s+(?:the\s+)?({ORG})"),
         lambda m: [("employer", m.group(1))] if _first_person(m.string) else [], 0.75),
    Rule("en.employer.work_at", _r(rf"\bi\s+{ADV}work\s+(?:as\s+[^,.;!?]{{1,40}}?\s+)?(?:at|for)\s+({ORG})"),
         one("employer"), 0.85, change_when=_NOW_JOB),
    Rule("en.diet", _r(rf"(?:\b{I_AM}\s+|{I_HAVE_BEEN}){ADV}(?:(?:a|on\s+a)\s+)?(?:strict\s+)?{DIETS}"
                       rf"(?:\s+(?:for|since)\s+[\w\s]{{1,20}}?)?{DIET_END}"),
         one("diet", transform=str.lower), 0.85),
    Rule("en.diet.eat", _r(rf"\bi\s+{ADV}(?:eat|keep|follow|go)\s+(?:a\s+)?(?:strict\s+)?{DIETS}{DIET_END}"),
         one("diet", transform=str.lower), 0.8),
    # "I don't eat meat", "I never eat pork": what they keep out of their food.
    # A diet the sentence names ("I don't eat meat, I'm vegetarian") is the value.
    Rule("en.diet.no", _r(rf"\bi\s+(?:(?:just|really|also|still)\s+)?(?:don't|don’t|do\s+not|never|no\s+longer)"
                          rf"\s+eat\s+{_AVOIDED}(?:\s+(?:anymore|at\s+all))?{DIET_END}"),
         lambda m: [] if _NAMED_DIET.search(m.string) else [("diet", f"no {m.group(1).lower()}")], 0.8),
    # where they live and come from
    # "I live with my girlfriend in Austin": with whom may come between.
    Rule("en.location.live_in", _r(rf"\bi\s+{ADV}(?:live|reside)(?:\s+with\s+(?:my\s+)?[a-z\-]+(?:\s+{NAME_CAP})?)?"
                                   rf"\s+in\s+(?:the\s+)?({PLACE})"),
         one("location", transform=_place), 0.9, change_when=_NOW),
    Rule("en.location.who_lives_in", _r(rf"{I_WHO}(?:lives|resides)\s+in\s+(?:the\s+)?({PLACE})"),
         one("location", transform=_place), 0.8),
    Rule("en.location.and_live_in", _r(rf"{AND_I}{ADV}(?:live|reside)\s+in\s+(?:the\s+)?({PLACE})"),
         one("location", transform=_place), 0.85),
    Rule("en.location.we_live_in", _r(rf"\b(?:we|(?:me|i)\s+and\s+my\s+[a-z\-]+|my\s+[a-z\-]+\s+and\s+(?:i|me))\s+"
                                      rf"{ADV}(?:live|reside)\s+in\s+(?:the\s+)?({PLACE})"),
         one("location", transform=_place), 0.8),
    Rule("en.location.been_living", _r(rf"\bi(?:'ve|’ve|\s+have)\s+(?:been\s+living\s+in\s+(?:the\s+)?({PLACE})"
                                       rf"|lived\s+in\s+(?:the\s+)?({PLACE})(?=\s+(?:for|since)\b))"),
         lambda m: [("location", _place(m.group(1) or m.group(2)))], 0.8),
    Rule("en.location.based_in", _r(rf"\b{I_AM}\s+{ADV}(?:living|based|located|residing)\s+in\s+(?:the\s+)?({PLACE})"),
         one("location", transform=_place), 0.9),
    # "Just moved to Seattle!": the subject left out at the start of a sentence, or of a later clause in a sentence
    # that opens on the speaker ("I'm Kate, moved to Lisbon last year"; not "My sister Anna, moved to…").
    Rule("en.location.moved_to", _r(rf"(?:\b(?:i|we)(?:'ve|’ve)?\s+|(^|[,;]\s*)\W*(?:(?:so|well|oh|btw|also|and|"
                                    rf"anyway)\W+)*)(?:(?:just|recently|finally|have|already|also)\s+)*"
                                    rf"(?:moved|relocated)\s+(?:back\s+)?to\s+(?:the\s+)?({PLACE})"),
         lambda m: [] if m.group(1) is not None and m.start() > 0 and not _first_person(m.string)
         else [("location", _place(m.group(2)))], 0.8, change=True),
    # "I just moved to Portland for a job at Nike", "We relocated to Austin for my new job at Dell", "Moved to Seattle
    # to work at Amazon": the move's reason is the new employer (a QA pass: only the city was kept).
    Rule("en.employer.moved_for_job", _r(rf"(?:\b(?:i|we)(?:'ve|’ve)?\s+|^\W*)(?:(?:just|recently|finally|have|"
                                         rf"already|also)\s+)*(?:moved|relocated)\s+(?:back\s+)?(?:here\s+|to\s+"
                                         rf"[^,.;!?]{{1,40}}?\s+)(?:for\s+(?:a|my|the)\s+(?:new\s+)?(?:job|position|"
                                         rf"role)\s+(?:at|with)|to\s+(?:work|start)\s+(?:at|for|with))\s+(?:the\s+)?"
                                         rf"({ORG})"),
         one("employer"), 0.8, change=True),
    # "I started a new job as a UX designer at Amazon": the job may come between.
    Rule("en.employer.new_job", _r(rf"\bi(?:'ve|’ve)?\s+(?:(?:just|recently|finally|have)\s+)*(?:started\s+"
                                   rf"(?:a\s+new\s+job|working)|(?:got|landed|took)\s+a\s+(?:new\s+)?job|{HIRED})"
                                   rf"(?:\s+as\s+(?:a|an|the)\s+[^,.;!?]{{1,40}}?)?\s+(?:at|for|with)\s+({ORG})"),
         one("employer"), 0.8, change=True),
    Rule("en.job.new_job", _r(rf"\bi(?:'ve|’ve)?\s+(?:(?:just|recently|finally|have)\s+)*(?:(?:started|got|landed|took"
                              rf"|accepted)\s+a\s+(?:new\s+)?(?:job|position|role)|{HIRED})\s+as\s+(?:a|an|the)\s+"
                              rf"{NP}{NP_END}"),
         one("occupation", transform=_job), 0.8, change=True),
    # "I got a job at Microsoft as a data scientist", "I got hired by Stripe as an engineer": where, then the job.
    Rule("en.job.new_job_at_as", _r(rf"\bi(?:'ve|’ve)?\s+(?:(?:just|recently|finally|have|officially)\s+)*"
                                    rf"(?:(?:started|got|landed|took|accepted)\s+a\s+(?:new\s+)?(?:job|position|role)"
                                    rf"|started\s+working|{HIRED})\s+(?:at|with|by)\s+(?:the\s+)?({ORG})\s+as\s+"
                                    rf"(?:a|an|the)\s+{NP}{NP_END}"),
         lambda m: [("employer", m.group(1)), ("occupation", job)] if (job := _job_in_lexicon(m.group(2))) else [],
         0.8, change=True),
    # "I started at Morningstar", "I've just joined Stripe": a new employer, said as the change it is.
    Rule("en.employer.started_at", _r(rf"\bi(?:'ve|’ve)?\s+(?:(?:just|recently|finally|have|officially)\s+)*"
                                      rf"(?:started\s+at|joined)\s+(?:the\s+)?({ORG}){PLACE_END}"),
         one("employer"), 0.8, change=True),
    # "I start at Dell on Monday", "I'm starting at Dell as a product manager": a job about to begin is the user's.
    Rule("en.employer.starting_at", _r(rf"{_STARTING}({ORG})(?=\s*(?:$|[,.;!]|{_SOON}|as\b))"),
         one("employer", transform=_not_a_day), 0.8, change=True),
    Rule("en.job.starting_at_as", _r(rf"{_STARTING}({ORG})(?:\s+{_SOON})?\s+as\s+(?:a|an|the)\s+{NP}{NP_END}"),
         lambda m: [("employer", org), ("occupation", job)]
         if (org := _not_a_day(m.group(1))) and (job := _job_in_lexicon(m.group(2))) else [], 0.8, change=True),
    # "I got promoted to charge nurse at Providence": the job of now, and where.
    Rule("en.job.promoted", _r(rf"{_PROMOTED}{NP}{NP_END}"),
         one("occupation", transform=_job_in_lexicon), 0.8, change=True),
    Rule("en.employer.promoted_at", _r(rf"{_PROMOTED}{NP}\s+at\s+(?:the\s+)?({ORG})"),
         lambda m: [("employer", m.group(2))] if _job_in_lexicon(m.group(1)) else [], 0.8, change=True),
    # "I quit Google", "I left my job at Mass General": that employer is no longer the user's.
    Rule("en.employer.quit", _r(rf"\bi(?:'ve|’ve|\s+have)?\s+{_ADV_DONE}(?:quit|left|resigned\s+from)\s+(?:my\s+"
                                rf"(?:old\s+|last\s+|previous\s+)?(?:job|position|role)\s+(?:at|with)\s+)?(?:the\s+)?"
                                rf"({ORG})"),
         one("employer"), 0.8, ends=True),
    # "I quit the hospital": the employer by its kind (leaving one may be a visit: only quitting counts).
    Rule("en.employer.quit_kind", _r(rf"\bi(?:'ve|’ve|\s+have)?\s+{_ADV_DONE}(?:quit|resigned\s+from)\s+(?:the|my)\s+"
                                     rf"(?:old\s+|last\s+|previous\s+)?{WORKPLACES}\b"),
         one("employer", transform=str.lower), 0.8, ends=True),
    # "I quit my job", "I resigned": whichever employer the user had.
    Rule("en.employer.quit_job", _r(rf"\bi(?:'ve|’ve|\s+have)?\s+{_ADV_DONE}(?:(?:quit|left|resigned\s+from)\s+my\s+"
                                    rf"(?:old\s+|last\s+|previous\s+|day\s+)?(?:job|work|position|employer)\b"
                                    rf"(?!\s+(?:at|with)\s+(?:the\s+)?(?-i:[A-Z]))"
                                    rf"|resigned\b(?!\s+(?:from|myself|to)\b))"),
         _ended_any, 0.8, ends=True),
    # "I accepted an offer from Lumen Health": the next employer, said as the change it is.
    Rule("en.employer.accepted_offer", _r(rf"\bi(?:'ve|’ve|\s+have)?\s+(?:(?:just|finally|officially)\s+)?accepted\s+"
                                          rf"(?:an?\s+|the\s+)?(?:(?:job|work)\s+)?(?:offer|job|position|role)\s+"
                                          rf"(?:from|at|with)\s+(?:the\s+)?({ORG})"),
         one("employer"), 0.8, change=True),
    Rule("en.hometown.from", _r(rf"\b{I_AM}\s+(?:originally\s+)?from\s+(?:the\s+)?({PLACE})"),
         one("hometown", transform=_place), 0.85),
    Rule("en.hometown.x_from", _r(rf"\b{I_AM}\s+(?:{NAME_CAP}|(?:{NAME_CAP}\s*,\s*)?(?:a|an)\s+(?:[\w\-]+\s+){{0,4}}?"
                                  rf"[a-z\-]+)\s+from\s+"
                                  rf"(?:the\s+)?({PLACE})"), one("hometown", transform=_place), 0.8),
    Rule("en.hometown.born_clause", _r(rf"(?:^|[,;]\s*)(?:born(?:\s+and\s+raised)?|raised|grew\s+up)\s+in\s+"
                                       rf"(?:the\s+)?({PLACE})(?=\s*(?:$|[,.;!]))"), one("hometown", transform=_place),
         0.8),
    Rule("en.location.living_clause", _r(rf"(?:^|[,;]\s*)(?:now\s+|currently\s+)?(?:living|based)\s+in\s+(?:the\s+)?"
                                         rf"({PLACE}){PLACE_END}"), one("location", transform=_place), 0.8),
    Rule("en.hometown.born", _r(rf"\bi\s+(?:come\s+from|was\s+born\s+(?:and\s+raised\s+)?in|grew\s+up\s+in)\s+"
                                rf"(?:the\s+)?({PLACE})"), one("hometown", transform=_place), 0.85),
    # "I grew up in Ohio but I'm in Texas now": against where they come from, "in X now" is where they live
    # (alone, "I'm in Texas now" may be a trip).
    Rule("en.location.but_in_now", _r(rf"\b(?:grew\s+up|was\s+born|(?:come|{I_AM}\s+(?:originally\s+)?)from)\b"
                                      rf"[^.;!?]{{1,40}}?\bbut\s+{I_AM}\s+(?:now\s+)?in\s+(?:the\s+)?({PLACE})"
                                      rf"\s+(?:now|these\s+days|nowadays)\b"),
         one("location", transform=_place), 0.8),
    Rule("en.hometown.my_hometown", _r(rf"\bmy\s+home\s*town\s+is\s+({PLACE})"), one("hometown", transform=_place),
         0.9),
    # language preference and languages spoken
    Rule("en.lang_pref.imperative", _r(rf"(?:^|[,;:]\s*|\bplease\s+|\band\s+)(?:answer|reply|respond|write|talk|speak"
                                       rf"|chat)(?:\s+(?:to\s+|with\s+)?me)?(?:\s+only)?\s+in\s+({LANG})"),
         one("language_preference", transform=language_code), 0.85),
    Rule("en.lang_pref.polite", _r(rf"^\W*(?:please\s+)?(?:can|could|would|will)\s+you\s+(?:please\s+)?(?:answer|reply"
                                   rf"|respond|write|talk|speak|chat)(?:\s+(?:to|with)\s+me)?\s+in\s+({LANG})"),
         one("language_preference", transform=language_code), 0.8, allow_question=True),
    Rule("en.lang_pref.prefer", _r(rf"\bi\s+(?:would\s+|'d\s+)?prefer\s+(?:(?:to\s+)?(?:talk|speak|chat|communicate"
                                   rf"|write)(?:ing)?\s+in\s+)?({LANG})\b"),
         one("language_preference", transform=language_code), 0.85),
    Rule("en.lang_pref.preferred", _r(rf"\bmy\s+preferred\s+language\s+is\s+({LANG})"),
         one("language_preference", transform=language_code), 0.9),
    Rule("en.lang_pref.lets", _r(rf"\blet'?s\s+(?:talk|speak|chat|switch\s+to|continue)\s+(?:in\s+)?({LANG})"),
         one("language_preference", transform=language_code), 0.8),
    Rule("en.languages.speak", _r(rf"\bi\s+(?:(?:also|mostly|mainly|usually|primarily|generally|normally|often"
                                  rf"|fluently)\s+|can\s+(?:also\s+)?)?speak\s+(?:fluent\s+"
                                  rf"|a\s+(?:little|bit)\s+(?:of\s+)?|some\s+|basic\s+|conversational\s+)?{LANGS}"),
         _langs, 0.85),
    Rule("en.languages.grew_up", _r(rf"\bi\s+grew\s+up\s+speaking\s+{LANGS}"), _langs, 0.85),
    Rule("en.languages.fluent", _r(rf"\b{I_AM}\s+fluent\s+in\s+{LANGS}"), _langs, 0.85),
    Rule("en.languages.native", _r(rf"\b(?:my\s+(?:native|first|mother)\s+(?:language|tongue)\s+is|{I_AM}\s+a\s+"
                                   rf"native)\s+{LANGS}"), _langs, 0.85),
    # time zone
    Rule("en.tz.my_timezone", _r(rf"\bmy\s+time\s*zone\s+is\s+(?:{TZ_STRICT}|{TZ_WORD})"),
         lambda m: [("preferred_timezone", m.group(1) or m.group(2))], 0.9),
    Rule("en.tz.i_am_in", _r(rf"\b{I_AM}\s+(?:in|on)\s+(?:the\s+)?(?:{TZ_STRICT}(?:\s+time(?:\s*zone)?)?|{TZ_WORD})"),
         lambda m: [("preferred_timezone", m.group(1) or m.group(2))], 0.85),
    # pets and likes
    # "We have a dog named Max", "Our dog Max got sick": a family's pet is the user's too.
    Rule("en.pets.have", _r(rf"\b(?:i|we)(?:\s+also)?(?:\s+(?:have|own)|'ve|’ve)(?:\s+(?:also\s+)?got)?\s+"
                            rf"(?:a|an|one|two|three|four|five|\d+|some)\s+(?:(?:little|small|big|old|young|cute|pet|black|white|ginger|grey|gray)\s+)*"
                            rf"{PET}(?:s|es)?\b(?:\s*,?\s+(?:named|called)\s+({NAME_CAP}))?"), _pet, 0.85),
    # "We adopted a puppy named Biscuit", "I just got a kitten, her name is Luna": a pet taken in is the user's. Not
    # what goes with one ("I got a dog bed").
    Rule("en.pets.adopted", _r(rf"\b(?:i|we)(?:'ve|’ve|\s+have)?\s+(?:(?:just|recently|finally|also|officially)\s+)*"
                               rf"(?:adopted|got|rescued|brought\s+home|took\s+in)\s+(?:a|an|one|two|three|\d+|"
                               rf"(?:a\s+)?new)\s+(?:(?:little|small|big|old|young|cute|rescue|baby|black|white|ginger|"
                               rf"grey|gray|new)\s+)*{PET}(?:s|es)?\b(?!\s+(?:toy|toys|bed|food|treats?|bowl|leash|collar|"
                               rf"sitter|walker|cage|carrier|house|door|park|show|tag)\b)(?:\s*,?\s+(?:named|called)\s+"
                               rf"({NAME_CAP})|\s*[,;—–-]\s*(?:his|her|its|their)\s+name\s+is\s+({NAME_CAP}))?"),
         lambda m: _pet_named(m.group(1), m.group(2) or m.group(3)), 0.8),
    Rule("en.pets.my_pet_name", _r(rf"\b(?:my|our)\s+(?:(?:little|old|young)\s+)?{PET}\s+({NAME_CAP})\b"), _pet, 0.8),
    Rule("en.pets.my_pets_name", _r(rf"\b(?:my|our)\s+{PET}(?:'s|’s\s+name\s+is|'s\s+name\s+is|"
                                    rf"\s+is\s+(?:called|named))\s+({NAME_CAP})"), _pet, 0.8),
    # "my hobbies are hiking and chess": the key names itself.
    Rule("en.hobbies.my", _r(r"\bmy\s+(?:main\s+|favou?rite\s+|only\s+)?hobb(?:y|ies)\s+(?:is|are|include|=|:)\s*"
                             r"([a-z][a-z\s,\-]{1,60}?)(?=\s*(?:$|[.!;]|\bbut\b|\bbecause\b|\bwhen\b|\bso\b))"),
         lambda m: [("hobbies", *rest) for _key, *rest in _likes(m)], 0.85),
    Rule("en.likes.love", _r(r"\bi\s+(?:really\s+|absolutely\s+|just\s+|also\s+|totally\s+)?(?:love|like|enjoy|adore)"
                             r"\s+([a-z][a-z\s,\-]{1,60}?)(?=\s*(?:$|[.!;]|\bbut\b|\bbecause\b|\bwhen\b|\bif\b|\bso\b"
                             r"|\bwith\b))"), _likes, 0.75),
    Rule("en.likes.fan_of", _r(rf"\b{I_AM}\s+(?:a\s+)?(?:huge\s+|big\s+|great\s+)?fan\s+of\s+([a-z][a-z\s\-]{{1,40}}?)"
                               rf"(?=\s*(?:$|[,.!;]|\bbut\b|\band\b))"), _likes, 0.75),
    # "I'm more of a dog person", "…, more of a cat person": a taste, said loosely.
    Rule("en.likes.person", _r(rf"(?:\b{I_AM}\s+|[,;]\s*)(?:(?:more\s+of|definitely|totally|such|really)\s+)?a\s+"
                               rf"(?:(?:big|huge|real|total)\s+)?([a-z]+)\s+person\b"),
         lambda m: [("likes", m.group(1).lower(), 0.7)] if _first_person(m.string) and m.group(1).lower()
         not in NOT_A_TASTE | LIKE_NOISE else [], 0.7),
    # "Big fan of jazz, can't stand rap": a subjectless opening, as "Not a fan of…" is for dislikes.
    Rule("en.likes.fan_clause", _r(r"^\W*(?:(?:honestly|tbh|also),?\s+)?(?:a\s+)?(?:huge|big|massive|great)\s+"
                                   r"fan\s+of\s+([a-z][a-z\s\-]{1,40}?)(?=\s*(?:$|[,.!;]|\bbut\b|\band\b))"), _likes,
         0.75),
    # "I'm Lucia, love hiking, can't stand loud music": a later clause with no subject, in a sentence about "I".
    Rule("en.likes.clause", _r(r"[,;]\s*(?:and\s+)?(?:really\s+|absolutely\s+|totally\s+)?(?:love|enjoy|adore)\s+"
                               r"([a-z][a-z\s\-]{1,40}?)(?=\s*(?:$|[,.!;]|\bbut\b|\bbecause\b))"),
         lambda m: _likes(m) if _first_person(m.string) else [], 0.7),
    Rule("en.dislikes.clause", _r(r"[,;]\s*(?:and\s+)?(?:really\s+|just\s+)?(?:hate|detest|can't\s+stand|can’t\s+stand"
                                  r"|cannot\s+stand)\s+([a-z][a-z\s\-]{1,40}?)(?=\s*(?:$|[,.!;]|\bbut\b|\bbecause\b))"),
         lambda m: [("dislikes", *rest) for _key, *rest in _likes(m)] if _first_person(m.string) else [], 0.7),
    # "…and we love hiking": the user is among "we", but not surely the one who loves it: review.
    Rule("en.likes.we", _r(r"\bwe\s+(?:both\s+|all\s+|really\s+|also\s+)*(?:love|enjoy|adore)\s+"
                           r"([a-z][a-z\s,\-]{1,40}?)(?=\s*(?:$|[.!;]|\bbut\b|\bbecause\b|\bwhen\b|\bso\b))"),
         lambda m: [("likes", value, 0.6) for _key, value, *_rest in _likes(m)], 0.6),
    Rule("en.dislikes", _r(r"\bi\s+(?:really\s+|absolutely\s+|honestly\s+|just\s+)?(?:hate|dislike|detest|can't\s+stand"
                           r"|cannot\s+stand|can’t\s+stand|don't\s+like|do\s+not\s+like|don’t\s+like)\s+"
                           r"([a-z][a-z\s,\-]{1,60}?)(?=\s*(?:$|[.!;]|\bbut\b|\bbecause\b|\bwhen\b|\bif\b|\bso\b))"),
         lambda m: [("dislikes", *rest) for _key, *rest in _likes(m)], 0.75),
    # "Not a fan of horror movies", "I'm not a big fan of jazz": the negation is the statement.
    Rule("en.dislikes.not_fan", _r(rf"(?:^\W*(?:honestly,?\s+)?|\b{I_AM}\s+(?:really\s+|just\s+)?)not\s+(?:really\s+)?"
                                   rf"(?:a|much\s+of\s+a)\s+(?:huge\s+|big\s+|great\s+)?fan\s+of\s+"
                                   rf"([a-z][a-z\s\-]{{1,40}}?)(?=\s*(?:$|[,.!;]|\bbut\b|\band\b))"),
         lambda m: [("dislikes", *rest) for _key, *rest in _likes(m)], 0.75),
    # "I can't eat peanuts, I'm allergic": the food named before the allergy.
    Rule("en.allergies.cant_eat", _r(r"\bi\s+(?:can't|can’t|cannot|can\s+not)\s+(?:eat|have|drink|touch)\s+"
                                     r"([a-z][a-z\s\-]{1,30}?)\s*(?:[,;:—–-]|\bbecause\b|\bas\b|\bsince\b)\s*"
                                     r"(?:i'm|i’m|i\s+am)\s+(?:very\s+|severely\s+)?allergic\b"),
         lambda m: [("allergies", m.group(1).strip().lower())], 0.85),
    Rule("en.allergies", _r(r"\b(?:i(?:'m|’m|\s+am)\s+(?:very\s+|severely\s+|mildly\s+)?allergic\s+to\s+"
                            r"([a-z][a-z\s,\-]{1,40}?)|i\s+have\s+(?:an?\s+|a\s+severe\s+)?([a-z]+)\s+allergy)"
                            # "…to peanuts and she ordered a peanut cake": a new clause, not a second allergen.
                            r"(?=\s*(?:$|[.!;,]|\bbut\b|\band\s+(?:i|you|he|she|it|we|they|my|your|his|her|our"
                            r"|their|there|this|that)\b))"),
         lambda m: [("allergies", a.strip().lower()) for a in re.split(r"\s*,\s*|\s+and\s+", m.group(1) or m.group(2))
                    if a.strip()], 0.85),
    # "I'm lactose intolerant", "I have a gluten intolerance": not an allergy, but what a meal must leave out all
    # the same, so kept with them and named for what it is.
    Rule("en.allergies.intolerant", _r(rf"\b(?:{I_AM}\s+(?:very\s+|severely\s+|a\s+bit\s+|slightly\s+|mildly\s+)?"
                                       rf"({INTOLERANCES})[\s-]intolerant|i\s+have\s+(?:an?\s+|a\s+severe\s+)?"
                                       rf"({INTOLERANCES})\s+intolerance)\b"),
         lambda m: [("allergies", f"{(m.group(1) or m.group(2)).lower()} intolerance")], 0.85),
    Rule("en.detail_level", _r(r"(?:(?:^\W*|[,;:]\s*|\bplease\s+)keep\s+(?:it|things|them|(?:your\s+|the\s+)?"
                               r"(?:answers|replies|responses))\s+(short|brief|concise|detailed)"
                               r"|i\s+(?:would\s+|'d\s+)?prefer\s+(short|brief|concise|detailed|long|in-depth)\s+(?:answers"
                               r"|replies|responses|explanations)|(?:please\s+)?be\s+(brief|concise)\b)"),
         lambda m: [("detail_level", _DETAIL[(m.group(1) or m.group(2) or m.group(3)).lower()])], 0.8),
    # "Short answers, please", "Detailed answers please": the request opens a clause.
    Rule("en.detail_level.please", _r(r"(?:^\W*|[,;]\s*)(short|brief|concise|detailed|in-depth|long)\s+"
                                      r"(?:answers|replies|responses|explanations)\s*,?\s+please\b"),
         lambda m: [("detail_level", _DETAIL[m.group(1).lower()])], 0.8),
    # "Radiohead is my favourite band": the value first.
    Rule("en.favorite.first", _r(r"(?:^\W*|[,;]\s*)([\w'’\-]+(?:\s+[\w'’\-]+){0,3}?)\s+(?:is|are)\s+my\s+"
                                 r"(?:all-time\s+|absolute\s+)?favou?rite\s+([a-z]+(?:\s+[a-z]+)?)(?=\s*(?:$|[,.!;]))"),
         lambda m: [] if m.group(1).split()[0].lower() in LIKE_NOISE | {"it's", "which", "who", "he", "she", "they",
                                                                         "there", "here", "mine", "what"}
         else _favorite(m, value_group=1, what_group=2), 0.75),
    # The value ends before a clause of "but" or "because" ("…is knitting but I have no time").
    Rule("en.favorite", _r(r"\bmy\s+favou?rite\s+([a-z]+(?:\s+[a-z]+)?)\s+is\s+([\w'’\- ]{1,40}?)"
                           r"(?=\s*(?:$|[,.!;]|(?:but|because|though|although)\b))"),
         _favorite, 0.8),
    # identifiers (refused later when they are sensitive numbers)
    Rule("en.identifier", _r(r"\bmy\s+(phone|mobile|cell|e-?mail|(?:credit\s+|debit\s+|bank\s+)?card|passport|id|iban"
                             r"|snils|social\s+security)(?:\s+(?:number|address|no\.?))?\s+is\s*:?\s*"
                             r"([\w@.+\-][\w@.+\- ]{2,60}?)(?=\s*(?:$|[,;!]|\.\s|\.$))"), _identifier, 0.8),
)

_QUESTION_START = re.compile(r"^\W*(?:what|who|whom|whose|where|when|why|how|which|do|does|did|is|are|am|was|were|can"
                             r"|could|would|should|will|shall|have|has)\b", re.IGNORECASE)
_HYPOTHETICAL = re.compile(r"\b(?:if|suppose|supposing|imagine|pretend|hypothetically|wish|what\s+if|let'?s\s+say"
                           r"|someday|one\s+day|dream\s+of|want\s+to\s+be(?:come)?|going\s+to\s+be|will\s+be)\b",
                           re.IGNORECASE)
_REPORTED = re.compile(r"\b(?:said|says|say|told|tells|claims?|claimed|thinks?|believes?|according\s+to|asked|"
                       r"thought)\b", re.IGNORECASE)
_NEGATORS = {"not", "don't", "dont", "never", "no", "doesn't", "didn't", "n't", "longer"}


def _negated(sentence: str, pos: int) -> bool:
    return bool(set(words_before(sentence, pos, 2)) & _NEGATORS)


# A new clause: a conjunction and a subject of its own ("green and I love jazz", "Radiohead and they…"), a reason,
# or a semicolon. "Black and white", "rock and roll", "Tom and Jerry" have no pronoun after "and": one value.
_NEW_CLAUSE = _r(r"\b(?:and|but|so|while|though|although)\s+(?:i|i'm|i’m|im|i've|i’ve|i'd|i’d|i'll|i’ll|we|we're"
                 r"|we’re|he|he's|he’s|she|she's|she’s|they|they're|they’re|it|it's|it’s)(?![\w'’])"
                 r"|\b(?:because|cause|'cause|’cause)\b|;")

FILTERS = SentenceFilters(
    question=lambda s: s.rstrip().endswith("?") or bool(_QUESTION_START.match(s)),
    hypothetical=lambda s: bool(_HYPOTHETICAL.search(s)),
    reported=lambda s: bool(_REPORTED.search(s)),
    negated=_negated,
    new_clause=_NEW_CLAUSE,
)


# A predicate that shares the clause before it's "I": "I live in Boston and work at Fidelity", "I moved to Chicago
# and started at Morningstar". Only verbs that cannot be a third person's present ("works", "lives") and only after
# a clause whose subject is the user and hands the predicate to no one else ("I think my sister got married and
# moved to Denver" stays hers).
SHARED_SUBJECT = SharedSubject(
    predicate=_r(r"\s(?:and|but|then|and\s+then)\s+(?=(?:(?:also|now|just|recently|finally)\s+)?"
                 r"(?:work|worked|live|lived|moved|relocated|started|joined|teach|taught|study|studied|quit|left"
                 r"|am|have|got)\b)"),
    user_clause=_r(r"(?:^|[,:;—–])\W*(?:(?:well|so|also|oh|btw|big\s+news|update|anyway)\W+)*"
                   r"(?:i|i'm|i’m|i've|i’ve)(?![\w'’])[^,:;—–]*$"),
    other_subject=_r(r"\b(?:my|his|her|their|our|he|she|they|who|that|which)\b"),
    pronoun="I",
)


def extract_sentence(sentence: str) -> list[RuleFact]:
    return SHARED_SUBJECT.run(sentence, lambda said: run_rules(said, RULES, FILTERS))
