"""The scripted model that reads its prompt, shared by the end-to-end tests and the
container stack (tests/deploy/scripted_model.py): standard library only, so that it
runs in the bot's image with the tests folder mounted."""

from __future__ import annotations

import re

POINT = re.compile(r"^Point (\d+): (.*)\n((?:  \[\d+\] .*\n?)*)", re.M)
SOURCE = re.compile(r'<source n="(\d+)" kind="([^"]+)" title="[^"]*">\n(.*?)\n</source>', re.S)


def verdict(**changes) -> dict:
    base = {
        "toxicity": 0,
        "injection": False,
        "kind": "command",
        "in_scope": True,
        "remember": False,
        "needs_context": False,
        "standalone_question": "",
    }
    return base | changes


def question_in(prompt: str) -> str:
    """The asker's question as the prompt fences it (`<question>` ... `</question>`)."""
    return prompt.rsplit("<question>\n", 1)[1].rsplit("\n</question>", 1)[0]


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def judge_points(user: str) -> dict:
    """A summary's points judged by reading their cited messages: most of a point's words
    must be in them, else the point is not supported ("high")."""
    verdicts = []
    for number, text, cited in POINT.findall(user):
        said = words(cited)
        own = {word for word in words(text) if len(word) > 3}
        supported = not own or len(own & said) * 2 >= len(own)
        verdicts.append({"point": int(number), "risk": "low" if supported else "high"})
    return {"points": verdicts}


def reading_model(body: dict) -> str | dict:
    """A scripted model that reads its prompt: the pre-step grades "parasites" as toxic
    and makes an amend follow-up stand-alone from the conversation; the answer quotes
    the source line that shares most words with the question."""
    schema = body.get("response_format", {}).get("json_schema", {}).get("name")
    user = body["messages"][1]["content"]
    if schema == "prestep":
        question = question_in(user)
        conversation = user.split("<conversation>\n", 1)[1].split("</conversation>")[0].strip()
        asked = [line.split(": ", 1)[1] for line in conversation.splitlines() if "?" in line]
        rewrite = f"{asked[-1]} ({question})" if asked and "also" in question else question
        toxicity = 8 if "parasites" in question else 0
        return verdict(toxicity=toxicity, standalone_question=rewrite)
    if schema == "support":
        return {"risk": "low"}
    if schema == "summary_support":
        return judge_points(user)
    question = words(question_in(user))
    best = max(
        (
            (number, kind, line)
            for number, kind, text in SOURCE.findall(user)
            for line in text.splitlines()
        ),
        key=lambda found: len(words(found[2]) & question),
        default=None,
    )
    if best is None:
        return "I found nothing."
    number, kind, line = best
    return f"From the {kind}: {line.split(': ', 1)[-1]} [{number}]"
