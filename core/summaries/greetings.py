"""Greetings and goodbyes in any language (pure): a closed class, like stop words.

A line that only greets ("moin 👋", "buenas!!", "morning!", "早～", "お疲れさまですー") or
only says goodbye ("tschüss", "hasta mañana") says nothing a colleague who missed the
room must learn: it is small talk, whatever the work it answers. A line is read as a
row of greetings, each a word that greets alone ("hola", "servus"), a wish followed by
a time of day or week ("good evening", "schönen feierabend", "хорошего вечера"), or a
fixed phrase ("see you tomorrow", "à demain", "dzień dobry"), beside whom they greet
("all", "leute", "equipo"), emoji and punctuation. Anything else, or a question, makes
it no greeting. Words that also answer a question never greet alone: "yo" (Spanish
"me"), "morgen" and "mañana" (tomorrow), "evening", "tag" (a release tag), and "bis
morgen", "do jutra", "до завтра" ("by tomorrow") only beside a goodbye.
"""

from __future__ import annotations

import re
import unicodedata


def build_normal(text: str) -> str:
    """Text with its case and Unicode forms folded, as greetings are compared: NFKC
    ("tschüss" typed decomposed), casefold ("GÜNAYDIN", "tschüß"), Turkish dotless i,
    a typographic apostrophe ("n’abend"), a letter drawn out thrice or more read once."""
    said = unicodedata.normalize("NFKC", text).replace("’", "'").replace("İ", "i")
    return re.sub(r"(.)\1{2,}", r"\1", said.casefold().replace("ı", "i"))


def _words(listed: str) -> frozenset[str]:
    return frozenset(build_normal(listed).split())


# Words that greet or part on their own (a letter drawn out is read once: "hiii", "byee").
GREETS = _words(
    """hi hey hello hallo hiya heya howdy morning mornin gm bye byebye cya laters ciao
    moin moinmoin servus mahlzeit tschüss tschüs tschüß hallöchen n'abend nabend hola
    buenas chao saludos bonjour salut slt coucou bonsoir buongiorno buonasera salve olá
    ola oi hoi doei goedemorgen goedemiddag goeienavond cześć czesc siema elo nara
    witam dobranoc привет приветик здравствуйте пока привіт вітаю бувайте hej hejsan
    hejdå tja tjena merhaba günaydın gunaydin selam görüşürüz 안녕하세요 안녕 ㅎㅇ ㅂㅂ
    ㅂㅇ مرحبا باي namaste नमस्ते grüezi grüessech grüessdi sali salü tschau pfiat"""
)
# A wish, then the time it wishes good: together they greet.
WISHES = _words(
    """good nice great lovely schönen schönes schöne guten gute bon bonne buen buena
    buenos buenas buon buona bom boa fijne goede fijn goeie miłego dobrego dobry dobrej
    доброе добрый доброго хорошего хороших спокойной добрий гарного гарних bra god
    trevlig iyi 좋은 guete"""
)
TIMES = _words(
    """morning afternoon evening night weekend day abend feierabend wochenende nacht
    journée soirée soir nuit weekend día dia días dias tarde tardes noche noches finde giornata
    serata notte pomeriggio avond dag ranka rano wieczoru wieczór dnia weekendu nocy
    утро день вечер вечера ночи выходных ранку вечір вечора ночі вихідних morgon kväll
    helg natt akşamlar geceler günler sabahlar 아침 아침이에요 noite manhã morge abig"""
)
# Greetings' words that may answer "when?".
WHEN = TIMES | _words("morning mornin mañana demain domani amanhã imorgon")
# What may come before a wish ("have a good weekend", "ha en bra helg").
LEADS = (("have", "a"), ("ha", "en"))
# Goodbyes and greetings of fixed words, any of which alone may say something else.
PHRASES = frozenset(
    " ".join(build_normal(phrase).split())
    for phrase in """guten tag|guten morgen|dzień dobry|dzien dobry|see you|see ya|see you tomorrow|
    see you later|see you soon|see you monday|hasta luego|hasta mañana|hasta pronto|
    hasta el lunes|nos vemos|nos vemos mañana|até amanhã|até logo|até já|até mais|
    à demain|a demain|à plus|a plus|à lundi|a domani|a dopo|tot ziens|tot straks|tot zo|
    vi ses|vi ses imorgon|vi ses sen|bis später|bis bald|bis dann|do zobaczenia|
    до встречи|до зустрічі|qué onda|que onda|e aí|hoşça kalın|hoşça kal|안녕히 계세요|
    안녕히 가세요|수고하셨습니다|수고하세요|내일 봬요|잘 자요|مع السلامة|صباح الخير|مساء الخير|
    السلام عليكم|تصبحون على خير""".replace("\n", "").split("|")
)
# "Until tomorrow": a goodbye beside one ("tschüss, bis morgen"), a deadline alone.
UNTIL = frozenset(
    build_normal(phrase)
    for phrase in "bis morgen|bis montag|do jutra|до завтра|до понеділка|tot morgen".split("|")
)
# Whom a greeting is said to: alone ("all?", "team") they greet nobody.
ADDRESSED = _words(
    """all everyone everybody folks team guys people ppl y'all leute zusammen alle
    allerseits mitenand zäme euch equipo todos todas gente chicos tous tout le monde vous tutti
    ragazzi pessoal galera malta allemaal wszyscy wszystkim ziomki ребята коллеги всем
    всім allihopa allihop herkese arkadaşlar 다들 يا جماعة يلا さん 様 ちゃん 君"""
)
# "a todos", "à tous", "a tutti": the "to" of whom a greeting is said to.
TO = frozenset({"a", "à"})
# Greetings written without spaces (Chinese, Japanese), with whom they greet.
WHOLE = re.compile(
    r"^(?:大家|各位|みなさん|皆さん|皆様|みんな)?"
    r"(?:早上好|早安|早|你好|您好|大家好|哈喽|嗨|晚上好|下午好|晚安|再见|拜拜|明天见|回见|"
    r"おはようございます|おはよう|おはよー|おはよ|こんにちは|こんばんは|お疲れ様です|"
    r"お疲れさまです|お疲れ様でした|お疲れさまでした|おつかれさまです|お疲れ様|お疲れさま|"
    r"おつかれ|お先に失礼します|お先です|おやすみなさい|おやすみ|また明日|また来週|またね)"
    r"(?:大家|各位|みなさん|皆さん)?$"
)
# What a greeting line holds beside its words: emoji, punctuation, "~", "ー", mentions.
BESIDE = re.compile(r"[^\w']+|_|ー|～|〜")
MENTION = re.compile(r"@\S+")
ASKS = ("?", "？")


def decide_greeting(text: str) -> bool:
    """Whether a line only greets or says goodbye (to whom it names, with emoji)."""
    words = build_words(text)
    if not words or text.rstrip().endswith(ASKS):
        return False
    if len(words) == 1 and WHOLE.match(words[0]):
        return True
    until, at = False, 0
    while at < len(words):
        taken = _take(words, at)
        if taken == 0:
            if " ".join(words[at : at + 2]) not in UNTIL:
                return False
            until, taken = True, 2
        at += taken
    return not until or any(_known(w) in GREETS for w in words)


def decide_says_when(text: str) -> bool:
    """Whether a greeting's words also name a time ("morning", "hasta mañana"), so that
    said right after a question they may be its answer ("when do we deploy?" "morning")."""
    return any(_known(word) in WHEN for word in build_words(text))


def build_words(text: str) -> list[str]:
    """A line's words (build_normal), without whom they greet ("hola a todos")."""
    said = MENTION.sub(" ", build_normal(text).replace("week-end", "weekend"))
    words = [w for w in BESIDE.split(said) if w]
    return [
        w
        for at, w in enumerate(words)
        if w not in ADDRESSED
        and not (w in TO and words[at + 1 : at + 2] and words[at + 1] in ADDRESSED)
    ]


def _take(words: list[str], at: int) -> int:
    """How many words from `at` make one greeting (0: none)."""
    for size in (3, 2):
        if " ".join(words[at : at + size]) in PHRASES:
            return size
    lead = 2 if tuple(words[at : at + 2]) in LEADS else 0
    wish = words[at + lead : at + lead + 2]
    if len(wish) == 2 and wish[0] in WISHES and wish[1] in TIMES:
        return lead + 2
    return 1 if _known(words[at]) in GREETS else 0


def _known(word: str) -> str:
    """The word as the greetings are listed: a doubled letter is read once where that
    makes a greeting ("byee", "heyy", "hii"), and only there ("see" stays "see")."""
    if word in GREETS:
        return word
    return _FOLDED.get(re.sub(r"(.)\1+", r"\1", word), word)


# Each greeting by its form with double letters single ("hallo" by "halo").
_FOLDED = {re.sub(r"(.)\1+", r"\1", word): word for word in GREETS}
