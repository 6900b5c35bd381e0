"""`knowledge-eval summaries`: key-fact coverage over the labelled room logs, without a
model (the real embedding model) and with the scripted model behind the support check."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from core.evaluation.cli import main
from core.evaluation.summaries import LogError, build_link, read_log, score_summary
from tests.evaluation.test_evaluation import write_config

LOGS = Path(__file__).parent.parent / "data" / "summaries"
ROW = re.compile(r"^(\S+)\s+(\d+)/(\d+)\s*\(\s*\d+%\)\s+(\d+)", re.M)


def bullet(*ids: str) -> str:
    return "- " + " ↳ ".join(f"x: y ([message]({build_link(i)}))" for i in ids)


def test_a_fact_counts_only_when_one_point_holds_all_its_messages():
    log = read_log(LOGS / "release-planning.json")
    fact = next(f for f in log.facts if len(f.alternatives[0]) == 2)
    first, second = sorted(fact.alternatives[0])
    apart = score_summary(log, "\n".join([bullet(first), bullet(second)]))
    together = score_summary(log, bullet(first, second))
    assert fact.fact in apart.missed and fact.fact in together.covered
    noisy = score_summary(log, bullet(sorted(log.noise)[0]))
    assert noisy.noise == [sorted(log.noise)[0]]


def test_a_log_that_names_an_unknown_message_is_refused_with_its_file(tmp_path):
    raw = json.loads((LOGS / "incident.json").read_text())
    raw["key_facts"][0]["messages"] = [["m999"]]
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(raw))
    with pytest.raises(LogError, match=r"broken\.json"):
        read_log(path)


def rows(output: str) -> dict[str, tuple[int, int, int]]:
    """The table's rows per log and the total (the groups by language and kind of room
    follow after a blank line)."""
    table = output.split("\n\n")[0]
    return {name: (int(c), int(f), int(n)) for name, c, f, n in ROW.findall(table)}


def groups(output: str) -> dict[str, tuple[int, int, int]]:
    """The rows per language and per kind of room."""
    rest = output.split("\n\n", 1)[1] if "\n\n" in output else ""
    return {name: (int(c), int(f), int(n)) for name, c, f, n in ROW.findall(rest)}


def test_without_a_model_the_first_labelled_logs_keep_most_facts_and_no_chatter(tmp_path, capsys):
    """Floors at the measured figures (docs/development/evaluation-summaries.md), so that a regression in
    what an extractive summary keeps fails here. 48/55 since the short answer to a
    question weighs like a commitment (it was 50/55: the budget of quoted lines is
    shared, and the development logs as a whole gained 4 facts for these 2)."""
    code = main(["--config", str(write_config(tmp_path)), "summaries", "--logs", str(LOGS)])
    output = capsys.readouterr().out
    assert code == 0, output
    found = rows(output)
    assert len(found) == 7, output  # six logs and the total
    covered, facts, noise = found["total"]
    assert covered / facts >= 0.87 and noise == 0, output
    quoted = TOTAL.search(output)
    assert quoted is not None and int(quoted.group(1)) <= MOST_QUOTED * 100, output


# Floors at the figures measured without a model (2 CPUs, 2026-11-29), so that a
# regression fails here: (least coverage, most chatter). Who wrote each set, and how
# each session's rules moved these figures: docs/development/evaluation-summaries.md.
# heldout2/ to heldout9/ are held out: run for their totals, never tuned on; the dev*
# sets are developed on. heldout/ and fresh/, the first sets, are reported by their
# totals too, but the small-talk model is trained on them (tests/support/
# train_smalltalk.py), so they are no longer held out. Issue 49 stays open: the
# held-out sets still let chatter in (15 messages over heldout2/ to heldout10/); every
# language keeps 85 % of its facts there.
NEW_SETS = {
    "dev2": (0.89, 1),
    "dev3": (0.9, 2),
    "dev4": (0.9, 2),
    "dev5": (0.94, 3),
    "dev6": (0.91, 4),
    "heldout2": (0.75, 1),
    "heldout3": (0.87, 2),
    "heldout4": (0.82, 2),
    "heldout5": (0.95, 0),
    "heldout": (0.86, 0),
    "fresh": (0.9, 0),
    # Long rooms (118-138 messages, a working day each), by one more helper who read one
    # example log: dev7 (es, de) developed on, heldout6 (en, ja) held out.
    "dev7": (0.93, 1),
    "heldout6": (0.86, 0),
    # Six more (es, en, de, zh, the languages short of 85 %), by two more helpers who read
    # one example log: dev8 developed on (44/53 and 10 chatter at first), heldout7 held out.
    "dev8": (0.94, 6),
    "heldout7": (0.96, 2),
    # Six more each (es twice, de, en, zh, ja; rooms of trades beyond software: month-end
    # close, a hospital ward, a warehouse, a construction site, a restaurant chain), by two
    # more helpers who read one example log: dev9 developed on (46/54 and 8 chatter at
    # first), heldout8 held out (49/54 and 7 chatter at first).
    "dev9": (0.88, 3),
    "heldout8": (0.92, 3),
    # Six more each (es four times, de, en: Spanish was the held-out language furthest
    # below 85 %), by two more helpers who read one example log: dev10 developed on
    # (46/54 and 9 chatter at first), heldout9 held out (47/53 and no chatter at first).
    "dev10": (0.98, 7),
    "heldout9": (0.9, 0),
    # Six more each (de four times, fr, it: German was then the held-out language below
    # 85 %), by two more helpers who read one example log: dev11 developed on (49/54 and
    # 6 chatter at first), heldout10 held out (51/54 and 5 chatter at first).
    "dev11": (0.9, 4),
    "heldout10": (0.94, 5),
}
# A summary quotes at most this share of the room's messages: coverage bought by
# quoting (nearly) everything is no summary (an experiment reached 91 % of dev2's facts
# by quoting 81 % of its messages).
MOST_QUOTED = 0.7
TOTAL = re.compile(r"^total\s+\d+/\d+\s*\(\s*\d+%\)\s+\d+\s+(\d+)%", re.M)


@pytest.mark.parametrize("folder", sorted(NEW_SETS))
def test_logs_nobody_tuned_on_are_reported_per_language_and_hold_their_floor(
    tmp_path, capsys, folder
):
    least, most_noise = NEW_SETS[folder]
    held_out = folder.startswith("heldout") or folder == "fresh"
    code = main(
        ["--config", str(write_config(tmp_path)), "summaries", "--logs", str(LOGS / folder)]
        + ["--totals"] * held_out
    )
    output = capsys.readouterr().out
    assert code == 0, output
    covered, facts, noise = rows(output)["total"]
    # A held-out set is reported by its totals: what it missed is not shown to be tuned on.
    assert (": missed " in output) == (covered < facts and not held_out), output
    assert covered / facts >= least and noise <= most_noise, output
    quoted = TOTAL.search(output)
    assert quoted is not None and int(quoted.group(1)) <= MOST_QUOTED * 100, output
    languages = {json.loads(p.read_text())["language"] for p in (LOGS / folder).glob("*.json")}
    if len(languages) > 1:  # the report says how each language fared
        assert languages <= set(groups(output)), output


def summary_model(body: dict) -> dict:
    """Cites the first three messages for one decision; invents a second one citing
    message 4, which the support check then finds unsupported."""
    schema = body["response_format"]["json_schema"]["name"]
    if schema == "summary_support":
        points = re.findall(r"^Point (\d+): (.*)$", body["messages"][1]["content"], re.M)
        return {
            "points": [
                {"point": int(n), "risk": "high" if "invented" in text else "low"}
                for n, text in points
            ]
        }
    return {
        "tldr": "t",
        "action_items": [],
        "open_questions": [],
        "decisions": [
            {"text": "what the first messages say", "messages": [1, 2, 3]},
            {"text": "an invented decision", "messages": [4]},
        ],
    }


async def test_with_a_model_the_report_scores_the_checked_summary(tmp_path, llm, capsys):
    llm.respond = summary_model
    config = write_config(tmp_path, f'\n[llm]\nurl = "{llm.url}"\nmodel = "scripted"\n')
    log = tmp_path / "logs"
    log.mkdir()
    (log / "incident.json").write_text((LOGS / "incident.json").read_text())
    code = await asyncio.to_thread(
        main, ["--config", str(config), "summaries", "--logs", str(log), "--no-embeddings"]
    )
    output = capsys.readouterr().out
    assert code == 0, output
    assert "without a model" in output and "model scripted" in output
    checks = [
        call["messages"][1]["content"]
        for call in llm.history
        if call["response_format"]["json_schema"]["name"] == "summary_support"
    ]
    assert len(checks) == 1 and "Point 2: an invented decision" in checks[0], "one check"
    total = re.search(r"^total\s+\S+\s*\(\s*\d+%\)\s+\d+\s+\d+%\s+(\d+)/(\d+)", output, re.M)
    assert total is not None and int(total.group(2)) == 10, output
