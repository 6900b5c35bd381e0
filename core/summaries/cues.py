"""The wording by which chat states decisions, action items, arrangements, deferrals and
open answers, in the languages the bot speaks (pure data).

Cue phrases rather than a classifier: teams say these things in a few stock ways in
each language, a wrong cue costs one line of a summary, and a table can be read and
extended by anyone who speaks the language. English, German, French and Spanish are
matched together: their cues do not collide.
"""

from __future__ import annotations

import re

WEEKDAY = (
    r"(mon|tues|wednes|thurs|fri|satur|sun)day|montag|dienstag|mittwoch|donnerstag|freitag"
    r"|samstag|sonntag|lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche"
    r"|lunes|martes|miércoles|jueves|viernes"
)
MONTH = r"january|february|march|april|may|june|july|august|september|october|november|december"


# Capitalised words that open English sentences and name nobody.
SENTENCE_OPENERS = (
    "(?:it|this|that|these|those|which|what|who|there|here|the|our|your|their|my|his|her"
    "|its|a|an|one|each|every|nightly|daily|weekly)"
)


def _cues(*patterns: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)


DECISION = _cues(
    r"\b(we('ve| have)? (decided|agreed|settled|chose|picked)|decided|agreed"
    r"|let'?s go with|we('ll| will) go with|going with|approved|final(ly)?:? we)\b"
    # "We go with X" as a statement of its own ("should we go with X?", "if we go with
    # X" ask or suppose).
    r"|^go with\b|(^|[.!;:]\s+)we go with\b",
    r"\b(decision|decided|resolved|agreed|entscheidung|beschluss|décision|decisión):",
    r"\brul(es|ed|ing) out\b|\boff the table\b|\bno-go\b|\bfällt (damit )?raus\b"
    r"|\bkommt nicht in frage\b|\b(est|sont) (exclu|écarté)e?s?\b",
    r"\b\w+ it is\b|\bso be it\b|\bship it\b|\bgo for it\b|\bconfirmed\b|\bsigned off\b",
    r"\b(then|so) (we|let'?s) (ship|go|use|keep|stick|move|drop|do|take|switch|release)\b",
    r"\blet'?s (ship|use|keep|stick with|switch to|drop|do it|go ahead|release)\b",
    r"\bwe('ll| will| are going to) (ship|use|keep|stick with|switch to|drop|go ahead|release)\b",
    # German
    r"\b(entschieden|beschlossen|abgemacht|festgelegt|gebongt)\b",
    r"\bwir (nehmen|machen|bleiben bei|gehen mit|einigen uns|releasen|liefern)\b",
    r"\b(dann|so) machen wir\b|\bmachen wir so\b|\bnehmen wir\b",
    r"\bmachen wir (morgen|am|diese|nächste|heute|um)\b",
    r"^(ok|okay|gut|alles klar|d'accord|bon|vale),? (then|dann|alors|donc|entonces) \w+",
    # French
    r"\b(on a (décidé|tranché|validé|choisi)|c'est (acté|décidé|validé|parti))\b",
    r"\b(on part sur|on garde|on valide|on fait comme ça|on reste sur|on livre|je valide)\b",
    r"\b(validé|acté|retenu)\b",
    r"^(ok|okay|fine|alright|right|so|good),? ([\w:-]+ ){1,3}then\b",
    # Spanish
    r"\b(decidimos|hemos decidido|acordamos|vamos con|queda aprobado|queda decidido"
    r"|decidido|nos quedamos con|lo metemos en)\b",
)

DUE = _cues(
    rf"\b(by|before|until|due|on) (the )?({WEEKDAY}|tomorrow|tonight|eod|end of|next \w+"
    rf"|\d{{1,2}}(st|nd|rd|th)?\b|{MONTH})",
    r"\b(today|tonight|tomorrow|this (morning|afternoon|evening|week)|next week|eod|asap)\b",
    rf"\b(bis|vor|am|ab) ({WEEKDAY}|morgen|heute|ende|nächste[nmr]?|mitte)\b",
    r"\b(heute (abend|nachmittag|noch)|morgen( früh)?|nächste woche|diese woche)\b",
    rf"\b(d'ici|avant|pour) ({WEEKDAY}|demain|ce soir|la fin|lundi|mardi|vendredi)\b",
    r"\b(demain|ce soir|cet après-midi|aujourd'hui|la semaine prochaine|cette semaine)\b",
    rf"\b(para el|antes del?) ({WEEKDAY}|lunes|viernes)\b|\b(mañana|hoy)\b",
)

# A request's start that names whom it asks: "dana, ", "@dana: ", "@dana:example.org: ".
TO_SOMEONE = r"^(@?[\w.=-]+(:[\w.-]+)?[:,] )?"

ACTION = _cues(
    r"\b(i'?ll|i will|i can take|i'?m on it|i take|i'?m going to|i'?m gonna|will do)\b",
    r"\b(we'?ll|we will|i can do|i can give|i'?ll take)\b",
    rf"{TO_SOMEONE}(please|can you|could you|would you)\b|\b(todo|action item|owner)\b",
    r"\bi can (?!not\b)\w+|\bassign(ed)? to\b|\bon it\b",
    r"\blet me (check|ask|look|fix|write|send|draft|update)\b",
    # German
    r"\bich (mach|kümmer|übernehm|schreib|schick|prüf|klär|frag|bau|fix|erledig|meld|schau"
    r"|bereit|aktualisier|test|setz|trag|generier|check|organisier|buch|ruf|sag)\w*\b",
    # "mach ich heute noch", not "das mach ich nicht", "mach ich mal Mittagspause" nor
    # "wie mach ich das" (a question without its mark).
    r"(?<!wie )(?<!was )(?<!wo )(?<!warum )(?<!wann )\b(mache?|übernehme?|kläre?|schreibe?"
    r"|erledige?) ich\b(?! (nicht|nie|kein\w*|mal|jetzt mittag|feierabend|pause|schluss)\b)",
    r"\b(kannst|könntest) du\b|^bitte\b",
    # French
    r"\bje (m'en |m'|l'|les |le |la |te |vous )?(occup|fais|vais|prends|regard|envoi|relanc"
    r"|prépar|vérifi|charg|rédig|mets|corrig|test|crée|cré|génèr|organis|réserv|appell"
    r"|passe|ajout|écri|fini)\w*",
    r"\b(tu peux|pourrais-tu|peux-tu|merci de)\b",
    # Spanish
    r"\b(yo me encargo|me encargo|me ocupo|lo hago|voy a|puedes|puedo \w+)\b",
    r"^(yo )?(lo|la|los|las|les|te|se lo|se la) (miro|hago|paso|escribo|digo|confirmo|subo"
    r"|reviso|preparo|mando|envío|llamo|cuadro|vemos)\b",
)
# Someone by name taking work on ("Dana will send …", "Dana kümmert sich …").
NAMED_ACTION = re.compile(
    r"\b[A-Z][a-zé]+ (will [a-z]+|(macht|übernimmt|kümmert sich|schreibt|schickt|prüft)\b"
    r"|(s'en occupe|s'occupe|va [a-zé]+|prend)\b)"
)

ARRANGEMENT = _cues(
    r"\b(is|'s|are|am|'m) (on call|on-call|backup|the backup|covering|in charge|the owner"
    r"|the point of contact|the contact|responsible for|leading|owning|taking over)\b",
    r"\b(on-call|on call) (rota|rotation|this week|next week)\b|\bas backup\b",
    r"\b(is|as) (the )?(release )?(captain|manager|lead|owner|driver|buddy|mentor)\b",
    r"\btakes? (the )?(primary |secondary )?(on[- ]call|shift|rota|duty)\b"
    r"|\bis (primary|secondary)\b",
    # A name, capitalised even in a pattern read without case ("Dana covers"; not "the
    # script runs", "a second backup"), and no word that opens a sentence as well ("It
    # runs on staging", "This covers the old API").
    r"\b(?!" + SENTENCE_OPENERS + r"\b)(?-i:[A-Z])[a-z]+ (leads|assists|owns|covers|handles"
    r"|runs|drives)\b",
    r"\b(?!" + SENTENCE_OPENERS + r"\b)(?-i:[A-Z])[a-z]+ (is )?(as )?backup\b",
    r"\b(next|prochain(e)?|nächste[sr]?) (point|sync|meeting|réunion|call|termin|weekly"
    r"|standup|jour fixe)\b",
    r"\b(takes|owns|covers|handles) (it|this|that|the \w+)\b",
    # German
    r"\b(rufbereitschaft|bereitschaft|vertretung|vertritt|ist zuständig|sind zuständig"
    r"|als backup|übernimmt)\b",
    # French
    r"\b(d'astreinte|astreinte|en backup|remplace|est responsable|sont responsables"
    r"|référent|référente|prend le relais|parrain|marraine)\b",
    # Spanish
    r"\b(de guardia|está de guardia|como respaldo|es responsable|se encarga de"
    r"|mientras tanto|de vacaciones)\b",
)

DEFERRAL = _cues(
    r"\b(leave|keep) (it|this|that|the [\w ]{1,30}) open\b|\bpark (it|this|that)\b",
    r"\b(postpone|defer|push (it|this|that) to|table (it|this|that)|revisit)\w*\b",
    r"\b(stays|remains|is still|still|leave it|keep it) open\b",
    r"\b(bring|take) (it|this|that) (up )?(to|at|in) (the |our |next )?\w+ ?(retro|meeting"
    r"|review|sync|planning|standup|call)\b",
    r"\b(bleibt|bleiben) (erstmal |noch )?offen\b|\breste(nt)? (ouvert|en suspens)",
    r"\b(decide|discuss|settle|come back to)( (it|this|that|on it))?( \w+){0,3}"
    rf" (next|on|at|after|tomorrow|later|({WEEKDAY}))\b",
    # German
    r"\b(verschieben|vertagen|offen lassen|lassen wir (das )?offen|später entscheiden)\b",
    r"\blass(t)? uns (das |es )?([\wä]+ ){0,4}(besprechen|entscheiden|klären)\b",
    r"\bim nächsten (planning|meeting|termin|jour fixe|sprint)\b",
    r"\b(entscheiden|besprechen|klären) wir (am|nächste|morgen|später|im|beim|dann)\b",
    # French
    r"\b(on en reparle|on verra|reporter|reporté|on laisse (ça |cela )?ouvert)\b",
    r"\b(on décidera|on tranchera|à trancher|on rediscute|on en rediscute)\b",
    # Spanish
    r"\b(lo dejamos abierto|lo decidimos (el|la|mañana)|aplazar|posponer|no antes de"
    r"|lo dejamos para|más adelante|lo vemos en)\b",
)

# An answer that leaves the question open: the question stays an open question.
OPEN_ANSWER = _cues(
    r"\b(not yet|open question|don'?t know|no idea|not sure|unclear|tbd|to be decided"
    r"|nobody knows|still waiting|waiting (on|for)|good question|no news|nothing yet)\b",
    r"\b(i'?ll|let me|i will|i need to|need to) (ask|check|raise|find out|look into|confirm)\b",
    r"\b(noch nicht|weiß (ich )?nicht|keine ahnung|unklar|noch offen|gute frage"
    r"|frage ich|kläre ich|muss ich nachfragen|keine neuigkeiten|muss ich .{1,30} klären)\b",
    r"\b(pas encore|je ne sais pas|aucune idée|pas sûr|à voir|question ouverte"
    r"|bonne question|je demande|je vais demander|aucune nouvelle|pas de nouvelles)\b",
    r"\b(todavía no|aún no|no sé|ni idea|buena pregunta)\b",
)

# A message that only makes sense with the one before it ("Not yet.", "yes, do it").
ANSWER_OPENER = _cues(
    r"^(👍|✅|🙆)",
    r"^(yes|yeah|yep|yup|no|nope|not yet|sure|ok|okay|agreed|fine|sounds good|works for me"
    r"|will do|done|correct|right|exactly|\+1|go for it|true|same|good idea|makes sense"
    r"|so|and|but|then|great|perfect|super|maybe|perhaps|probably)\b",
    r"^(ja|nein|noch nicht|klar|passt|genau|gut|einverstanden|stimmt|mache ich|und|aber"
    r"|dann|also|super|perfekt|prima|vielleicht)\b",
    r"^(oui|non|pas encore|d'accord|ça marche|exact|bonne idée|carrément|ok pour moi|et"
    r"|mais|alors|donc|parfait|super|top|peut-être)\b",
    r"^(sí|no|todavía no|vale|de acuerdo|claro|quizás|igual|pues|entonces|bueno|perfecto"
    r"|genial)\b",
    # Dutch, Portuguese, Italian, Polish, Swedish, Turkish
    r"^(oké|prima|goed|nee|dus|maar|top|então|beleza|fechado|tá|sim|não|combinado"
    r"|allora|quindi|perfetto|va bene|d'accordo|sì|dobra|więc|czyli|tak|nie|zgoda|okej"
    r"|då|bra|nej|tamam|o zaman|evet|hayır)\b",
    r"^dan\b(?![,:])",  # Dutch "then", not "Dan, can you…"
    # Russian, Ukrainian, Arabic, Korean
    r"^(тогда|ну|ладно|значит|хорошо|да|нет|ок|тоді|добре|гаразд|так|ні"
    r"|تمام|طيب|إذن|اذن|خلاص|그럼|네|좋아요|오케이)(?!\w)",
    # Chinese and Japanese write no spaces: the word opens the line; "行" and "可以" alone
    # (not "行李", not "可以帮我看一下吗")
    r"^(那就|那我们|好的|嗯|じゃあ|では|それなら|了解|はい|いいえ)",
    r"^(行|可以)(?=[，。！、,.!\s]|$)",
)
ANAPHOR = _cues(
    r"\b(it|that|this|them|those|there)\b",
    r"\b(es|das|dies|dafür|darum|dazu)\b",
    r"\b(ça|cela|ceci)\b",
    r"\b(eso|esto|lo)\b",
)

QUESTION_WORDS = _cues(
    r"^(who|what|when|where|why|how|which|should|shall|do|does|did|is|are|can|could"
    r"|will|would|have|has|any)\b",
    r"^(wer|was|wann|wo|warum|wie|welche[rsn]?|sollen|sollten|können|gibt|haben|ist|sind)\b",
    r"^(qui|que|quoi|quand|où|pourquoi|comment|quel(le)?s?|est-ce|on|peut-on|faut-il)\b",
    r"^(quién|qué|cuándo|dónde|por qué|cómo|cuál)\b",
)

# A state of things worth knowing: found, fixed, done, live, back to normal.
STATUS = _cues(
    r"\b(found it|root cause|caused by|rolled back|rollback done|merged|deployed|is live"
    r"|went live|back to (normal|baseline)|resolved|closing|closed|signed off|sign-off"
    r"|is ready|are ready|fixed|is done|are done|is finished|released|started|kicked off)\b"
    r"|^(done|update)\b",
    r"\b(not negotiable|non-negotiable|mandatory|must be|has to be|have to be"
    r"|nicht verhandelbar|muss .{1,40} sein|obligatoire|doit être|doivent être)\b",
    r"\b(erledigt|fertig|gemergt|deployt|ist live|behoben|gefixt|läuft wieder|ursache"
    r"|freigegeben|abgeschlossen|ausgerollt|gestartet)\b",
    r"\b(c'est fait|terminé|terminée|fini|en prod|déployé|déployée|corrigé|résolu|en ligne"
    r"|livré|livrée|mergé|publié|publiée|lancé|lancés|lancée|lancées)\b",
    r"\b(listo|terminado|desplegado|corregido|resuelto|en producción|arreglado|solucionado"
    r"|encontrado|creado)\b",
    r"\b(sent|published|posted|shipped)\b",
)

# Talk that is not the team's work: food, pets, weekends (a question about lunch is no
# open question of the room). Matched only on lines that state nothing else.
CHATTER = _cues(
    r"\b(lunch|coffee|pizza|beer|drinks|sushi|burger|thai place|cake|birthday|kitten"
    r"|dog|puppy|avatar|office cam|weekend plans|anything fun|fun this weekend|weather)\b",
    # a cat, not the CAT tool nor `cat /etc/hosts` pasted from a shell
    r"(?-i:\b[Cc]ats?\b)(?!\s+[-/~.$<>|])",
    r"[☕🍕🍜🍺🎂🐈🐶🐱]",
    r"\b(mittags?(essen)?|kaffee|kuchen|katze|hund|geburtstag|feierabendbier|mensa)\b",
    # "resto" with a French article only: "el resto", "il resto", "o resto" is "the rest"
    r"\b(déjeuner|café|gâteau|anniversaire|apéro|croissants?|chaton)\b"
    r"|(\b(au|le|un|du|ce|petit|bon) |^)resto\b",
    r"\b(almuerzo|comida|cerveza|gato|perro|cumpleaños|bizcocho|jajaja)\b",
    # Said to mark an aside, in any language: "kurz off topic:", "OT:", "余談ですが".
    # ("OT" only as a label: "the OT budget" is overtime.)
    r"\boff[- ]?topic\b|(?-i:^OT\b|\bOT\s*:)|\bhors[- ]sujet\b|\bfuera de tema\b"
    r"|\bfuori tema\b|\bfora do assunto\b|\bне по теме\b|\bофф?топ\w*|\bpoza tematem\b"
    r"|题外话|跑题|余談|話は変わ",
)

# A meal as a deadline, not as small talk: "v3 by tomorrow lunch", "Feedback bis Mittag"
# (only words that mean "by" or "until": "till lunch" is "for lunch" in Swedish, "before
# lunch" may be a coffee).
MEAL_TIME = _cues(
    r"\b(by|until|bis|jusqu['’]?(au|à)|hasta)\s+(?!(for|für|pour|para|zum|zur)\b)(\w+\s+)?"
    r"(lunch|mittag\w*|déjeuner|almuerzo|comida)\b",
)

# "Someone" in a request that asks for a volunteer ("can someone own that", "alguien
# tiene que armar la macro", "有人能…"): a closed class in each language.
SOMEONE = _cues(
    r"\b(someone|somebody|anyone|anybody|who|alguien|quién|jemand|wer|quelqu'un|qui"
    r"|qualcuno|chi|alguém|quem|iemand|någon|vem|ktoś|kto|кто-то|кто-нибудь|кто|хтось"
    r"|хто|biri|kim)\b",
    r"有人|谁|誰か|誰が|누가|누구",
)
# A question to everyone, which several may answer in turn ("who is away next week?").
ROLL_CALL = _cues(
    r"^(who|anyone|anybody|does anyone|wer|jemand|hat jemand|qui|quelqu'un|quién|alguien)\b",
    r"\b(who|wer|qui|quién)\b.*\?",
)

# A question that asks for a number ("how many seats?", "ile TB?", "件数わかる？"): a
# closed class of words in each language, so a bare "46" said later can find it.
QUANTITY = _cues(
    r"\b(how (many|much|long|big|often)|what('s| is) the (number|count|total))\b",
    r"\b(wie ?viele?|wie lange|wie gro(ß|ss)|hoeveel|hur många|hur mycket)\b",
    # (Polish "ile"; a Turkish question with "ile", "with", is taken for one too)
    r"\b(combien|quant[oiae]s?|cu[aá]nt[oa]s?|ile|ilu)\b",
    r"(?<!\w)(сколько|скільки|kaç(ta|ı)?|كم)(?!\w)",
    r"(多少|几[个位台次天]|多久|多大|(?<!任)何[件人個台回日時本枚]|いくつ|件数|数は|몇|얼마)",
)

# Someone asked to do something: it starts an exchange rather than answering one.
REQUEST = _cues(
    rf"{TO_SOMEONE}(please|can you|could you|would you|kannst du|könntest du|bitte"
    r"|tu peux|pourrais-tu|peux-tu|merci de|puedes|podrías)\b",
)
