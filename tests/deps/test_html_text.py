"""fetch_webpage's HTML → Markdown (markdownify): what a reader sees, in Markdown."""

from __future__ import annotations

from codecompanion.tools.builtin._support.html_text import html_to_markdown

PAGE = """<html><head><title>Title only in head</title><style>p {color: red}</style></head>
<body><script>alert('x')</script><noscript>enable js</noscript>
<h2>Install</h2><p>Run <code>make install</code>, then read <a href="https://x/doc">the doc</a>.</p>
<ul><li>one</li><li>two<ul><li>nested</li></ul></li></ul>
<pre><code>print("hi")</code></pre>
<p><em>emphasis</em> and <strong>strong</strong></p><img src="logo.png" alt="logo">


<p>after blanks</p></body></html>"""


def test_visible_text_becomes_markdown() -> None:
    text = html_to_markdown(PAGE)
    assert text.startswith("## Install")
    assert "`make install`" in text and "[the doc](https://x/doc)" in text
    assert "- one" in text and "nested" in text
    assert '```\nprint("hi")\n```' in text
    assert "*emphasis*" in text and "**strong**" in text
    assert "\n\n\n" not in text


def test_invisible_content_is_dropped() -> None:
    text = html_to_markdown(PAGE)
    for hidden in ("alert", "color: red", "enable js", "Title only in head", "logo.png"):
        assert hidden not in text
