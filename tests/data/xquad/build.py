"""Writes this folder's two files from XQuAD's own (github.com/google-deepmind/xquad,
CC BY-SA 4.0; see README.md): `python tests/data/xquad/build.py XQUAD_FOLDER`.

paragraphs.jsonl: the 240 English paragraphs, each with its article's title and number.
questions.jsonl: the 1,190 questions, each in English and in the languages below, with
the paragraph that answers it and its answer's text in each language.
"""

import json
import sys
from pathlib import Path

LANGUAGES = ("en", "de", "es", "ru", "zh")


def main(folder: Path) -> None:
    sets = {lang: json.loads((folder / f"xquad.{lang}.json").read_text()) for lang in LANGUAGES}
    here = Path(__file__).parent
    paragraphs, questions = [], {}
    for article_no, article in enumerate(sets["en"]["data"]):
        title = article["title"].replace("_", " ")
        for number, paragraph in enumerate(article["paragraphs"]):
            pid = f"a{article_no:02d}p{number}"
            paragraphs.append(
                {"id": pid, "article": article_no, "title": title, "text": paragraph["context"]}
            )
            for qa in paragraph["qas"]:
                questions[qa["id"]] = {"id": qa["id"], "article": article_no, "paragraph": pid}
    for lang in LANGUAGES:
        for article in sets[lang]["data"]:
            for paragraph in article["paragraphs"]:
                for qa in paragraph["qas"]:
                    questions[qa["id"]][lang] = qa["question"]
                    questions[qa["id"]].setdefault("answers", {})[lang] = qa["answers"][0]["text"]
    with open(here / "paragraphs.jsonl", "w", encoding="utf-8") as out:
        for item in paragraphs:
            out.write(json.dumps(item, ensure_ascii=False) + "\n")
    with open(here / "questions.jsonl", "w", encoding="utf-8") as out:
        for item in questions.values():
            assert all(lang in item for lang in LANGUAGES), item["id"]
            out.write(json.dumps(item, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
