"""Markdown to blocks with markdown-it-py (CommonMark and tables): ATX and setext
headings, and lists, tables and code taken whole from the source as written."""

from __future__ import annotations

from markdown_it import MarkdownIt
from markdown_it.token import Token

from core.knowledge.parse.blocks import Block, BlockKind

PARSER = MarkdownIt("commonmark").enable("table")
OPENERS: dict[str, BlockKind] = {
    "bullet_list_open": "list",
    "ordered_list_open": "list",
    "table_open": "table",
    "blockquote_open": "text",
}


def _lines(source: list[str], token: Token) -> list[str]:
    start, end = token.map or (0, 0)
    return source[start:end]


def _closing(tokens: list[Token], start: int) -> int:
    """The index of the token that closes the one opened at `start`."""
    depth = 0
    for index in range(start, len(tokens)):
        depth += tokens[index].nesting
        if depth == 0:
            return index
    return len(tokens) - 1


def markdown_to_blocks(text: str) -> list[Block]:
    """The document's blocks in order; headings carry their level (# = 1)."""
    source = text.splitlines()
    tokens = PARSER.parse(text)
    blocks: list[Block] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token.type == "heading_open":
            blocks.append(Block("heading", (tokens[index + 1].content.strip(),), int(token.tag[1])))
        elif token.type == "paragraph_open":
            blocks.append(Block("text", (" ".join(tokens[index + 1].content.split()),)))
        elif token.type in ("fence", "code_block"):
            lines = [line for line in _lines(source, token)]
            blocks.append(Block("code", tuple(lines or token.content.splitlines())))
        elif token.type == "html_block" and token.content.strip():
            blocks.append(Block("text", (" ".join(token.content.split()),)))
        elif token.type in OPENERS:
            end = _closing(tokens, index)
            blocks.append(_container(OPENERS[token.type], source, tokens[index : end + 1]))
            index = end
        index += 1
    return [block for block in blocks if block.text.strip()]


def _container(kind: BlockKind, source: list[str], tokens: list[Token]) -> Block:
    """A list as its items, a table as its rows (the header and its rule repeat in every
    piece), a quote as one paragraph: each from the source lines."""
    if kind == "list":
        depth = tokens[0].level + 1
        items = [
            "\n".join(line.rstrip() for line in _lines(source, t)).strip()
            for t in tokens
            if t.type == "list_item_open" and t.level == depth
        ]
        return Block("list", tuple(item for item in items if item))
    lines = [line.rstrip() for line in _lines(source, tokens[0]) if line.strip()]
    if kind == "table":
        return Block("table", tuple(lines), header=min(2, len(lines)))
    return Block("text", (" ".join(" ".join(lines).split()),))
