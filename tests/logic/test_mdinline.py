"""The HTML view's inline Markdown against markdown-it (a CommonMark reader) for the subset it
reads — code spans, emphasis, links — and against hostile values."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from okstra_git.logic.mdinline import (
    encode_url,
    escape,
    markdown_html,
    markdown_text,
    render_line,
    safe_href,
)

markdown_it = pytest.importorskip("markdown_it", reason="markdown-it-py is in the test extra")


def reader() -> object:
    """markdown-it as the HTML view reads a line: CommonMark without raw HTML, images,
    autolinks or entities (each a deliberate difference, see the module), and a link allowed
    where :func:`safe_href` allows it."""
    md = markdown_it.MarkdownIt("commonmark", {"html": False})
    md.disable(["image", "autolink", "entity"])
    md.validateLink = safe_href
    return md


MD = reader()

_PIECES = st.sampled_from(
    [
        *"ab `*_[]()\\!\"'<>:/.#%\t-+~{}|?=@$^,;",
        "\x00",
        "\x7f",
        "\u00a0",
        "\u2000",
        "한",
        "“",
        "**",
        "__",
        "``",
        "](",
        "](<",
        "approval",
        "javascript:",
        "JaVaScRiPt:",
        "java\tscript:",
        "data:",
        "vbscript:",
        "http://x",
        "https://x.y/p?q=1",
        "mailto:a@b",
        ' "t"',
        " 't'",
        "(t)",
        "%2",
        "%41",
        "<x>",
        "<script>",
        '" onmouseover="',
    ]
)
_LINES = st.lists(_PIECES, max_size=24).map("".join)


@settings(max_examples=3000, deadline=None)
@given(line=_LINES)
def test_a_line_reads_as_markdown_it_reads_it(line: str) -> None:
    assert render_line(line) == MD.renderInline(line)


@pytest.mark.parametrize(
    ("line", "html"),
    [
        ("the `approval` row", "the <code>approval</code> row"),
        ("``a ` b``", "<code>a ` b</code>"),
        ("` `` `", "<code>``</code>"),  # one space each side stripped
        ("`  `", "<code>  </code>"),  # all spaces: kept
        ("` a`", "<code> a</code>"),  # only one side: kept
        ("`a``", "`a``"),  # runs of unequal length never pair
        ("**must** keep", "<strong>must</strong> keep"),
        ("***both***", "<em><strong>both</strong></em>"),
        ("snake_case_name", "snake_case_name"),
        ("2 * 3 * 4", "2 * 3 * 4"),
        ("`**not bold**`", "<code>**not bold**</code>"),
        ("\\*literal\\*", "*literal*"),
        ("[spec](https://e.com/a b)", "[spec](https://e.com/a b)"),
        ('[spec](<https://e.com/a b> "T")', '<a href="https://e.com/a%20b" title="T">spec</a>'),
        ("[see `x`](#S-1)", '<a href="#S-1">see <code>x</code></a>'),
        ("[a [b](u)](v)", '[a <a href="u">b</a>](v)'),
        ("[x][ref]", "[x][ref]"),
        ("![img](https://e.com/i.png)", '!<a href="https://e.com/i.png">img</a>'),
        ("[m](mailto:a@b.c)", '<a href="mailto:a@b.c">m</a>'),
        ("[up](../x.md)", '<a href="../x.md">up</a>'),
    ],
)
def test_examples(line: str, html: str) -> None:
    assert render_line(line) == html
    assert MD.renderInline(line) == html


@pytest.mark.parametrize(
    "href",
    [
        "javascript:alert(1)",
        "JavaScript:alert(1)",
        "java\tscript:alert(1)",
        " javascript:alert(1)",
        "\x01javascript:alert(1)",
        "vbscript:msgbox(1)",
        "data:text/html,<script>alert(1)</script>",
        "file:///etc/passwd",
        "ftp://x",
    ],
)
def test_no_link_but_to_http_https_mailto_or_relative(href: str) -> None:
    assert not safe_href(href)
    for written in (f"[x]({href})", f"[x](<{href}>)", f"[x](<{href}> 'y')"):
        shown = markdown_html(written)
        assert "<script" not in shown.lower()
        if "<a" in shown:  # a control character or space, percent-encoded, leaves a path
            (made,) = re.findall(r'<a href="([^"]*)"', shown)
            assert made.startswith(("%", "java%09")) and safe_href(made), written
        else:
            assert shown == escape(written), written


@pytest.mark.parametrize(
    "href", ["https://e.com", "HTTP://e.com", "mailto:a@b", "#S-1", "a/b:c", "//h/p", ""]
)
def test_safe_destinations(href: str) -> None:
    assert safe_href(href)


def test_everything_else_is_escaped_text() -> None:
    hostile = '<script>alert(1)</script> <img src=x onerror="alert(2)"> &amp; &lt;b&gt;'
    assert markdown_html(hostile) == (
        "&lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x onerror=&quot;alert(2)&quot;&gt; "
        "&amp;amp; &amp;lt;b&amp;gt;"
    )
    # entities are shown as written, in text, code and link destinations alike
    assert (
        markdown_html("`&amp;` [x](a&amp;b)")
        == '<code>&amp;amp;</code> <a href="a&amp;amp;b">x</a>'
    )
    assert markdown_html("[x](javascript&colon;alert(1))") == (
        '<a href="javascript&amp;colon;alert(1)">x</a>'  # a relative path, not a scheme
    )


@given(line=_LINES)
@settings(max_examples=500, deadline=None)
def test_no_tag_or_attribute_but_its_own(line: str) -> None:
    shown = markdown_html(line + "\n" + line)
    tags = re.findall(r"<[^>]*>", shown)
    for tag in tags:
        assert re.fullmatch(
            r'</?(code|em|strong)>|<br>|</a>|<a href="[^"<>]*"( title="[^"<>]*")?>', tag
        ), tag
    for href in re.findall(r'href="([^"]*)"', shown):
        assert safe_href(href.replace("&amp;", "&").replace("&quot;", '"'))


def test_line_breaks_split_the_lines_first() -> None:
    assert markdown_html("`a\nb`") == "`a<br>b`"
    assert markdown_html("**a<br>b**") == "**a<br>b**"
    assert markdown_html("`a`<BR />**b**\r\nc") == "<code>a</code><br><strong>b</strong><br>c"
    assert markdown_html("nul\x00") == "nul\ufffd"


def test_words_are_linked_outside_code_and_links_only() -> None:
    def words(text: str) -> str:
        return text.replace("S-1", '<a href="#S-1">S-1</a>')

    assert markdown_html("S-1 `S-1` [S-1](#x) **S-1**", words) == (
        '<a href="#S-1">S-1</a> <code>S-1</code> <a href="#x">S-1</a> '
        '<strong><a href="#S-1">S-1</a></strong>'
    )


def test_destinations_are_percent_encoded_as_markdown_it_does() -> None:
    assert encode_url("a b%20c%zz/한?x=1#f") == "a%20b%20c%25zz/%ED%95%9C?x=1#f"


def test_a_hostile_run_of_brackets_is_linear_enough() -> None:
    line = "[" * 20000 + "a" + "](u)" * 20000 + "*_" * 20000 + "`" * 3000
    shown = render_line(line)
    assert shown.startswith("[[[")


def test_the_text_alone_is_what_the_html_shows() -> None:
    line = "Keep `a<b` **open**, see [the spec](https://e.com) \\* [x](javascript:y)\nnext"
    assert markdown_text(line) == "Keep a<b open, see the spec * [x](javascript:y) next"


@given(line=_LINES)
@settings(max_examples=300, deadline=None)
def test_the_text_is_the_html_without_its_tags(line: str) -> None:
    shown = re.sub(r"<[^>]*>", "", render_line(line))
    unescaped = shown.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"')
    assert markdown_text(line) == unescaped.replace("&amp;", "&")
