"""Greetings and goodbyes in any language (pure): a closed class, like stop words.

A line that only greets ("moin 👋", "buenas!!", "morning!", "早～", "お疲れさまですー") or
only says goodbye ("tschüss", "再见") says nothing a colleague who missed the room must
learn: it is small talk, whatever the work it answers. Words are matched with their
repeated letters folded ("bueeenas", "hiii"), beside whom they greet ("all", "leute",
"equipo", "各位"), emoji and punctuation; a line with any other word is judged by its
words. Words that also answer a question are left out: "yo" (Spanish "me"), "morgen"
and "mañana" (tomorrow), "evening" (when?), "tag" (a release tag).
"""

from __future__ import annotations

import re


def build_folded(word: str) -> str:
    """A word with its repeated letters folded ("bueeenas" → "buenas", "hallo" → "halo")."""
    return re.sub(r"(.)\1+", r"\1", word)


def _folded(words: str) -> frozenset[str]:
    return frozenset(build_folded(word) for word in words.split())


# Words that greet or part on their own.
GREETS = _folded(
    """hi hey hello hallo hiya heya howdy morning mornin gm bye byebye cya laters ciao
    moin servus mahlzeit tschüss tschüs hallöchen n'abend nabend hola buenas chao
    saludos bonjour salut slt coucou bonsoir buongiorno buonasera salve olá ola oi hoi
    doei goedemorgen goedemiddag goeienavond cześć czesc siema elo nara witam dobranoc
    привет приветик здравствуйте пока привіт вітаю бувайте hej hejsan hejdå tja tjena
    merhaba günaydın gunaydin selam görüşürüz 안녕하세요 안녕 ㅎㅇ ㅂㅂ ㅂㅇ مرحبا باي
    namaste नमस्ते"""
)
# Words that wish a good time of day or week, and the times they wish: together
# ("good evening", "schönen feierabend", "bon week-end", "хорошего вечера") they greet;
# alone ("evening", "abend") they may answer "when?".
WISHES = _folded(
    """good nice have a great schönen schönes schöne guten gute bon bonne buen buena
    buenos buenas buon buona bom boa fijne goede fijn goeie miłego dobrego dobry dobrej
    доброе добрый доброго хорошего хороших спокойной добрий доброго гарного гарних ha en
    bra god trevlig iyi 좋은 잘"""
)
TIMES = _folded(
    """morning afternoon evening night weekend noite manhã week end day days tag abend feierabend
    wochenende morgen nacht journée soirée soir nuit week-end día dia días dias tarde
    tardes noche noches finde giornata serata notte fine settimana avond dag nacht
    weekend ranka rano wieczoru wieczór dnia dzień weekendu nocy утро день вечер вечера
    ночи выходных ранку вечір вечора ночі вихідних morgon dag kväll helg natt akşamlar
    geceler günler sabahlar 아침 아침이에요 밤 주말 자요"""
)
# Words that part until a time, and the times ("see you tomorrow", "hasta mañana", "à
# demain", "내일 봬요"). "bis morgen", "do jutra", "до завтра" also say "by tomorrow":
# left out, a deadline must not be taken for a goodbye.
PARTS = _folded("see you ya hasta até à a tot vi ses 봬요 뵙겠습니다")
# "bis", "do", "до": beside a goodbye ("tschüss, bis morgen") they part too.
UNTIL = _folded("bis do до")
WHEN = _folded(
    """tomorrow later soon monday mañana luego pronto lunes amanhã logo já demain plus
    lundi domani dopo lunedì morgen straks maandag imorgon sen måndag 내일 월요일"""
)
# Greetings of fixed words, either of which alone may say something else.
PHRASES = frozenset(
    " ".join(build_folded(word) for word in phrase.split())
    for phrase in (
        "qué onda",
        "que onda",
        "e aí",
        "nos vemos",
        "hoşça kalın",
        "hoşça kal",
        "안녕히 계세요",
        "안녕히 가세요",
        "수고하셨습니다",
        "수고하세요",
        "مع السلامة",
        "صباح الخير",
        "مساء الخير",
        "السلام عليكم",
        "تصبحون على خير",
        "do zobaczenia",
        "до встречи",
        "до зустрічі",
    )
)
# Whom a greeting is said to: alone ("all?", "team") they greet nobody.
ADDRESSED = _folded(
    """all everyone everybody folks team guys people ppl y'all leute zusammen alle
    allerseits euch equipo todos todas gente chicos tous tout le monde vous à tutti
    ragazzi pessoal galera malta allemaal wszyscy wszystkim ziomki ребята коллеги всем
    всім allihopa allihop herkese arkadaşlar 다들 يا جماعة يلا さん 様 ちゃん 君"""
)
# Greetings written without spaces (Chinese, Japanese), with whom they greet.
WHOLE = re.compile(
    r"^(?:大家|各位|みなさん|皆さん|皆様|みんな)?"
    r"(?:早上好|早安|早|你好|您好|大家好|哈喽|嗨|晚上好|下午好|晚安|再见|拜拜|明天见|回见|"
    r"おはようございます|おはよう|おはよー|おはよ|こんにちは|こんばんは|お疲れ様です|お疲れさまです|"
    r"お疲れ様でした|お疲れさまでした|おつかれさまです|お疲れ様|お疲れさま|おつかれ|"
    r"お先に失礼します|お先です|おやすみなさい|おやすみ|また明日|また来週|またね)"
    r"(?:大家|各位|みなさん|皆さん)?$"
)
# What a greeting line holds beside its words: emoji, punctuation, "~", "ー", mentions.
BESIDE = re.compile(r"[^\w']+|_|ー|～|〜")
MENTION = re.compile(r"@\S+")


def decide_greeting(text: str) -> bool:
    """Whether a line only greets or says goodbye (to whom it names, with emoji)."""
    words = [w for w in BESIDE.split(MENTION.sub(" ", text.lower())) if w]
    kept = [w for w in words if build_folded(w) not in ADDRESSED]
    if not kept:
        return False
    if len(kept) == 1 and WHOLE.match(kept[0]):
        return True
    said = [build_folded(w) for w in kept]
    if " ".join(said) in PHRASES:
        return True
    known = GREETS | WISHES | TIMES | PARTS | WHEN | UNTIL
    if not all(w in known for w in said):
        return False
    found = set(said)
    if found & WHEN:  # "see you tomorrow", "tschüss, bis morgen"; not "tomorrow morning"
        return bool(found & PARTS or (found & UNTIL and found & (GREETS - TIMES)))
    return bool(found & GREETS or (found & WISHES and found & TIMES))
