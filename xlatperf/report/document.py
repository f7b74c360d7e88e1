# SPDX-License-Identifier: BSD-3-Clause
"""The report's document model (headings, paragraphs, lists, tables, figures), rendered to
Markdown and to HTML by one renderer per block kind and format."""

import html
import re


class Document:
    def __init__(self):
        self.blocks: list[tuple] = []

    def heading(self, level: int, text: str):
        self.blocks.append(("h", level, text))

    def paragraph(self, text: str):
        self.blocks.append(("p", text))

    def items(self, items: list[str]):
        self.blocks.append(("ul", items))

    def table(self, header: list[str], rows: list[list[str]], caption: str = ""):
        self.blocks.append(("table", header, rows, caption))

    def figure(self, png: str, svg: str, caption: str):
        self.blocks.append(("img", png, svg, caption))

    def render(self, formats: dict) -> list[str]:
        """Each block through the renderer of its kind: formats[kind](*the block's fields)."""
        return [formats[block[0]](*block[1:]) for block in self.blocks]

    def markdown(self) -> str:
        return "\n".join(self.render(MARKDOWN))

    def html(self, title: str) -> str:
        style = ("body{font-family:sans-serif;max-width:70em;margin:auto;padding:1em}"
                 "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #bbb;"
                 "padding:.2em .5em;text-align:right}th{background:#eee}caption{font-style:"
                 "italic;text-align:left}figure img{max-width:100%}code{background:#f4f4f4}")
        return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                f"<title>{html.escape(title)}</title><style>{style}</style></head><body>\n"
                + "\n".join(self.render(HTML)) + "\n</body></html>\n")


def markdown_table(header: list[str], rows: list[list[str]], caption: str) -> str:
    def cell(text) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")
    lines = ["| " + " | ".join(cell(h) for h in header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return (f"*{caption}*\n\n" if caption else "") + "\n".join(lines) + "\n"


def html_table(header: list[str], rows: list[list[str]], caption: str) -> str:
    esc = html.escape
    cap = f"<caption>{esc(caption)}</caption>" if caption else ""
    head = "".join(f"<th>{esc(str(h))}</th>" for h in header)
    cells = "".join("<tr>" + "".join(f"<td>{inline_html(str(c))}</td>" for c in row)
                    + "</tr>" for row in rows)
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{cells}</tbody></table>"


# Document block renderers per output format, by block kind.
MARKDOWN = {
    "h": lambda level, text: f"{'#' * level} {text}\n",
    "p": lambda text: text + "\n",
    "ul": lambda items: "".join(f"* {item}\n" for item in items),
    "table": markdown_table,
    "img": lambda png, svg, caption: f"![{caption}]({png})\n\n*{caption}* ([SVG]({svg}))\n",
}
HTML = {
    "h": lambda level, text: f"<h{level}>{html.escape(text)}</h{level}>",
    "p": lambda text: f"<p>{inline_html(text)}</p>",
    "ul": lambda items: "<ul>" + "".join(f"<li>{inline_html(i)}</li>" for i in items) + "</ul>",
    "table": html_table,
    "img": lambda png, svg, caption: (f'<figure><img src="{html.escape(svg)}" '
                                      f'alt="{html.escape(caption)}"><figcaption>'
                                      f'{html.escape(caption)} (<a href="{html.escape(png)}">'
                                      "PNG</a>)</figcaption></figure>"),
}


def inline_html(text: str) -> str:
    """Escape, then render `code` and **bold** spans (the only inline Markdown used here)."""
    text = html.escape(text)
    text = re.sub(r"`([^`]+)`", r"<code>\1</code>", text)
    return re.sub(r"\*\*([^*]+)\*\*", r"<b>\1</b>", text)
