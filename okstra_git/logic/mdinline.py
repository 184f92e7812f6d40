"""Inline Markdown as HTML, for the text a report's values hold: code spans, emphasis and
strong emphasis, and links — the inline subset an agent writes in a one-line value. Pure.

The rules are CommonMark's (spec 0.31) as markdown-it reads them, so the HTML view shows what a
CommonMark reader of the Markdown view shows:

- a code span opens at a run of backticks and closes at the next run of the same length; a run
  with no partner is text; inside, line breaks are spaces, and one leading and one trailing space
  are dropped when both are there and the content is not all spaces; nothing inside is read;
- ``*``/``_`` runs open and close emphasis by the flanking rules and the rule of three, the
  innermost pair of doubled delimiters being ``<strong>``;
- ``[text](destination "title")`` is a link, its text read inline (no link inside a link),
  its destination percent-encoded as markdown-it encodes it;
- a backslash before ASCII punctuation makes it text.

Report data comes from agents and remotes, so it is hostile: every character of text is
HTML-escaped; a link is made only when its destination has no scheme (relative, ``#id``,
``//host``) or is ``http:``, ``https:`` or ``mailto:`` — anything else (``javascript:``,
``data:``, ``vbscript:``, ``file:``) leaves the whole ``[text](…)`` as text; no raw HTML, no
image (``![a](u)`` is ``!`` and a link), no autolink, no entity is read (``&amp;`` is shown as
written), and no attribute takes anything but escaped text.

Deliberate differences from markdown-it's ``renderInline`` (the tests hold the rest equal):
a value is split at its line breaks first (a newline, or ``<br>`` written in the value, which
the Markdown view writes for one) and each line is read on its own, the breaks kept as
``<br>`` — so a span never runs across a break; entities are not decoded (in text and in link
destinations and titles alike); the ``NUL`` character is shown as U+FFFD as markdown-it does.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from urllib.parse import quote

MAX_NESTING = 20
"""How deep links may nest while being looked for (markdown-it's ``maxNesting``): past it the
rest of the line is text, which bounds the work a hostile value can cause."""

SAFE_SCHEMES = frozenset({"http", "https", "mailto"})
"""The schemes a link may have; a destination with no scheme (relative) is safe as well."""

_BREAK = re.compile(r"\r\n|\r|\n|<br\s*/?>", re.IGNORECASE)
_ESCAPABLE = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_TERMINATORS = re.compile(r"[\n!#$%&*+\-:<=>@\[\\\]^_`{}~]")
_WHITESPACE = frozenset("\t\n\x0b\x0c\r \xa0\u1680\u202f\u205f\u3000") | frozenset(
    map(chr, range(0x2000, 0x200B))
)
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
_URL_KEEP = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789;/?:@&=+$,-_.!~*'()#"
)
_HEX = frozenset("0123456789abcdefABCDEF")


def escape(text: str) -> str:
    """``text`` safe in HTML text and in a double-quoted attribute (``&<>"``)."""
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )


def safe_href(url: str) -> bool:
    """Whether a link may point at ``url``: no scheme, or one of :data:`SAFE_SCHEMES`. Read as
    a browser reads it: tabs and line breaks anywhere and C0 controls and spaces around it are
    dropped first, so ``java\\tscript:`` is ``javascript:``."""
    cleaned = re.sub(r"[\t\n\r]", "", url).strip("".join(map(chr, range(0x21))))
    match = _SCHEME.match(cleaned)
    return match is None or match.group(1).lower() in SAFE_SCHEMES


def encode_url(url: str) -> str:
    """``url`` percent-encoded as markdown-it encodes a link destination (mdurl's ``encode``):
    ASCII letters, digits and URL punctuation kept, a valid ``%XX`` kept, the rest encoded."""
    out = []
    i, n = 0, len(url)
    while i < n:
        ch = url[i]
        if ch == "%" and i + 2 < n and url[i + 1] in _HEX and url[i + 2] in _HEX:
            out.append(url[i : i + 3])
            i += 3
            continue
        out.append(ch if ch in _URL_KEEP else quote(ch, safe="", errors="replace"))
        i += 1
    return "".join(out)


def _unescape(text: str) -> str:
    """Backslash escapes of ASCII punctuation removed (link destinations and titles)."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", text) if "\\" in text else text


def _punct(ch: str) -> bool:
    return ch in _ESCAPABLE or unicodedata.category(ch).startswith(("P", "S"))


class _Delim:
    """One ``*`` or ``_`` of a run: its run's length, its token, whether it opens or closes."""

    __slots__ = ("close", "end", "length", "marker", "open", "token")

    def __init__(self, marker: str, length: int, token: int, opens: bool, closes: bool) -> None:
        self.marker = marker
        self.length = length
        self.token = token
        self.end = -1
        self.open = opens
        self.close = closes


class _Line:
    """One line of inline Markdown read into tokens ``[kind, text, href, title]``: kinds
    ``text``, ``code``, ``em``/``strong``/``a`` (opening) and ``/em``/``/strong``/``/a``."""

    def __init__(self, src: str) -> None:
        self.src = src
        self.pos = 0
        self.max = len(src)
        self.level = 0
        self.tokens: list[list[str]] = []
        self.pending = ""
        self.delims: list[_Delim] = []
        self.scopes: list[list[_Delim]] = [self.delims]
        self.outer: list[list[_Delim]] = []
        self.cache: dict[int, int] = {}
        self.last_runs: dict[int, int] | None = None
        self.rules: tuple[Callable[[bool], bool], ...] = (
            self._text,
            self._escape,
            self._backticks,
            self._emphasis,
            self._link,
        )

    # -- tokens --------------------------------------------------------------------------------

    def _push(self, kind: str, text: str = "", href: str = "", title: str = "") -> None:
        if self.pending:
            self.tokens.append(["text", self.pending, "", ""])
            self.pending = ""
        if kind.startswith("/"):
            self.delims = self.outer.pop()
        self.tokens.append([kind, text, href, title])
        if kind == "a":
            self.outer.append(self.delims)
            self.delims = []
            self.scopes.append(self.delims)

    def tokenize(self) -> None:
        end = self.max
        while self.pos < end:
            matched = self.level < MAX_NESTING and any(rule(False) for rule in self.rules)
            if matched:
                if self.pos >= end:
                    break
                continue
            self.pending += self.src[self.pos]
            self.pos += 1
        if self.pending:
            self.tokens.append(["text", self.pending, "", ""])
            self.pending = ""

    def _skip(self) -> None:
        """Move past one token without making it (what a link's text holds)."""
        start = self.pos
        if start in self.cache:
            self.pos = self.cache[start]
            return
        matched = False
        if self.level < MAX_NESTING:
            for rule in self.rules:
                self.level += 1
                matched = rule(True)
                self.level -= 1
                if matched:
                    break
        else:
            self.pos = self.max
        if not matched:
            self.pos += 1
        self.cache[start] = self.pos

    # -- rules: each returns whether it read something at pos, and moves pos past it -----------

    def _text(self, silent: bool) -> bool:
        found = _TERMINATORS.search(self.src, self.pos, self.max)
        end = found.start() if found else self.max
        if end == self.pos:
            return False
        if not silent:
            self.pending += self.src[self.pos : end]
        self.pos = end
        return True

    def _escape(self, silent: bool) -> bool:
        pos = self.pos
        if self.src[pos] != "\\" or pos + 1 >= self.max:
            return False
        escaped = self.src[pos + 1]
        if not silent:
            self._push("text", escaped if escaped in _ESCAPABLE else "\\" + escaped)
        self.pos = pos + 2
        return True

    def _backticks(self, silent: bool) -> bool:
        src, start = self.src, self.pos
        if src[start] != "`":
            return False
        pos = start + 1
        while pos < self.max and src[pos] == "`":
            pos += 1
        length = pos - start
        if self.last_runs is None:
            self.last_runs = {}
            for run in re.finditer(r"`+", src):
                self.last_runs[len(run.group())] = run.start()
        if self.last_runs.get(length, -1) >= pos:
            end = pos
            while (close := src.find("`", end)) != -1 and close < self.max:
                end = close + 1
                while end < len(src) and src[end] == "`":
                    end += 1
                if end > self.max:
                    break
                if end - close == length:
                    if not silent:
                        content = src[pos:close].replace("\n", " ")
                        if content.startswith(" ") and content.endswith(" ") and content.strip(" "):
                            content = content[1:-1]
                        self._push("code", content)
                    self.pos = end
                    return True
        if not silent:
            self.pending += src[start:pos]
        self.pos = pos
        return True

    def _emphasis(self, silent: bool) -> bool:
        src, start = self.src, self.pos
        marker = src[start]
        if silent or marker not in "*_":
            return False
        pos = start
        while pos < self.max and src[pos] == marker:
            pos += 1
        before = src[start - 1] if start > 0 else " "
        after = src[pos] if pos < self.max else " "
        punct_before, punct_after = _punct(before), _punct(after)
        space_before, space_after = before in _WHITESPACE, after in _WHITESPACE
        left = not (space_after or (punct_after and not (space_before or punct_before)))
        right = not (space_before or (punct_before and not (space_after or punct_after)))
        intraword = marker == "*"
        opens = left and (intraword or not right or punct_before)
        closes = right and (intraword or not left or punct_after)
        for _ in range(pos - start):
            self._push("text", marker)
            self.delims.append(_Delim(marker, pos - start, len(self.tokens) - 1, opens, closes))
        self.pos = pos
        return True

    def _label_end(self, start: int) -> int:
        """Where the link text opened at ``start`` closes, or -1 (none, or a link inside)."""
        saved = self.pos
        self.pos = start + 1
        level = 1
        found = False
        while self.pos < self.max:
            ch = self.src[self.pos]
            if ch == "]":
                level -= 1
                if level == 0:
                    found = True
                    break
            before = self.pos
            self._skip()
            if ch == "[":
                if before == self.pos - 1:
                    level += 1
                else:
                    self.pos = saved
                    return -1
        end = self.pos if found else -1
        self.pos = saved
        return end

    def _spaces(self, pos: int) -> int:
        while pos < self.max and self.src[pos] in " \t\n":
            pos += 1
        return pos

    def _destination(self, pos: int) -> tuple[int, str] | None:
        src, end = self.src, self.max
        start = pos
        if src[pos] == "<":
            pos += 1
            while pos < end:
                ch = src[pos]
                if ch in "\n<":
                    return None
                if ch == ">":
                    return pos + 1, _unescape(src[start + 1 : pos])
                pos += 2 if ch == "\\" and pos + 1 < end else 1
            return None
        depth = 0
        while pos < end:
            ch = src[pos]
            if ch == " " or ord(ch) < 0x20 or ch == "\x7f":
                break
            if ch == "\\" and pos + 1 < end:
                if src[pos + 1] == " ":
                    break
                pos += 2
                continue
            if ch == "(":
                depth += 1
                if depth > 32:
                    return None
            if ch == ")":
                if depth == 0:
                    break
                depth -= 1
            pos += 1
        if start == pos or depth != 0:
            return None
        return pos, _unescape(src[start:pos])

    def _title(self, pos: int) -> tuple[int, str] | None:
        src, end = self.src, self.max
        if pos >= end or src[pos] not in "\"'(":
            return None
        close = ")" if src[pos] == "(" else src[pos]
        start = pos = pos + 1
        while pos < end:
            ch = src[pos]
            if ch == close:
                return pos + 1, _unescape(src[start:pos])
            if ch == "(" and close == ")":
                return None
            if ch == "\\" and pos + 1 < end:
                pos += 1
            pos += 1
        return None

    def _link(self, silent: bool) -> bool:
        start = self.pos
        if self.src[start] != "[":
            return False
        label_end = self._label_end(start)
        if label_end < 0:
            return False
        pos = label_end + 1
        if pos >= self.max or self.src[pos] != "(":
            return False  # a reference link: a line has no definitions
        pos = self._spaces(pos + 1)
        if pos >= self.max:
            return False
        href = title = ""
        destination = self._destination(pos)
        if destination is not None:
            if safe_href(encoded := encode_url(destination[1].strip())):
                href, pos = encoded, destination[0]
            after = self._spaces(pos)
            titled = self._title(after)
            if after < self.max and after != pos and titled is not None:
                pos, title = titled
                pos = self._spaces(pos)
            else:
                pos = after
        if pos >= self.max or self.src[pos] != ")":
            return False
        if not silent:
            end = self.max
            self.pos, self.max = start + 1, label_end
            self._push("a", href=href, title=title)
            self.level += 1
            self.tokenize()
            self.level -= 1
            self._push("/a")
            self.max = end
        self.pos = pos + 1
        return True

    # -- emphasis: pair the delimiters, then turn the pairs into tags ----------------------------

    def finish(self) -> list[list[str]]:
        for delims in self.scopes:
            _pair(delims)
        for delims in self.scopes:
            self._tags(delims)
        return self.tokens

    def _tags(self, delims: list[_Delim]) -> None:
        i = len(delims) - 1
        while i >= 0:
            opener = delims[i]
            if opener.end == -1:
                i -= 1
                continue
            closer = delims[opener.end]
            strong = (
                i > 0
                and delims[i - 1].end == opener.end + 1
                and delims[i - 1].marker == opener.marker
                and delims[i - 1].token == opener.token - 1
                and delims[opener.end + 1].token == closer.token + 1
            )
            tag = "strong" if strong else "em"
            self.tokens[opener.token] = [tag, "", "", ""]
            self.tokens[closer.token] = ["/" + tag, "", "", ""]
            if strong:
                self.tokens[delims[i - 1].token] = ["text", "", "", ""]
                self.tokens[delims[opener.end + 1].token] = ["text", "", "", ""]
                i -= 1
            i -= 1


def _pair(delims: list[_Delim]) -> None:
    """Match each closing delimiter with the nearest opener it may close (CommonMark's process
    emphasis, with markdown-it's bounds that keep it linear)."""
    bottom: dict[str, list[int]] = {}
    head = 0
    last_token = -2
    jumps: list[int] = []
    for index, closer in enumerate(delims):
        jumps.append(0)
        if delims[head].marker != closer.marker or last_token != closer.token - 1:
            head = index
        last_token = closer.token
        if not closer.close:
            continue
        floors = bottom.setdefault(closer.marker, [-1] * 6)
        slot = (3 if closer.open else 0) + closer.length % 3
        at = head - jumps[head] - 1
        floor = at
        while at > floors[slot]:
            opener = delims[at]
            if opener.marker != closer.marker:
                at -= jumps[at] + 1
                continue
            if opener.open and opener.end < 0:
                odd = (
                    (opener.close or closer.open)
                    and (opener.length + closer.length) % 3 == 0
                    and (opener.length % 3 != 0 or closer.length % 3 != 0)
                )
                if not odd:
                    jump = jumps[at - 1] + 1 if at > 0 and not delims[at - 1].open else 0
                    jumps[index] = index - at + jump
                    jumps[at] = jump
                    closer.open = False
                    opener.end = index
                    opener.close = False
                    floor = -1
                    last_token = -2
                    break
            at -= jumps[at] + 1
        if floor != -1:
            floors[slot] = floor


def _html(tokens: list[list[str]], words: Callable[[str], str] | None) -> str:
    out: list[str] = []
    text: list[str] = []
    in_link = 0

    def flush() -> None:
        if text:
            escaped = escape("".join(text))
            out.append(words(escaped) if words is not None and not in_link else escaped)
            text.clear()

    for kind, content, href, title in tokens:
        if kind == "text":
            text.append(content)
            continue
        flush()
        if kind == "code":
            out.append(f"<code>{escape(content)}</code>")
        elif kind == "a":
            shown_title = f' title="{escape(title)}"' if title else ""
            out.append(f'<a href="{escape(href)}"{shown_title}>')
            in_link += 1
        elif kind == "/a":
            out.append("</a>")
            in_link -= 1
        else:
            out.append(f"<{kind}>")
    flush()
    return "".join(out)


def render_line(line: str, words: Callable[[str], str] | None = None) -> str:
    """One line of inline Markdown as HTML. ``words``, when given, rewrites the escaped text
    outside code spans and links (it links the ids a report knows)."""
    parsed = _Line(line.replace("\0", "\ufffd"))
    parsed.tokenize()
    return _html(parsed.finish(), words)


def markdown_html(text: str, words: Callable[[str], str] | None = None) -> str:
    """``text`` as HTML: each line (split at newlines and at ``<br>`` written in it) read as
    inline Markdown (:func:`render_line`), the lines joined with ``<br>``."""
    return "<br>".join(render_line(line, words) for line in _BREAK.split(str(text)))


def markdown_text(text: str) -> str:
    """What :func:`markdown_html` shows of ``text``, as plain text (no tags, nothing escaped):
    for a place that holds text only, such as an SVG label or a tooltip. Lines join with a
    space."""
    lines = []
    for line in _BREAK.split(str(text)):
        parsed = _Line(line.replace("\0", "\ufffd"))
        parsed.tokenize()
        lines.append("".join(t[1] for t in parsed.finish() if t[0] in ("text", "code")))
    return " ".join(lines)
