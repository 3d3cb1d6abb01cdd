"""The key registry: canonical fact keys, their synonyms in English, Russian and Chinese, their
cardinality, and the normalisation of keys and values.

A single-valued key (name, location…) holds one current value; a multi-valued key (likes, pets…)
holds a set. Keys outside the registry are allowed and normalised to ASCII snake_case in American
spelling, so that "Favourite Colour", "favourite-colour" and "favorite_color" are one key, the one
the rules write ("my favourite colour is green" → favorite_color).
"""

from __future__ import annotations

import re
import unicodedata
import zoneinfo
from dataclasses import dataclass
from functools import cache

from memoryhub.exceptions import ApplicationError
from memoryhub.text import normalize

KEY_MAX_CHARS = 64
VALUE_MAX_CHARS = 500


@dataclass(frozen=True)
class KeySpec:
    name: str
    multi: bool = False
    synonyms: tuple[str, ...] = ()
    description: str = ""


# Order matters: it is the order facts are shown in, in the API and in the prompt.
KEYS: tuple[KeySpec, ...] = (
    KeySpec("name", synonyms=("full name", "first name", "my name", "имя", "имя пользователя", "зовут", "姓名",
                              "名字", "名称", "称呼"), description="What the user is called."),
    KeySpec("age", synonyms=("years", "возраст", "лет", "年龄", "岁数", "年纪"), description="Age in whole years."),
    KeySpec("birthday", synonyms=("birth date", "date of birth", "день рождения", "дата рождения", "生日",
                                  "出生日期")),
    KeySpec("gender", synonyms=("sex", "пол", "性别")),
    KeySpec("occupation", synonyms=("job", "profession", "occupation", "job title", "work", "профессия", "работа",
                                    "должность", "род занятий", "职业", "工作", "职位")),
    KeySpec("employer", synonyms=("company", "workplace", "employer", "место работы", "работодатель", "компания",
                                  "公司", "单位", "工作单位")),
    KeySpec("location", synonyms=("city", "residence", "lives in", "home", "current city", "город",
                                  "место жительства", "местоположение", "居住地", "所在地", "城市", "住址", "住处")),
    KeySpec("hometown", synonyms=("home town", "origin", "birthplace", "from", "родной город", "родина",
                                  "место рождения", "家乡", "老家", "籍贯", "出生地")),
    KeySpec("language_preference", synonyms=("preferred language", "language", "reply language", "язык",
                                             "предпочитаемый язык", "язык общения", "语言偏好", "语言", "首选语言",
                                             "偏好语言")),
    KeySpec("detail_level", synonyms=("verbosity", "detail", "уровень детализации", "подробность",
                                      "详细程度", "详细度")),
    KeySpec("interaction_style", synonyms=("communication style", "tone", "стиль общения", "交互风格",
                                           "沟通风格")),
    KeySpec("preferred_timezone", synonyms=("timezone", "time zone", "tz", "часовой пояс", "时区")),
    KeySpec("default_region", synonyms=("region", "cloud region", "регион", "默认区域", "区域", "默认地区")),
    KeySpec("diet", synonyms=("dietary preference", "питание", "диета", "饮食", "饮食习惯")),
    KeySpec("languages_spoken", multi=True, synonyms=("languages", "spoken languages", "speaks", "языки",
                                                      "владеет языками", "会说的语言", "掌握的语言")),
    KeySpec("likes", multi=True, synonyms=("like", "loves", "favourites", "favorites", "нравится", "любит", "喜欢",
                                           "喜好")),
    KeySpec("dislikes", multi=True, synonyms=("dislike", "hates", "не нравится", "不喜欢", "讨厌")),
    KeySpec("hobbies", multi=True, synonyms=("hobby", "interests", "хобби", "увлечения", "爱好", "兴趣爱好",
                                             "兴趣")),
    KeySpec("pets", multi=True, synonyms=("pet", "питомцы", "питомец", "домашние животные", "宠物")),
    KeySpec("allergies", multi=True, synonyms=("allergy", "аллергия", "过敏")),
)
BY_NAME: dict[str, KeySpec] = {spec.name: spec for spec in KEYS}

# What a favourite is of, in Russian and Chinese, as the English key says it ("мой любимый цвет — зелёный",
# "我最喜欢的颜色是蓝色" → favorite_color, as "my favourite colour is green" is): one key in every language.
FAVORITE_THINGS: dict[str, str] = {
    "цвет": "color", "фильм": "movie", "книга": "book", "книжка": "book", "еда": "food", "блюдо": "dish",
    "музыка": "music", "группа": "band", "писатель": "author", "писательница": "author", "напиток": "drink",
    "спорт": "sport", "вид спорта": "sport", "животное": "animal", "сериал": "show", "игра": "game",
    "песня": "song", "певец": "singer", "певица": "singer", "исполнитель": "artist", "время года": "season",
    "город": "city", "актёр": "actor", "актер": "actor", "актриса": "actress", "фрукт": "fruit", "цветок": "flower",
    "цветы": "flower", "праздник": "holiday", "кухня": "cuisine", "художник": "artist", "поэт": "poet",
    "颜色": "color", "电影": "movie", "书": "book", "食物": "food", "菜": "dish", "音乐": "music", "乐队": "band",
    "作家": "author", "饮料": "drink", "运动": "sport", "动物": "animal", "电视剧": "show", "游戏": "game",
    "歌": "song", "歌曲": "song", "歌手": "singer", "季节": "season", "城市": "city", "演员": "actor", "水果": "fruit",
    "花": "flower", "节日": "holiday", "画家": "artist", "诗人": "poet",
}

KEY_ORDER: dict[str, int] = {spec.name: i for i, spec in enumerate(KEYS)}


def _synonym_form(text: str) -> str:
    return " ".join(normalize(text).replace("_", " ").replace("-", " ").split())


@cache
def _synonyms() -> dict[str, str]:
    table: dict[str, str] = {}
    for spec in KEYS:
        for alias in (spec.name, *spec.synonyms):
            table[_synonym_form(alias)] = spec.name
    return table


# GOST 7.79 B-style transliteration, so free-form Russian keys stay readable ("любимый цвет" → lyubimyj_cvet).
_TRANSLIT = str.maketrans({
    "а": "a", "б": "b", "в": "v", "г": "g", "д": "d", "е": "e", "ё": "e", "ж": "zh", "з": "z", "и": "i",
    "й": "j", "к": "k", "л": "l", "м": "m", "н": "n", "о": "o", "п": "p", "р": "r", "с": "s", "т": "t",
    "у": "u", "ф": "f", "х": "h", "ц": "c", "ч": "ch", "ш": "sh", "щ": "shh", "ъ": "", "ы": "y", "ь": "",
    "э": "e", "ю": "yu", "я": "ya", "і": "i", "ї": "yi", "є": "ye", "ґ": "g", "ў": "u",
})
# British spellings of the words keys are made of, in the American form the rules' keys use ("favorite_*"):
# "favourite_colour" and "favorite_color" are one key. A word list, not a rule of endings: "-our" is also
# "hour" and "tour", "-ise" also "exercise" and "wise".
_AMERICAN = {
    "favourite": "favorite", "colour": "color", "flavour": "flavor", "behaviour": "behavior", "neighbour": "neighbor",
    "neighbourhood": "neighborhood", "honour": "honor", "humour": "humor", "labour": "labor", "harbour": "harbor",
    "rumour": "rumor", "odour": "odor", "armour": "armor", "savoury": "savory", "centre": "center",
    "theatre": "theater", "metre": "meter", "litre": "liter", "fibre": "fiber", "programme": "program",
    "catalogue": "catalog", "organisation": "organization", "organise": "organize", "realise": "realize",
    "specialisation": "specialization", "licence": "license", "defence": "defense", "offence": "offense",
    "practise": "practice", "travelling": "traveling", "traveller": "traveler", "jewellery": "jewelry",
    "grey": "gray", "tyre": "tire", "pyjamas": "pajamas", "cosy": "cozy", "moustache": "mustache",
    "aluminium": "aluminum", "analyse": "analyze", "sceptic": "skeptic", "paediatrician": "pediatrician",
    "enrolment": "enrollment",
}
_BRITISH = {american: british for british, american in _AMERICAN.items()}


def british_spellings(words: str) -> list[str]:
    """The British spellings of the American words of `words` ("favorite color" → "favourite", "colour"): a
    question may ask for a key in either ("what's my favourite colour?")."""
    return [_BRITISH[word] for word in words.lower().split() if word in _BRITISH]


def _american(word: str) -> str:
    if word in _AMERICAN:
        return _AMERICAN[word]
    if word.endswith("s") and word[:-1] in _AMERICAN:  # "colours", "programmes"
        return _AMERICAN[word[:-1]] + "s"
    return word


_KEY_RE = re.compile(rf"^[a-z][a-z0-9_]{{0,{KEY_MAX_CHARS - 1}}}$")


def key_normalize(raw: str) -> str:
    """Canonical key for `raw`: a registry key when `raw` is one of its synonyms, else ASCII snake_case.

    Raises ApplicationError (field "key") when nothing usable is left, e.g. a Chinese key that is
    not a known synonym (there is no offline romanisation to fall back on).
    """
    form = _synonym_form(raw or "")
    if not form:
        raise ApplicationError("The key must not be empty.", code="invalid_key", field="key")
    canonical = _synonyms().get(form)
    if canonical:
        return canonical
    ascii_form = unicodedata.normalize("NFKD", form.translate(_TRANSLIT)).encode("ascii", "ignore").decode()
    snake = re.sub(r"[^a-z0-9]+", "_", ascii_form.lower()).strip("_")
    snake = "_".join(_american(word) for word in snake.split("_"))
    canonical = _synonyms().get(snake.replace("_", " ")) or snake
    if not _KEY_RE.match(canonical):
        raise ApplicationError(
            "Use a key in Latin letters (snake_case, at most 64 characters, starting with a letter) "
            "or a known synonym of a registry key.",
            code="invalid_key", field="key",
        )
    return canonical


def is_multi(key: str) -> bool:
    spec = BY_NAME.get(key)
    return bool(spec and spec.multi)


# --- Values --------------------------------------------------------------------------------------

# Language names people use, in the three languages, → ISO 639-1. Preferences are stored as codes so
# "中文", "Chinese" and "китайский" are one fact, not three competing ones.
_LANGUAGES: dict[str, tuple[str, ...]] = {
    "en": ("english", "англ", "английский", "по-английски", "英语", "英文"),
    "ru": ("russian", "русский", "по-русски", "рус", "俄语", "俄文"),
    "zh": ("chinese", "mandarin", "китайский", "по-китайски", "中文", "汉语", "普通话", "华语", "国语", "簡體中文",
           "简体中文"),
    "de": ("german", "немецкий", "по-немецки", "德语", "德文"),
    "fr": ("french", "французский", "по-французски", "法语", "法文"),
    "es": ("spanish", "испанский", "по-испански", "西班牙语", "西语"),
    "it": ("italian", "итальянский", "по-итальянски", "意大利语"),
    "pt": ("portuguese", "португальский", "по-португальски", "葡萄牙语"),
    "ja": ("japanese", "японский", "по-японски", "日语", "日文"),
    "ko": ("korean", "корейский", "по-корейски", "韩语", "韩文", "朝鲜语"),
    "uk": ("ukrainian", "украинский", "по-украински", "乌克兰语"),
    "pl": ("polish", "польский", "по-польски", "波兰语"),
    "ar": ("arabic", "арабский", "по-арабски", "阿拉伯语"),
    "tr": ("turkish", "турецкий", "по-турецки", "土耳其语"),
    "nl": ("dutch", "нидерландский", "голландский", "荷兰语"),
    "hi": ("hindi", "хинди", "印地语"),
    "cs": ("czech", "чешский", "по-чешски", "捷克语"),
    "he": ("hebrew", "иврит", "希伯来语"),
    "kk": ("kazakh", "казахский", "哈萨克语"),
    "yue": ("cantonese", "кантонский", "粤语", "广东话"),
}


@cache
def _language_table() -> dict[str, str]:
    table = {code: code for code in _LANGUAGES}
    for code, names in _LANGUAGES.items():
        for name in names:
            table[normalize(name)] = code
    return table


def language_code(text: str) -> str | None:
    """ISO code for a language name ("English", "русский", "на английском", "中文", "ru"), or None."""
    form = normalize(text).strip(" .!,;:")
    form = re.sub(r"^(the|на)\s+", "", form)
    form = re.sub(r"\s+(language|языке|язык|языком|языка)$", "", form)
    table = _language_table()
    if form in table:
        return table[form]
    if re.fullmatch(r"[а-я]+", form):
        # Russian oblique cases: "английском", "китайского" → "английский", "китайский".
        from profiles.morph import lemma

        return table.get(lemma(form))
    return None


@cache
def _zones_by_casefold() -> dict[str, str]:
    return {zone.casefold(): zone for zone in zoneinfo.available_timezones()}


# Names people give their time zone by, when they do not give an IANA name.
_ZONE_ALIASES: dict[str, str] = {
    "pacific": "America/Los_Angeles", "pacific time": "America/Los_Angeles", "pt": "America/Los_Angeles",
    "pst": "America/Los_Angeles", "pdt": "America/Los_Angeles",
    "mountain": "America/Denver", "mountain time": "America/Denver", "mst": "America/Denver",
    "central": "America/Chicago", "central time": "America/Chicago",
    "eastern": "America/New_York", "eastern time": "America/New_York", "et": "America/New_York",
    "est": "America/New_York", "edt": "America/New_York",
    "moscow": "Europe/Moscow", "moscow time": "Europe/Moscow", "msk": "Europe/Moscow",
    "московское время": "Europe/Moscow", "московскому времени": "Europe/Moscow", "мск": "Europe/Moscow",
    "beijing time": "Asia/Shanghai", "china standard time": "Asia/Shanghai", "北京时间": "Asia/Shanghai",
    "东八区": "UTC+08:00", "gmt": "UTC", "utc": "UTC", "bst": "Europe/London", "cet": "Europe/Berlin",
    "cest": "Europe/Berlin", "ist": "Asia/Kolkata", "jst": "Asia/Tokyo", "kst": "Asia/Seoul",
    "central european": "Europe/Berlin", "central european time": "Europe/Berlin", "cet time": "Europe/Berlin",
    "greenwich mean time": "Europe/London", "uk time": "Europe/London", "british time": "Europe/London",
    "美东时间": "America/New_York", "美国东部时间": "America/New_York", "美西时间": "America/Los_Angeles",
    "美国西部时间": "America/Los_Angeles", "太平洋时间": "America/Los_Angeles", "英国时间": "Europe/London",
    "日本时间": "Asia/Tokyo", "韩国时间": "Asia/Seoul", "莫斯科时间": "Europe/Moscow", "中欧时间": "Europe/Berlin",
}
# "Pacific Standard Time", "Eastern Daylight Time": the standard/daylight word changes nothing stored.
_STANDARD = re.compile(r"\s+(?:standard|daylight)(?=\s+time$)")
# Cities people give their clock by ("London time", "东京时间") → the IANA zone named after them.
_ZH_CITY_ZONES = {"北京": "Asia/Shanghai", "上海": "Asia/Shanghai", "香港": "Asia/Hong_Kong", "台北": "Asia/Taipei",
                  "东京": "Asia/Tokyo", "首尔": "Asia/Seoul", "新加坡": "Asia/Singapore", "伦敦": "Europe/London",
                  "巴黎": "Europe/Paris", "柏林": "Europe/Berlin", "莫斯科": "Europe/Moscow",
                  "纽约": "America/New_York", "洛杉矶": "America/Los_Angeles", "悉尼": "Australia/Sydney",
                  "迪拜": "Asia/Dubai"}


@cache
def _zones_by_city() -> dict[str, str]:
    """"london" → Europe/London, "new york" → America/New_York: the last part of each zone's name."""
    table: dict[str, str] = {}
    for zone in sorted(zoneinfo.available_timezones()):
        if zone.count("/") == 1 and zone.split("/")[0] in ("Europe", "Asia", "America", "Africa", "Australia",
                                                            "Pacific", "Atlantic", "Indian"):
            table.setdefault(zone.split("/")[1].replace("_", " ").casefold(), zone)
    return table


def _city_zone(form: str) -> str | None:
    if (match := re.fullmatch(r"([a-z][a-z .'-]{1,30}?)\s+time", form)) is not None:
        return _zones_by_city().get(match.group(1))
    if (match := re.fullmatch(r"(.{2,4})时间", form)) is not None:
        return _ZH_CITY_ZONES.get(match.group(1))
    return None
_OFFSET = re.compile(r"^(?:utc|gmt|мск|msk)?\s*([+-−])\s*(\d{1,2})(?::?(\d{2}))?$")
_ZH_ZONE = re.compile(r"^(东|西)([一二三四五六七八九十]{1,2}|\d{1,2})区$")
_ZH_DIGITS = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}


def _zh_small_number(text: str) -> int:
    if text.isdigit():
        return int(text)
    if text == "十":
        return 10
    if text.startswith("十"):
        return 10 + _ZH_DIGITS[text[1]]
    if text.endswith("十"):
        return _ZH_DIGITS[text[0]] * 10
    return _ZH_DIGITS[text[0]] if len(text) == 1 else _ZH_DIGITS[text[0]] * 10 + _ZH_DIGITS[text[-1]]


def timezone_canonical(text: str) -> str | None:
    """An IANA zone name ("Europe/Paris") or a fixed offset "UTC+03:00"; None when not a time zone.

    "MSK+2" (Russian usage, offsets from Moscow time) becomes UTC+05:00.
    """
    form = _STANDARD.sub("", normalize(text).strip(" .!,;:"))
    if city := _city_zone(form):
        return city
    form = re.sub(r"\s*(time zone|timezone|zone|время|времени)$", "", form) if form not in _ZONE_ALIASES else form
    if form in _ZONE_ALIASES:
        return _ZONE_ALIASES[form]
    zone = _zones_by_casefold().get(form.replace(" ", "_"))
    if zone:
        return zone
    if (match := _ZH_ZONE.match(form)) is not None:
        hours = _zh_small_number(match.group(2))
        return _offset_label(hours if match.group(1) == "东" else -hours, 0) if hours <= 14 else None
    match = _OFFSET.match(form)
    if match is None:
        return None
    hours, minutes = int(match.group(2)), int(match.group(3) or 0)
    sign = -1 if match.group(1) in "-−" else 1
    if form.startswith(("мск", "msk")):
        hours, sign = hours * sign + 3, 1
        if hours < 0:
            hours, sign = -hours, -1
    if hours > 14 or minutes not in (0, 15, 30, 45):
        return None
    return _offset_label(sign * hours, minutes)


def _offset_label(hours: int, minutes: int) -> str:
    sign = "-" if hours < 0 else "+"
    return f"UTC{sign}{abs(hours):02d}:{minutes:02d}"


_ZH_NUMERAL = re.compile(r"^[零一二两三四五六七八九十百]+$")


def zh_number(text: str) -> int | None:
    """Chinese numerals up to 999 ("二十八" → 28, "一百零二" → 102); None when not one."""
    if not text or not _ZH_NUMERAL.match(text):
        return None
    digits = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
    total, current = 0, 0
    for ch in text:
        if ch in digits:
            current = digits[ch]
        elif ch == "十":
            total += (current or 1) * 10
            current = 0
        elif ch == "百":
            total += (current or 1) * 100
            current = 0
    return total + current


_EN_NUMBERS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17,
    "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90,
}


def en_number(text: str) -> int | None:
    """English number words up to 99 ("twenty-nine" → 29); None when not one."""
    parts = re.split(r"[\s-]+", text.strip().lower())
    if not parts or any(p not in _EN_NUMBERS for p in parts) or len(parts) > 2:
        return None
    if len(parts) == 2 and (_EN_NUMBERS[parts[0]] < 20 or _EN_NUMBERS[parts[0]] % 10 or _EN_NUMBERS[parts[1]] >= 10):
        return None
    return sum(_EN_NUMBERS[p] for p in parts)


AGE_MAX = 130
_AGE = re.compile(r"^(\d{1,3})(?:\s*(?:years?(?: old)?|y\.?o\.?|yrs?|лет|год|года|岁|周岁))?$")


def _age(value: str) -> str:
    form = normalize(value)
    match = _AGE.match(form)
    number = int(match.group(1)) if match else en_number(form) or zh_number(form.removesuffix("岁"))
    if number is None or not 0 < number <= AGE_MAX:
        raise ApplicationError(f"age must be a whole number of years between 1 and {AGE_MAX}.",
                               code="invalid_value", field="value")
    return str(number)


def value_clean(key: str, value: str) -> str:
    """The stored form of `value` for `key` (whitespace collapsed, canonical where the key has a
    canonical form: ages as integers, languages as ISO codes, time zones as IANA names or offsets).

    Raises ApplicationError (field "value") when the value is empty, too long or invalid for its key.
    Sensitive numbers are checked by the caller, on the raw value.
    """
    text = " ".join(str(value or "").split()).strip(" \t.,;:!?。，；：！？")
    if not text:
        raise ApplicationError("The value must not be empty.", code="invalid_value", field="value")
    if len(text) > VALUE_MAX_CHARS:
        raise ApplicationError(f"The value must be at most {VALUE_MAX_CHARS} characters.", code="too_long",
                               field="value")
    if key == "age":
        return _age(text)
    if key in ("language_preference", "languages_spoken"):
        return language_code(text) or text
    if key == "preferred_timezone":
        zone = timezone_canonical(text)
        if zone is None:
            raise ApplicationError(
                "preferred_timezone must be an IANA time zone (Europe/Berlin) or an offset (UTC+03:00).",
                code="invalid_value", field="value",
            )
        return zone
    return text


def value_norm(value: str) -> str:
    """Comparison form of a stored value: two values with the same form are the same fact."""
    return normalize(value)
