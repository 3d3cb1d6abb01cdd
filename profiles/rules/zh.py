"""Chinese phrasings of the user's facts about themselves.

Patterns are anchored on 我 followed directly by the verb, so 我妈妈是医生 or 我朋友叫小明 (facts
about others) do not match. Chinese drops a repeated subject ("我叫李四，今年28岁，是一名产品经理"):
a clause without a subject inherits 我 from an earlier clause of the same sentence.
"""

from __future__ import annotations

import re

import rjieba

from profiles.keys import language_code, timezone_canonical, zh_number
from profiles.rules.common import (
    FAVORITE_THINGS,
    Emit,
    Rule,
    RuleFact,
    SentenceFilters,
    evidence_as_written,
    favorite,
    lexicon,
    one,
    run_rules,
)

HAN = "\u4e00-\u9fff"
NUM = r"(\d{1,3}|[零一二两三四五六七八九十百]{1,4})"
RUN = rf"([{HAN}A-Za-z][{HAN}A-Za-z0-9·\-]{{0,11}})"
# The Chinese things a favourite is of (`FAVORITE_THINGS`), longest first: 歌手 before 歌.
_ZH_THINGS = "|".join(sorted((w for w in FAVORITE_THINGS if re.match(f"[{HAN}]", w)), key=len, reverse=True))
LANG_NAME = (r"(?:中文|汉语|普通话|英文|英语|俄语|俄文|日语|日文|韩语|韩文|法语|法文|德语|德文|西班牙语|意大利语"
             r"|葡萄牙语|粤语|广东话|阿拉伯语|乌克兰语)")
LANG = f"({LANG_NAME})"
# A language of a list may say how well: 英语和一点法语.
_LANG_HOW = "(?:一点点?|一些|几句|点儿?|简单的)"
LANGS = rf"({LANG_NAME}(?:(?:和|、|跟|与|及|还有){_LANG_HOW}?{LANG_NAME})*)"
TZ = (r"((?:UTC|GMT)\s*[+\-−]\s*\d{1,2}(?::?\d{2})?|[A-Za-z]+/[A-Za-z_]+(?:/[A-Za-z_]+)?|UTC|GMT"
      r"|[东西][一二三四五六七八九十]{1,2}区|北京时间)")
# Since when: "2019年起", "从去年开始", "这几年" before 住在 keep it the present; a bare "2019年" or "去年" does
# not (我去年住在北京 is the past). Before 搬到, any time of the move will do (我们三月份搬到了成都).
_YEAR = r"(?:\d{4}|[零〇一二三四五六七八九]{4})年"
_MONTH = r"(?:\d{1,2}|[一二三四五六七八九十]{1,3}|十[一二])月份?"
_WHEN = rf"(?:{_YEAR}(?:{_MONTH})?|{_MONTH}|去年|前年|今年|上个?月|上周|上星期|最近|前不久|不久前|年初|年底)"
SINCE = rf"(?:(?:从|自从?)?{_WHEN}(?:起|开始|以来)|这几年|这些年|近几年|多年来|一直以来)"
MOVED_WHEN = rf"(?:(?:在)?{_WHEN}(?:的时候)?|[\d一二两三四五六七八九十几]+(?:年|个月)前)"
# When and how a move is told before 搬: 我们三月份已经搬到了成都.
_MOVED_WHEN_HOW = rf"(?:{MOVED_WHEN})?(?:已经|最近|刚|刚刚|终于|就)*"
# What a move was for, said between 我 and 搬: "我为了孩子上学，搬到了海淀区".
_FOR_WHAT = rf"(?:为了[{HAN}A-Za-z]{{1,12}}?[，,]?)?"
# Whose work a move was for, when it is not the user's own employer: "为了他的工作", "为了老公的工作".
_NOT_SOMEONE = r"(?!(?:他|她|你|我|老公|老婆|丈夫|妻子|爱人|男朋友|女朋友|对象|孩子|儿子|女儿|爸爸|妈妈)的)"
# How one usually is: 我平时住在厦门, 我在家一般讲粤语, 我一直吃素.
USUALLY = r"(?:平时|平常|平日|日常|常年|长期|一般|通常)"
_LIKED_WHEN = r"(?:周末|最近|一直|从小|业余时间|闲暇时|空闲时)"
# Words that end a value: particles, the next predicate, time words (搬到杭州以后: the place, then when).
def _alternation(words: str) -> str:
    return "(?:" + "|".join(words.split()) + ")"


_VALUE_END = re.compile("(" + _alternation("""
今年 现在 目前 已经 是 在 住 来自 和 跟 我 的 了 啊 呀 哦 吧 呢 就行 就好 就可以 岁 从 做 也
工作 上班 生活 定居 居住 出生 长大 这边 那边 一带 附近 以后 之后 以前 之前 以来
""") + ")")
COMMON_SURNAMES = set("".join(lexicon("""
王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田
董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白
邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤欧司诸
""")))
OCCUPATIONS = tuple(lexicon("""
工程师 程序员 设计师 经理 老师 教师 医生 护士 律师 会计 司机 厨师 记者 作家 演员 学生 研究生
博士生 大学生 中学生 高中生 小学生 教授 警察 商人 农民 销售 工人 主管 总监 老板 创业者
自由职业者 翻译 编辑 画家 歌手 模特 运动员 军人 保安 保姆 店主 主播 博主 秘书 助理 顾问 教练
空姐 导游 法官 科学家 研究者 家庭主妇 全职妈妈 码农 实习生 艺术家 音乐家 企业家 专家 公务员
职员 白领 外卖员 快递员 服务员 店员 医师 药师 兽医 牙医 退休人员 个体户 程序猿 产品经理 分析师
水管工 电工 木工 焊工 钳工 瓦工 油漆工 清洁工 装修工 技工 农民工
"""))
# X师 and X员 are jobs whatever X is (咨询师, 飞行员…).
_JOB_SUFFIX = re.compile(r"[师员]$")
PLACES = lexicon("""
北京 上海 天津 重庆 河北 山西 辽宁 吉林 黑龙江 江苏 浙江 安徽 福建 江西 山东 河南 湖北 湖南 广东 海南 四川 贵州 云南
陕西 甘肃 青海 台湾 内蒙古 广西 西藏 宁夏 新疆 香港 澳门 东北 华北 华南 广州 深圳 成都 杭州 武汉 西安 南京 苏州 长沙
郑州 青岛 沈阳 大连 厦门 宁波 合肥 福州 济南 昆明 哈尔滨 长春 石家庄 太原 南昌 南宁 贵阳 兰州 海口 三亚 珠海 东莞
佛山 无锡 温州 乌鲁木齐 拉萨 呼和浩特 银川 西宁 台北 纽约 伦敦 巴黎 东京 首尔 新加坡 悉尼 洛杉矶 旧金山 柏林 莫斯科
美国 英国 法国 德国 日本 韩国 加拿大 澳大利亚 俄罗斯 中国 国外 老家 本地 外地
意大利 西班牙 葡萄牙 荷兰 比利时 瑞士 瑞典 挪威 丹麦 芬兰 冰岛 爱尔兰 苏格兰 奥地利 波兰 捷克 匈牙利 希腊 土耳其
乌克兰 白俄罗斯 哈萨克斯坦 乌兹别克斯坦 蒙古 朝鲜 越南 泰国 老挝 柬埔寨 缅甸 马来西亚 印度尼西亚 印尼 菲律宾 印度
巴基斯坦 孟加拉 尼泊尔 斯里兰卡 伊朗 伊拉克 以色列 沙特 阿联酋 卡塔尔 埃及 摩洛哥 南非 尼日利亚 肯尼亚 埃塞俄比亚
墨西哥 巴西 阿根廷 智利 秘鲁 哥伦比亚 古巴 新西兰
孟买 新德里 德里 班加罗尔 加尔各答 迪拜 阿布扎比 多哈 利雅得 德黑兰 伊斯坦布尔 开罗 特拉维夫 耶路撒冷 卡拉奇
曼谷 河内 胡志明市 吉隆坡 雅加达 马尼拉 大阪 京都 横滨 名古屋 札幌 福冈 釜山 仁川 平壤 乌兰巴托 阿拉木图
圣彼得堡 基辅 明斯克 华沙 布拉格 维也纳 布达佩斯 柏林 慕尼黑 汉堡 法兰克福 科隆 苏黎世 日内瓦 阿姆斯特丹 鹿特丹
布鲁塞尔 哥本哈根 斯德哥尔摩 奥斯陆 赫尔辛基 雷克雅未克 都柏林 爱丁堡 格拉斯哥 曼彻斯特 利物浦 伯明翰 牛津 剑桥
马德里 巴塞罗那 里斯本 罗马 米兰 威尼斯 佛罗伦萨 那不勒斯 雅典 马赛 里昂 尼斯
芝加哥 波士顿 西雅图 华盛顿 费城 休斯顿 达拉斯 奥斯汀 迈阿密 亚特兰大 丹佛 拉斯维加斯 圣地亚哥 硅谷 檀香山
多伦多 温哥华 蒙特利尔 渥太华 卡尔加里 墨尔本 布里斯班 珀斯 阿德莱德 奥克兰 惠灵顿
墨西哥城 圣保罗 里约热内卢 布宜诺斯艾利斯 利马 波哥大 哈瓦那 约翰内斯堡 开普敦 内罗毕 拉各斯
""")
PETS = {"猫咪": "猫", "小猫": "猫", "猫": "猫", "狗狗": "狗", "小狗": "狗", "狗": "狗", "兔子": "兔子", "仓鼠": "仓鼠",
        "鹦鹉": "鹦鹉", "金鱼": "金鱼", "乌龟": "乌龟", "龙猫": "龙猫", "刺猬": "刺猬", "蜥蜴": "蜥蜴", "鱼": "鱼",
        "蛇": "蛇", "马": "马"}
PET = "(" + "|".join(sorted(PETS, key=len, reverse=True)) + ")"
# A colour or breed said before the pet word (橘猫, 金毛狗), from a list: 熊猫 and 毛绒狗 are no pets.
_PET_KINDS = lexicon("橘 黑 白 花 黄 灰 三花 狸花 奶 布偶 英短 美短 暹罗 加菲 折耳 金毛 柯基 泰迪 博美 比熊 "
                     "萨摩 雪纳瑞 柴")
_PET_KIND = "(?:" + "|".join(sorted(_PET_KINDS, key=len, reverse=True)) + ")"
PRONOUNS = ("你", "他", "她", "它", "大家", "自己", "您", "别人", "我们")
NOT_NAMES = lexicon("什么 谁 自己 朋友 这个 那个 一个 一名 一位")


# How long a job has been done, said before it: "三年", "两年多", "五个月", "十多年的".
_FOR_A_WHILE = r"(?:[一二两三四五六七八九十几半\d]+多?(?:年|个月)多?(?:的)?)?"


def _trim(raw: str) -> str:
    if _VALUE_END.match(raw):
        return ""  # 我叫了外卖: the verb's object, not a value
    match = _VALUE_END.search(raw, 1)
    return raw[: match.start()] if match else raw


def _name(raw: str) -> str | None:
    name = _trim(raw).strip()
    if re.fullmatch(rf"[{HAN}·]{{2,4}}", name) and name not in NOT_NAMES and not _is_job(name):
        return name
    if re.fullmatch(r"[A-Za-z][A-Za-z\-]*(?:\s[A-Za-z][A-Za-z\-]*){0,2}", name):
        return name
    return None


# 小白 is "a newbie", 老外 "a foreigner": nicknames of the 小/老/阿 + surname shape that mean something else.
NOT_NICKNAMES = lexicon("小白 老外 老乡 老大 小弟 老板 老师 阿姨 小姐 小哥 老手 老兵 老铁 小三 老公 老婆")


def _surname_name(raw: str) -> str | None:
    """我是X: a name only when X looks like one (a common surname, two or three characters), or is
    小/老/阿 followed by a surname (小林, 老王, 阿杜), the way people call each other."""
    name = _name(raw)
    if name is None or raw.strip()[len(name):].startswith("的"):
        return None  # 我是李明的朋友: someone else's name
    if (len(name) == 2 and name[0] in "小老阿" and name[1] in COMMON_SURNAMES and name not in NOT_NICKNAMES):
        return name
    if re.match(f"[{HAN}]", name) and (name[0] not in COMMON_SURNAMES or len(name) > 3 or name.endswith("人")):
        return None
    if re.match("[A-Za-z]", name) and not name[0].isupper():
        return None
    return name


def _called(match: re.Match[str]) -> Emit:
    """我叫X: 叫 also means "to order, to call for" (我叫出租车), so a name that does not look like one
    (no common surname, no 小/老/阿 prefix, not Latin) waits for review."""
    name = _name(match.group(1))
    if name is None:
        return []
    looks_like_name = name[0] in COMMON_SURNAMES or name[0] in "小老阿" or bool(re.match("[A-Za-z]", name))
    return [("name", name) if looks_like_name else ("name", name, 0.6)]


def _is_job(value: str) -> bool:
    return value.endswith(OCCUPATIONS) or bool(_JOB_SUFFIX.search(value))


def _job(raw: str) -> str | None:
    value = _trim(raw)
    return value if value and _is_job(value) and len(value) <= 10 else None


def _job_modified(raw: str) -> str | None:
    """是一名全职的翻译 / 是个自由职业的摄影师 / 是一个小公司的程序员: the job after a modifier ending in 的."""
    if job := _job(raw):
        return job
    match = re.match(rf"[{HAN}A-Za-z0-9]{{1,8}}?的([{HAN}A-Za-z]{{1,8}})", raw)
    return _job(match.group(1)) if match else None


def _job_any(raw: str) -> str | None:
    value = re.sub(r"(方面的|相关的|相关)?(工作|行业|领域)$", "", _trim(raw))
    return value or None


def _place(raw: str) -> str | None:
    value = _trim(raw).strip()
    return value if 2 <= len(value) <= 12 or re.match("[A-Za-z]", value) else None


def _moved_to(raw: str) -> str | None:
    """搬到X: the place, not what comes after it with 去 / 来 (搬到深圳去腾讯工作, 搬到上海来了)."""
    return _place(re.split("(?<=.)[去来]", _trim(raw), maxsplit=1)[0])


def _native_place(raw: str) -> str | None:
    """A place by name (里斯本), by its ending (德州, 云南省) or as jieba tags it (绍兴, 潮汕): 我是X人 names a place
    (广州人), not an adjective (好人), and 我现在在X a place, not any word after 在 (学校, 上班)."""
    value = _trim(raw)
    return value if value in PLACES or re.fullmatch(rf"[{HAN}]{{1,6}}[省市县区州]", value) or _tagged_place(value) \
        else None


def _tagged_place(word: str) -> bool:
    return [tag for _, tag in rjieba.tag(word)] == ["ns"]


def _first_place(raw: str) -> str | None:
    """The place a run opens with, as jieba cuts it: "我老家绍兴，…", "回老家绍兴过年" (过年 is when, not where)."""
    words = rjieba.cut(raw)
    return _native_place(words[0]) if words else None


# What one does in a workplace (在银行做人事): departments and functions, jobs only after 做/负责/搞.
ROLES = lexicon("人事 财务 行政 运营 客服 前台 采购 销售 市场 公关 法务 会计 出纳 审计 开发 测试 设计 后勤 "
                "产品 技术 研发 运维 算法 HR IT 前端 后端 全栈")


def _is_role(value: str) -> bool:
    """A line of work, or one with a short field before it: 前端开发, 软件测试, 平面设计, 游戏运营."""
    return value in ROLES or (len(value) <= 6 and value.endswith(tuple(ROLES)))
# 在银行当柜员 says where they work, not for whom: generic workplaces are not employers.
GENERIC_WORKPLACES = lexicon("""
银行 医院 诊所 学校 大学 中学 小学 高中 初中 幼儿园 公司 工厂 厂里 餐厅 饭店 酒店 宾馆 咖啡店 咖啡馆 超市 商场 书店
药店 健身房 政府 部队 单位 机构 律所 外企 国企 私企 大厂 小公司 大公司 创业公司 互联网公司 科技公司 研究所 实验室
报社 电视台 工地 农村 村里 家 家里 网上 线上 国外 海外 当地 本地 老家 店里 学校里 医院里 公司里 这里 那里 这边 那边
""")


def _employer(raw: str) -> str | None:
    value = _trim(raw)
    value = re.sub("(远程|全职|兼职)$", "", value)
    if not value or value in PLACES or re.search("[省市县区镇村]$", value) or value in ("家", "家里", "公司"):
        return None
    # 一家/一个/某 anywhere: "上海一家医院" is a hospital in Shanghai, not a name.
    return None if re.search("一家|一个|某", value) or value.startswith(("这家", "那家")) else value


def _ended_employer(raw: str) -> str | None:
    """从腾讯离职 / 从医院辞职: the employer left, by its name or its kind (医院 ends 协和医院); not a town."""
    value = _trim(raw)
    return None if not value or value in PLACES or re.search("[省市县区镇村]$", value) else value


def _org_left(raw: str) -> str | None:
    """离开了腾讯: leaving is said of towns and rooms too, so only a name that reads as an organisation."""
    value = _trim(raw)
    return value if value in COMPANIES or _ORG_SUFFIX.search(value) or re.match("[A-Za-z]", value) else None


def _employer_at(match: re.Match[str]) -> Emit:
    """我在字节跳动当数据分析师: the place one holds a job at is the employer when it is not a town, a
    generic workplace (在银行做人事) or someone's (在朋友的公司). A name not known as an organisation may
    still be a town (在浦东当老师), so it waits for review unless it reads as one (a known company, Latin,
    or …公司/集团/银行/大学…). The name is whole between 在 and the verb: 协和医院 is not cut at 和."""
    role = re.sub("(?:方面的|相关的)?工作$", "", match.group(2))
    if not (_job(role) or _is_role(role)):
        return []
    org = match.group(1)
    if org in COMPANIES or re.match("[A-Za-z]", org):
        return [("employer", org, 0.8)]
    if (org in PLACES or org in GENERIC_WORKPLACES or org in ROLES or _WHERE_ENDING.search(org)
            or re.search("[的我你他她是]|一家|一个|某", org) or org.startswith(("这", "那", "家"))):
        return []
    return [("employer", org, 0.8 if _ORG_SUFFIX.search(org) else 0.65)]


# 在德州 / 在海岛上 / 在那儿: a place or a locative phrase, not an organisation.
_WHERE_ENDING = re.compile("[州省市县区镇村岛里上下外内边儿头]$")
COMPANIES = lexicon("""
腾讯 阿里 阿里巴巴 蚂蚁 蚂蚁集团 字节 字节跳动 抖音 百度 华为 小米 京东 美团 网易 拼多多 滴滴 快手 携程 新浪 微博 搜狐
比亚迪 联想 中兴 大疆 蔚来 理想 小鹏 宁德时代 海尔 格力 美的 顺丰 中石油 中石化 国家电网 中国移动 中国联通 中国电信
工商银行 建设银行 农业银行 中国银行 招商银行 平安 中信 华润 万科 苹果 谷歌 微软 亚马逊 特斯拉 三星 索尼 英特尔
""")
_ORG_SUFFIX = re.compile("(?:公司|集团|银行|大学|学院|医院|研究院|研究所|中心|科技|网络|传媒|证券|保险|基金)$")


def _age(raw: str) -> str | None:
    number = int(raw) if raw.isdigit() else zh_number(raw)
    return str(number) if number else None


def _langs(match: re.Match[str]) -> Emit:
    parts = [re.sub(f"^{_LANG_HOW}", "", part) for part in re.split("和|、|跟|与|及|还有", match.group(1))]
    return [("languages_spoken", code) for part in parts if (code := language_code(part))]


_MONTH_DAY = r"(\d{1,2}|[一二三四五六七八九十]{1,3})月(\d{1,2}|[一二三四五六七八九十]{1,3})[日号]"


def _birthday(match: re.Match[str]) -> Emit:
    """The month and day of a birthday, "10月28日", in digits whichever way it was said."""
    month, day = next((match.group(i), match.group(i + 1)) for i in (1, 3) if match.group(i))
    m, d = _zh_count(month), _zh_count(day)
    return [("birthday", f"{m}月{d}日")] if 1 <= m <= 12 and 1 <= d <= 31 else []


def _zh_count(text: str) -> int:
    if text.isdigit():
        return int(text)
    digits = "一二三四五六七八九"
    if "十" not in text:
        return digits.index(text) + 1 if text in digits else 0
    tens, _, ones = text.partition("十")
    return (digits.index(tens) + 1 if tens else 1) * 10 + (digits.index(ones) + 1 if ones else 0)


def _pet(match: re.Match[str]) -> Emit:
    animal = PETS[match.group(1)]
    name = _name(match.group(2)) if (match.lastindex or 0) >= 2 and match.group(2) else None
    return [("pets", f"{animal} ({name})" if name else animal)]


def _likes(raw: str) -> str | None:
    value = _trim(raw)
    if not value or value.startswith(PRONOUNS) or value.startswith(("用", "上", "和", "跟")):
        return None
    # 喜欢吃火锅 / 喝咖啡 / 玩游戏: what is liked is the food, the drink, the game, not the verb.
    if len(value) >= 3 and value[0] in "吃喝玩" and not value.startswith(("玩具", "玩偶", "玩家", "吃货")):
        value = value[1:]
    return value


def _hobbies(match: re.Match[str]) -> Emit:
    """"我的爱好是弹吉他和爬山": each pastime of the list, as the likes rule reads one."""
    parts = re.split(r"和|、|跟|还有|以及|/", match.group(1))
    return [("hobbies", value) for part in parts if (value := _likes(part))]


# 我现在是设计师 / 如今在字节跳动工作: the job of today, said against the one before (目前, "currently", is not).
_NOW = re.compile("现在|如今")
_DONE = r"(?:已经|刚|刚刚|最近|终于|上个?月|上周|前几天|昨天|今天|去年|年初|年底)"
ORG_RUN = rf"([{HAN}A-Za-z][{HAN}A-Za-z0-9·&\-]{{0,11}}?)"

RULES: tuple[Rule, ...] = (
    # name
    Rule("zh.name.jiao", re.compile(rf"我(?:的名字|名字)?叫{RUN}"), _called, 0.9),
    Rule("zh.name.mingzi_shi", re.compile(rf"我的?名字是{RUN}"), one("name", transform=_name), 0.9),
    Rule("zh.name.jiao_wo", re.compile(rf"(?:^|就|可以|请|你|都)叫我{RUN}"), one("name", transform=_name), 0.85),
    Rule("zh.name.wo_shi", re.compile(rf"我是(?!一?[名个位])({RUN[1:-1]})"),
         one("name", transform=_surname_name), 0.75),
    # age
    Rule("zh.age", re.compile(rf"我(?:今年|现在|已经|都|才|刚)*满?{NUM}周?岁"), one("age", transform=_age), 0.9),
    # 我今年刚满三十 / 我上个月刚满四十: 满 says it is an age without 岁.
    Rule("zh.age.man", re.compile(rf"我(?:今年|现在|已经|都|才|刚|刚刚|上个?月|上周|前几天|前不久|昨天)*满{NUM}"
                                  rf"(?![\d零一二两三四五六七八九十百年月天号个周岁])"),
         one("age", transform=_age), 0.8),
    Rule("zh.age.nianling", re.compile(rf"我的年龄是{NUM}"), one("age", transform=_age), 0.9),
    # 我的生日是10月28日, 我生日在三月五号, 我是5月3号出生的.
    Rule("zh.birthday", re.compile(rf"我的?生日(?:是|在)?{_MONTH_DAY}|我(?:是)?{_MONTH_DAY}(?:出生|生)的?"),
         _birthday, 0.85),
    # occupation, employer, diet
    Rule("zh.job.yiming", re.compile(rf"我(?:现在|目前|如今)?是一?[名个位]{RUN}"),
         one("occupation", transform=_job_modified), 0.9, change_when=_NOW),
    Rule("zh.job.shi", re.compile(rf"我(?:现在|目前|如今)?是(?!一?[名个位]){RUN}"), one("occupation", transform=_job),
         0.85, change_when=_NOW),
    Rule("zh.job.age_job", re.compile(rf"我是一?[名个位]{NUM}岁的{RUN}"),
         lambda m: [("age", a)] + ([("occupation", j)] if (j := _job(m.group(2))) else []) if (a := _age(m.group(1)))
         else [], 0.85),
    # "我在腾讯做了三年程序员": how long comes between the verb and the job (`_FOR_A_WHILE`).
    Rule("zh.job.dang", re.compile(rf"我(?:现在|目前|如今)?(?:在[^，。,]{{1,12}}?)?(?:当|做|担任)(?:了)?"
                                   rf"{_FOR_A_WHILE}{RUN}"),
         one("occupation", transform=_job), 0.85, change_when=_NOW),
    Rule("zh.job.zai_zuo", re.compile(rf"我(?:现在|目前|如今)?在[^，。,]{{1,12}}?(?:做|负责|搞)"
                                      rf"((?:[{HAN}]{{1,3}}?)?(?:{_alternation(' '.join(ROLES))}))"
                                      rf"(?:工作)?(?![{HAN}])"),
         one("occupation"), 0.8, change_when=_NOW),
    Rule("zh.job.zuo_de", re.compile(rf"我(?:现在|目前|如今)?(?:是)?(?:做|搞)({_alternation(' '.join(ROLES))})的"),
         one("occupation"), 0.8, change_when=_NOW),
    Rule("zh.employer.zai_dang", re.compile(rf"我(?:现在|目前|如今)?在([{HAN}A-Za-z][{HAN}A-Za-z0-9·&\-]{{0,11}}?)"
                                            rf"(?:当|做|担任|负责)(?:了)?{_FOR_A_WHILE}([{HAN}A-Za-z]{{1,10}})"),
         _employer_at, 0.8, change_when=_NOW),
    # "干水管工二十年了": how long they have done the job says they do it.
    Rule("zh.job.gan_nian", re.compile(rf"我(?:已经)?干了?([{HAN}]{{1,8}}?)(?:已经|都|快|有)?"
                                       rf"[\d零一二两三四五六七八九十百几]+多?年"),
         one("occupation", transform=_job), 0.8),
    # 我上个月升职当了技术总监, 我被提拔为部门经理: the job promoted to.
    Rule("zh.job.shengzhi", re.compile(rf"我(?:{_WHEN})?(?:刚|刚刚|终于|已经)?(?:被)?"
                                       rf"(?:升职|升任|升为|晋升为|提拔为|升职为)(?:当了|成了|做了|为|成为)?{RUN}"),
         one("occupation", transform=_job), 0.8, change=True),
    Rule("zh.job.zhiye", re.compile(rf"我的(?:职业|工作|职位)是{RUN}"), one("occupation", transform=_job_any), 0.9),
    Rule("zh.job.congshi", re.compile(rf"我(?:现在|目前|如今)?从事{RUN}"), one("occupation", transform=_job_any), 0.85,
         change_when=_NOW),
    # 我在腾讯远程办公, 在市第一医院上夜班: how or when they work may come between.
    Rule("zh.employer", re.compile(rf"我(?:现在|目前|如今)?在{ORG_RUN}(?:远程|兼职|全职)?"
                                   rf"(?:工作|上班|任职|实习|办公|上夜班|上白班|值班)"),
         one("employer", transform=_employer), 0.85, change_when=_NOW),
    Rule("zh.diet", re.compile(rf"我(?:是|只|一直|{USUALLY}|现在|目前)?(素食者|素食主义者|纯素食者|吃素)"),
         one("diet", transform=lambda v: "素食" if v == "吃素" else v), 0.85),
    Rule("zh.diet.chi", re.compile(r"我(?:只|一直|平时|现在|目前)?(?:吃|是)(纯素|全素)(?!食)"), one("diet"), 0.85),
    # 我不吃辣, 我从来不吃肉: what they keep out of their food.
    Rule("zh.diet.bu_chi", re.compile(r"我(?:从来|从|一直|平时|基本|已经)?不吃"
                                      r"(辣|肉|猪肉|牛肉|羊肉|海鲜|鱼|香菜|葱|蒜|甜食|内脏)(?![\u4e00-\u9fff])"),
         lambda m: [] if re.search("素食|吃素|纯素|全素", m.string) else [("diet", f"不吃{m.group(1)}")], 0.8),
    # where they live and come from
    # 我们住在杭州滨江: the user's household.
    Rule("zh.location.zhu_zai", re.compile(rf"我(?:们家?)?(?:{SINCE})?(?:就|都)?(?:现在|目前|一直|也|还|{USUALLY})?"
                                           rf"(?:住|生活|定居|居住)在{RUN}"),
         one("location", transform=_place), 0.9),
    Rule("zh.location.zai_zhu", re.compile(rf"我(?:现在|目前|一直|{USUALLY})?在{RUN}(?:生活|住|定居|居住)"),
         one("location", transform=_place), 0.9),
    # 我刚从北京搬到深圳: where from may come before the verb.
    Rule("zh.location.ban_dao", re.compile(rf"我们?(?:家)?{_MOVED_WHEN_HOW}{_FOR_WHAT}(?:从[{HAN}A-Za-z]{{1,8}}?)?"
                                           rf"搬(?:到|去|家到)了?{RUN}"),
         one("location", transform=_moved_to), 0.8, change=True),
    # 我搬到深圳去腾讯工作了, 为了阿里巴巴的工作搬到了杭州: why they moved is the new employer (a QA pass: the first was
    # read as living in "深圳去腾讯", the second gave only the city).
    Rule("zh.employer.ban_qu", re.compile(rf"我们?{_MOVED_WHEN_HOW}搬(?:到|去)了?[{HAN}A-Za-z]{{1,8}}?[去来](?:了)?"
                                          rf"{ORG_RUN}(?:工作|上班|任职|实习)"),
         one("employer", transform=_employer), 0.8, change=True),
    Rule("zh.employer.wei_le", re.compile(rf"(?:我们?{_MOVED_WHEN_HOW})?为了(?:去|在)?{_NOT_SOMEONE}{ORG_RUN}的(?:新)?"
                                          rf"(?:工作|offer|职位)[，,]?(?:我们?)?{_MOVED_WHEN_HOW}搬"),
         one("employer", transform=_employer), 0.8, change=True),
    Rule("zh.location.he", re.compile(rf"我(?:和|跟)[{HAN}]{{1,4}}(?:一起)?(?:最近|已经|刚|现在)?"
                                      rf"(?:搬到|搬去)了?{RUN}"),
         one("location", transform=_place), 0.8, change=True),
    Rule("zh.location.he_zhu", re.compile(rf"我(?:和|跟)[{HAN}]{{1,4}}(?:一起)?(?:最近|已经|刚|现在)?"
                                          rf"(?:住在|生活在)了?{RUN}"),
         one("location", transform=_place), 0.8),
    # 我跳槽到阿里巴巴当产品经理: the new job, with the new employer (zh.employer.tiaocao).
    Rule("zh.job.tiaocao_dang", re.compile(rf"我{_DONE}*(?:跳槽到|跳槽去|入职)了?[^，。,]{{1,12}}?(?:当|做|担任)了?"
                                           rf"{RUN}"),
         one("occupation", transform=_job), 0.8, change=True),
    # 我从腾讯离职了 / 我从医院辞职了: that employer is no longer the user's.
    Rule("zh.employer.cong_lizhi", re.compile(rf"我{_DONE}*从{ORG_RUN}(?:辞职|离职)"),
         one("employer", transform=_ended_employer), 0.8, ends=True),
    Rule("zh.employer.likai", re.compile(rf"我{_DONE}*离开了{ORG_RUN}(?=$|[，。！!,]|了)"),
         one("employer", transform=_org_left), 0.8, ends=True),
    # 我退休了, 我已经退休两年了: no job now.
    Rule("zh.job.tuixiu", re.compile(rf"我{_DONE}*(?:都|早就|早已)?退休(?!金|工资|年龄|后的)"),
         lambda _m: [("occupation", "退休")], 0.85, change=True),
    Rule("zh.employer.tuixiu", re.compile(rf"我{_DONE}*(?:都|早就|早已)?退休了"),
         lambda _m: [("employer", "")], 0.8, ends=True),
    # 我辞职了 / 我上个月离职了: whichever employer the user had.
    Rule("zh.employer.cizhi", re.compile(rf"我{_DONE}*(?:辞职|离职|裸辞)(?![信报手])"),
         lambda _m: [("employer", "")], 0.8, ends=True),
    # The name ends before the job taken there (跳槽到阿里巴巴当产品经理).
    Rule("zh.employer.tiaocao", re.compile(rf"我(?:已经|最近|刚|刚刚|终于)*(?:跳槽到|跳槽去|入职)了?{ORG_RUN}"
                                           rf"(?=当|做|担任|负责|工作|上班|了|$|[，。！!,；;])"),
         one("employer", transform=_employer), 0.8, change=True),
    # 我被腾讯录用了: hired, said from the other side.
    Rule("zh.employer.luyong", re.compile(rf"我{_DONE}*被{ORG_RUN}(?:正式)?(?:录用|聘用|雇用|雇佣)"),
         one("employer", transform=_employer), 0.8, change=True),
    # "我现在在德州": where they are now, which may be a trip: a known place, and reviewed ("现在在杭州工作" says
    # where they work).
    Rule("zh.location.xianzai_zai", re.compile(rf"我(?:现在|目前|如今)在{RUN}(?<!工作|上班|实习|读书|上学)(?=\W*$)"),
         one("location", transform=_native_place), 0.65),
    Rule("zh.location.jia_zai", re.compile(rf"我家(?:住)?在{RUN}"), one("location", transform=_place), 0.8),
    Rule("zh.hometown.laizi", re.compile(rf"我来自{RUN}"), one("hometown", transform=_place), 0.85),
    Rule("zh.hometown.ren", re.compile(rf"我是([{HAN}]{{1,7}})人"), one("hometown", transform=_native_place), 0.85),
    Rule("zh.hometown.laojia", re.compile(rf"我(?:的)?(?:老家|家乡|故乡)(?:是|在){RUN}"),
         one("hometown", transform=_place), 0.85),
    # "我老家绍兴", "回了我老家绍兴", "回老家绍兴过年": the place right after the word, named as a place.
    Rule("zh.hometown.laojia_x", re.compile(rf"(?:我的?|(?:^|[，,]|我们?(?:全家|一家|都|也|要|又|刚|就|一起|今年|明年|"
                                            rf"打算|准备|想)*)(?:回了?|回到)(?:我的?)?)(?:老家|家乡|故乡){RUN}"),
         one("hometown", transform=_first_place), 0.8),
    Rule("zh.hometown.chusheng", re.compile(rf"我(?:出生|生)在{RUN}|我(?:是)?在{RUN}(?:出生|长大)"),
         lambda m: [("hometown", v)] if (v := _place(m.group(1) or m.group(2))) else [], 0.85),
    # language preference and languages spoken
    Rule("zh.lang_pref.yong", re.compile(rf"(?:^|请|麻烦|你|以后|之后|今后|都|接下来"
                                         rf"|(?:从现在|从今天|从今|现在)(?:开始|起))"
                                         rf"(?:请|你|都|一直|尽量|以后)*"
                                         rf"(?:用|使用){LANG}"
                                         r"(?:来)?(?:回答|回复|交流|聊天|和我|跟我|对我|与我|沟通|说话|写)"),
         one("language_preference", transform=language_code), 0.85),
    # 以后跟我说英文吧 / 请和我讲中文: speak to me in a language.
    Rule("zh.lang_pref.gen_wo", re.compile(rf"(?:^|请|麻烦|你|以后|之后|今后|接下来"
                                           rf"|(?:从现在|从今天|从今|现在)(?:开始|起))"
                                           rf"(?:请|你|都|一直|尽量|以后)*(?:跟|和|对|与)我(?:说|讲|聊|交流){LANG}"
                                           rf"(?![的里中])"),
         one("language_preference", transform=language_code), 0.8),
    Rule("zh.lang_pref.xihuan", re.compile(rf"我(?:更|比较)?(?:喜欢|希望|想|习惯|偏好|倾向于)(?:你)?(?:用|使用){LANG}"),
         one("language_preference", transform=language_code), 0.8, allow_wish=True),
    Rule("zh.languages", re.compile(rf"我(?:会|能|可以)(?:说|讲)(?:流利的|一点点?|一些|几句|点儿?)?{LANGS}"), _langs,
         0.85),
    # 我平时说粤语和普通话 / 我在家一般讲粤语: what one speaks day to day.
    Rule("zh.languages.habit", re.compile(rf"我(?:(?:在家|在家里|在公司|上班|工作中?)?{USUALLY}|在家|在家里)+(?:都)?"
                                          rf"(?:说|讲){LANGS}"), _langs, 0.8),
    Rule("zh.languages.muyu", re.compile(rf"我的母语是{LANGS}"), _langs, 0.85),
    # time zone
    Rule("zh.tz.shiqu", re.compile(rf"我的时区是\s*{TZ}"),
         one("preferred_timezone", transform=timezone_canonical), 0.9),
    Rule("zh.tz.dongbaqu", re.compile(r"我(?:这里|这边)?(?:在|是)?([东西][一二三四五六七八九十]{1,2}区)"),
         one("preferred_timezone", transform=timezone_canonical), 0.85),
    # 我用北京时间 / 我这边是美西时间 / 我用的是东京时间: checked by timezone_canonical.
    Rule("zh.tz.beijing", re.compile(rf"我(?:这里|这边)?(?:用|是|使用)(?:的是)?([{HAN}]{{2,5}}时间)"),
         one("preferred_timezone", transform=timezone_canonical), 0.8),
    # pets and likes
    # 我们家养了一只猫, 我们家猫咪叫咪咪: a family's pet is the user's too.
    # 我养了一只橘猫叫大黄: a colour or breed may come before the pet word, its name after 叫.
    Rule("zh.pets", re.compile(rf"我们?(?:家)?(?:养了|养着|养|有|里有)(?:一|两|三|几|\d+)?(?:只|条|头|匹|个)"
                               rf"?{_PET_KIND}?{PET}(?:(?:，|,)?(?:它|名字)?叫{RUN})?"),
         _pet, 0.85),
    Rule("zh.pets.jiao", re.compile(rf"我们?(?:的|家的?){PET}叫{RUN}"), _pet, 0.8),
    # 我家猫咪露娜刚满三岁: my pet, its name, its age.
    Rule("zh.pets.age", re.compile(rf"我们?(?:的|家的?){PET}([{HAN}A-Za-z]{{1,4}}?)?"
                                   rf"(?:今年|现在|已经|刚|刚刚|才|都|快)*满?{NUM}(?:周?岁|个月)"), _pet, 0.8),
    # "我的爱好是弹吉他和爬山", "我的业余爱好就是看书": the key names itself, so the list is the value.
    Rule("zh.hobbies", re.compile(rf"我的?(?:业余|兴趣)?爱好(?:是|就是|有|主要是)?[:：]?"
                                  rf"({RUN[1:-1]}(?:[、/]{RUN[1:-1]})*)"), _hobbies, 0.85),
    # "我最喜欢的颜色是蓝色", "我最爱的电影是《霸王别姬》": a favourite of a thing the English key names.
    Rule("zh.favorite", re.compile(rf"我(?:最)?(?:喜欢|爱)的({_ZH_THINGS})(?:是|就是)"
                                   rf"([《“\"]?[{HAN}A-Za-z0-9][^，。！？,.!?；;]{{0,20}}?)(?=$|[，。！？,.!?；;])"),
         lambda m: favorite(m.group(1), m.group(2)), 0.8),
    # 我平时喜欢打羽毛球, 我周末喜欢爬山, 我最近喜欢上了瑜伽: when or how often may come first.
    Rule("zh.likes", re.compile(rf"我(?:{USUALLY}|{_LIKED_WHEN})?(?:很|非常|特别|最|真的|也|还|超)?"
                                rf"(?:喜欢上了|(?:喜欢|热爱|喜爱|爱(?!好))(?!上)){RUN}"),
         one("likes", transform=_likes), 0.75),
    Rule("zh.dislikes", re.compile(rf"我(?:{USUALLY}|{_LIKED_WHEN})?(?:很|非常|特别|最|真的|超)?"
                                   rf"(?:讨厌|不喜欢|受不了|反感)(?!你|他|她){RUN}"),
         one("dislikes", transform=_likes), 0.75),
    # 不太喜欢 / 不怎么喜欢 / 不是很喜欢: a milder dislike, said less surely.
    Rule("zh.dislikes.butai", re.compile(rf"我(?:真的|其实|也)?(?:不太|不大|不怎么|不是很|不是太|并不)喜欢"
                                         rf"(?!你|他|她){RUN}"),
         one("dislikes", transform=_likes), 0.7),
    # 我乳糖不耐受: not an allergy, but what a meal must leave out all the same.
    Rule("zh.allergies.bunai", re.compile(r"我(?:有|是)?(?:点|一点|严重的?)?(乳糖|麸质|谷蛋白|果糖|组胺|酒精|咖啡因)"
                                          r"不耐(?:受|症)?"),
         lambda m: [("allergies", f"{m.group(1)}不耐受")], 0.85),
    # 我们领养了一只小狗，叫豆豆: a pet taken in is the user's (its name in the next clause, as for 养了).
    Rule("zh.pets.lingyang", re.compile(rf"我们?(?:家)?(?:最近|刚|刚刚|终于|前几天|上周)?(?:领养了|收养了|捡了|买了)"
                                        rf"(?:一|两|三|几|\d+)?(?:只|条|头|匹|个)?{PET}"), _pet, 0.8),
    Rule("zh.allergies", re.compile(rf"我对([{HAN}A-Za-z]{{1,8}}?)(?:严重)?过敏"), one("allergies"), 0.85),
    Rule("zh.detail_level", re.compile(r"(?:^|请|麻烦|你|以后|回答|回复|说|讲|解释)(?:的时候|时)?(?:得|的)?(?:请)?"
                                       r"(?:尽量|稍微)?"
                                       r"(简短|简洁|简单|详细|详尽)一?(?:点|些)"),
         lambda m: [("detail_level", "详细" if m.group(1) in ("详细", "详尽") else "简短")], 0.8),
    # identifiers (refused later when they are sensitive numbers)
    Rule("zh.identifier", re.compile(r"我的(手机号码?|电话号码?|电话|身份证号码?|身份证|银行卡号|卡号|银行卡"
                                     r"|护照号码?|邮箱|电子邮箱|IBAN)(?:是|为|：|:)\s*"
                                     r"([\w@.+\-][\w@.+\- ]{2,40}?)(?=$|[，。,；;！!])"),
         lambda m: [(_ID_KEYS[m.group(1)], m.group(2).strip())] if m.group(1) in _ID_KEYS else [], 0.8),
)
_ID_KEYS = {"手机号": "phone_number", "手机号码": "phone_number", "电话号码": "phone_number", "电话号": "phone_number",
            "电话": "phone_number", "身份证号": "id_number", "身份证号码": "id_number", "身份证": "id_number",
            "银行卡号": "card_number", "卡号": "card_number", "银行卡": "card_number", "护照号": "passport_number",
            "护照号码": "passport_number", "邮箱": "email", "电子邮箱": "email", "IBAN": "iban"}

# Clauses that start with a predicate and no subject, when an earlier clause of the sentence was about 我.
_ELIDED_START = re.compile(rf"^(?:今年|现在|目前|已经|是|住在|来自|在|从事|做|当|干|也是|还是|{USUALLY}"
                           r"|\d{1,3}岁|[一二两三四五六七八九十]{1,3}岁"
                           rf"|{SINCE}(?:就|都)?(?:现在|目前|一直|也|还)?(?:住|生活|定居|居住)在"
                           rf"|(?:{MOVED_WHEN})?(?:已经|最近|刚|刚刚|终于|就)*搬(?:到|去|家到))")
_OTHER_SUBJECT = re.compile(r"^(?:你|他|她|它|我们|你们|他们|她们|我[的]?(?:妈|爸|哥|姐|弟|妹|朋友|老公|老婆|丈夫|妻子|"
                            r"儿子|女儿|同事|老板|男朋友|女朋友|家人|爷|奶|外公|外婆))")

# 不怎么 ("not much", 我不怎么喜欢运动) is not the question word 怎么.
_QUESTION = re.compile(r"[？?]\s*$|吗\s*[。！!]?\s*$|呢\s*[。]?\s*$|(?<!不)怎么|" + _alternation(
    "什么 哪里 哪儿 哪个 谁 几岁 多大 多少 为什么 是不是 有没有 对不对 是否"))
_HYPOTHETICAL = re.compile(_alternation("""
如果 假如 假设 要是 万一 想象 假装 梦想 希望 想成为 想当 想做 将来 打算 准备 考虑 明年 以后想 但愿
下个月 下周 快要
"""))
# What was true once: judged per clause, so 我以前是护士，现在是全职妈妈 keeps the second clause.
_PAST = re.compile(r"以前|曾经|过去|小时候|原来|当年|那时|之前")
_REPORTED = re.compile(r"听说|据说|说我|告诉我|认为|以为|觉得我")
_FILTERS = SentenceFilters(
    question=lambda s: bool(_QUESTION.search(s)),
    hypothetical=lambda s: bool(_HYPOTHETICAL.search(s)),
    reported=lambda s: bool(_REPORTED.search(s)),
    negated=lambda s, pos: False,  # 我不是… / 我没有… never match: every pattern wants 我 right before its verb
)

# Where a clause's value ends though no comma says so: a conjunction before a subject of its own ("吉他而且我也…",
# "绿色但是我…"), or a reason (因为…). 黑白 or 爵士乐 hold none of these words: one value.
_NEW_CLAUSE = re.compile(r"(?:然而|而且|并且|但是|可是|不过|所以|因此|而|但)(?=我|你|他|她|它|咱)|因为|由于")


# 自我介绍一下：老陈，45岁，厨师一枚 — what follows is about the speaker, clause by clause.
_INTRO = re.compile(r"^(?:先|简单|那我)?(?:自我介绍一下|介绍一下(?:我)?自己|自我介绍|做个自我介绍)"
                    r"(?:吧|哈|哦)?[：:]\s*")
# A bare noun clause of an introduction (老陈 / 厨师一枚 / 一名程序员): read as 我是X.
_BARE = re.compile(rf"^(?:一[名个位])?([{HAN}A-Za-z]{{2,8}}?)(?:一枚|一名|一个)?[。！!.～~]*$")
# 我养了一条狗，叫豆豆: the next clause names the pet.
_PET_NAME = re.compile(rf"^(?:它|牠)?(?:的名字)?(叫做?|名叫|名字叫)([{HAN}A-Za-z]{{1,4}})[。！!～~]*$")
# 说简单点，就是… / 讲白了，…: "to put it simply", a discourse marker before the clause it opens, not a request.
_PUT_SIMPLY = re.compile(r"^(?:说|讲)(?:得)?(?:简单|通俗|白|直白)一?点?(?:了|说)?$")


# The assistant's question about someone else: "真棒！他几岁了？", "你儿子多大了？", "她住在哪里？".
# The user's subjectless answer ("六岁。", "在上海。") speaks of them, not of the user: "六岁。" was
# the user's age at 0.9.
_OF_ANOTHER = re.compile(r"他|她|它|ta|TA|你的?(?:妈|爸|哥|姐|弟|妹|朋友|老公|老婆|丈夫|妻子|儿子|女儿|孩子|"
                         r"同事|老板|男朋友|女朋友|家人|爷|奶|外公|外婆|猫|狗)")


def asks_of_another(said: str) -> bool:
    """The message's last sentence is a question about someone other than the one it speaks to."""
    last = [s for s in re.split(r"(?<=[。！!？?])", said.strip()) if s.strip()]
    return bool(last) and bool(_QUESTION.search(last[-1])) and bool(_OF_ANOTHER.search(last[-1]))


def extract_sentence(sentence: str, *, opens_message: bool = False) -> list[RuleFact]:
    if _FILTERS.reported(sentence):
        return []
    intro = _INTRO.match(sentence)
    if intro:
        sentence = sentence[intro.end():]
    # Questions and hypotheticals are judged on the whole sentence ("如果我住在巴黎，…" spans clauses),
    # once; what used to be true, per clause.
    question, hypothetical = _FILTERS.question(sentence), _FILTERS.hypothetical(sentence)
    filters = SentenceFilters(
        question=lambda _clause: question,
        hypothetical=lambda clause: hypothetical or bool(_PAST.search(clause)),
        reported=lambda _clause: False,
        negated=_FILTERS.negated,
        new_clause=_NEW_CLAUSE,
    )
    out: list[RuleFact] = []
    clauses = [c.strip() for c in re.split(r"[，,；;]", sentence)]
    # A purpose clause is read with the clause it is for: "为了阿里巴巴的工作，我搬到了杭州".
    for i in range(len(clauses) - 2, -1, -1):
        if clauses[i].startswith(("为了", "我为了", "我们为了")):
            clauses[i:i + 2] = [f"{clauses[i]}，{clauses[i + 1]}"]
    # A message that opens without a subject ("现在住在里斯本，天气很好", "干水管工二十年了") speaks for its
    # writer; a later sentence without one may go on about someone else ("我妈妈是医生。现在住在上海。").
    about_me = bool(intro) or (opens_message and bool(_ELIDED_START.match(clauses[0])))
    pet: RuleFact | None = None
    for i, clause in enumerate(clauses):
        if i < len(clauses) - 1 and _PUT_SIMPLY.match(clause):
            continue
        if _OTHER_SUBJECT.match(clause):
            about_me = False
        elif clause.startswith("我"):
            about_me = True
        # A subjectless clause ("今年28岁", "是一名产品经理") speaks for the last subject: 我 when it was me.
        text = "我" + clause if about_me and _ELIDED_START.match(clause) else clause
        if intro and about_me and not _ELIDED_START.match(clause) and (bare := _BARE.match(clause)):
            text = "我是" + bare.group(1)
        if pet is not None and (named := _PET_NAME.match(clause)) and not named.group(2).startswith((*PRONOUNS, "我")):
            # 叫豆豆 (a doubled syllable) or 名字叫… reads as a name; 叫旺财 most likely does too: review it.
            name = named.group(2)
            sure = named.group(1) != "叫" or (len(name) == 2 and name[0] == name[1])
            out[out.index(pet)] = RuleFact("pets", f"{pet.value} ({name})", pet.confidence if sure else 0.65,
                                           pet.rule, f"{pet.evidence}，{named.group(0)}")
        found = run_rules(text, RULES, filters)
        if text != clause:
            found = evidence_as_written(found, clause, "我")
        pet = next((f for f in found if f.key == "pets" and "(" not in f.value), None)
        out.extend(found)
    return out
