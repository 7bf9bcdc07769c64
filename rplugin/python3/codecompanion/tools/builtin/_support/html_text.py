"""HTML as Markdown for the model (markdownify, MIT): headings, links, emphasis, lists, code."""

from __future__ import annotations

import re

# Content that is never text a reader sees.
_INVISIBLE = ("head", "script", "style", "noscript", "template", "svg", "img", "iframe")


def html_to_markdown(html: str) -> str:
    """The page's visible text as Markdown (ATX headings, `-` bullets), blank runs squeezed."""
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html, "html.parser")
    for tag in soup(list(_INVISIBLE)):
        tag.decompose()
    text = MarkdownConverter(heading_style="ATX", bullets="-").convert_soup(soup)
    return re.sub(r"\n{3,}", "\n\n", str(text)).strip()
