"""A brief as sections of items, cut to a token budget by priority and rendered as Markdown.

Token estimate: one token per 3 bytes of UTF-8, rounded up (``estimate``). Tokenizers give
about 4 bytes per token on English prose and 3 or fewer on text dense in ids, hashes and
paths, which a brief is full of; counting 3 keeps a brief cut to N tokens under N on the
tokenizers agents use, at the price of leaving a little room unused on plain prose. No
tokenizer is imported: the brief must be cheap to make on every session start.

Cutting keeps every section of priority 0 (the truth: what must not be acted on) whole, then
adds items section by section in priority order until one does not fit (nothing less
important takes its place), and says at the end what it left out and how to see it. When
the truth alone is larger than the budget it is printed anyway, marked as over budget, the
note saying what it could not cut and how large the brief printed is: a brief without the
truth would be worse than a long one, and a flag that promised less would be a lie.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

BYTES_PER_TOKEN = 3
TRUTH = 0


def estimate(text: str) -> int:
    """Estimated tokens of text: UTF-8 bytes / 3, rounded up."""
    return -(-len(text.encode()) // BYTES_PER_TOKEN)


class Item:
    """One entry of a section: its Markdown ``lines`` and its JSON ``data``. Either given, or
    made when first asked for (``made``): a brief of 1,000 claims shows the 40 that fit, and
    the rest need only be counted. ``key`` is the id of the entry it shows (quoting.py: whose
    text it is), where that is known without making it."""

    __slots__ = ("_made", "data", "key", "lines", "placeholder")
    lines: list[str]
    data: object

    def __init__(
        self,
        lines: list[str] | None = None,
        data: object = None,
        placeholder: bool = False,  # "- none": nothing to say is left out when it is cut
        *,
        made: Callable[[], tuple[list[str], object]] | None = None,
        key: str | None = None,
    ) -> None:
        if made is None:
            self.lines, self.data = (lines if lines is not None else []), data
        self._made, self.placeholder, self.key = made, placeholder, key

    def __getattr__(self, name: str) -> object:
        """``lines`` and ``data`` of an item made when asked for (only called while they are unset)."""
        if name not in ("lines", "data") or self._made is None:
            raise AttributeError(name)
        self.lines, self.data = self._made()
        self._made = None
        return object.__getattribute__(self, name)


@dataclass
class Section:
    key: str  # the JSON key of its items
    title: str  # the Markdown heading ("" for none)
    priority: int  # 0: always whole; then lower numbers are kept first
    items: list[Item]
    see: str = ""  # how to see what a cut left out, e.g. "git continuity journal"
    intro: list[str] = field(default_factory=list)  # lines under the heading, kept with the first item
    what: str = "entries"  # what its items are, for "left out: 3 entries"
    group: str = ""  # a heading shared with the sections after it ("## Since the last session")


@dataclass(frozen=True)
class LeftOut:
    section: str
    count: int
    of: int
    what: str
    see: str


@dataclass(frozen=True)
class Fitted:
    text: str
    kept: dict[str, int]  # per section key: how many of its items are in
    left_out: list[LeftOut]
    tokens: int
    max_tokens: int | None
    over_budget: bool


def _heading(section: Section) -> list[str]:
    if not section.title:
        return []
    level = "###" if section.group else "##"
    return ["", f"{level} {section.title}"]


def _render(sections: Sequence[Section], kept: dict[str, int], footer: list[str]) -> str:
    lines: list[str] = []
    group = ""
    for s in sections:
        n = kept[s.key]
        if n == 0:
            continue
        if s.group and s.group != group:
            lines += ["", s.group]
        group = s.group
        lines += _heading(s) + s.intro
        for item in s.items[:n]:
            lines += item.lines
        if n < len(s.items):
            lines.append(f"- … {len(s.items) - n} more {s.what}" + (f": {s.see}" if s.see else ""))
    lines += footer
    return "\n".join(lines).strip("\n") + "\n"


def _left_out(sections: Sequence[Section], kept: dict[str, int]) -> list[LeftOut]:
    """What each section lost; a placeholder ("- none") is nothing to report."""
    found = []
    for s in sorted(sections, key=lambda s: s.priority):
        real = [i for i in s.items if not i.placeholder]
        cut = [i for i in s.items[kept[s.key] :] if not i.placeholder]
        if cut:
            found.append(LeftOut(s.key, len(cut), len(real), s.what, s.see))
    return found


def _said(x: LeftOut) -> str:
    if x.of == 1 and x.what.startswith("the "):
        return x.what  # "the work tree", not "1 of 1 the work tree"
    return f"{x.count} of {x.of} {x.what}"


def _footer(
    left: Sequence[LeftOut], max_tokens: int | None, truth: int, over: bool, total: int | None = None
) -> list[str]:
    """What was left out, and the commands that show it (each named once: the footer is paid
    for out of the same budget). Over budget it says what cannot be cut, and how large the
    brief printed is (``total``), so the flag never promises what the brief does not keep."""
    if max_tokens is None or (not left and not over):
        return []
    parts = ", ".join(_said(x) for x in left)
    sees = list(dict.fromkeys(x.see for x in left if x.see))
    see = f" See: {'; '.join(sees)}." if sees else ""
    if over:
        printed = f"about {total} tokens with this note" if total is not None else "with this note"
        if truth > max_tokens:
            head = (
                f"Over budget: --max-tokens {max_tokens} cannot be kept: the truth section is never cut and is"
                f" about {truth} tokens; only it is printed, {printed}."
            )
        else:
            head = (
                f"Over budget: the truth section is never cut (about {truth} tokens) and with this note it does"
                f" not fit in --max-tokens {max_tokens}; only it is printed, {printed}."
            )
        return ["", "---", head + (f" Left out: {parts}." if parts else "") + see]
    return ["", "---", f"Left out to stay under {max_tokens} tokens (1 token ≈ 3 bytes): {parts}.{see}"]


def _over(sections: Sequence[Section], kept: dict[str, int], max_tokens: int, truth: int) -> Fitted:
    """Only the truth, with the note saying so and how large the brief printed is."""
    left = _left_out(sections, kept)
    total = None
    for _ in range(3):  # the note's own digits count: settle on a total that includes them
        text = _render(sections, kept, _footer(left, max_tokens, truth, True, total))
        if estimate(text) == total:
            break
        total = estimate(text)
    return Fitted(text, kept, left, estimate(text), max_tokens, True)


def fit(sections: Sequence[Section], max_tokens: int | None) -> Fitted:
    """The sections cut to ``max_tokens`` (None: everything), rendered in their given order."""
    everything = {s.key: len(s.items) for s in sections}
    if max_tokens is None:
        text = _render(sections, everything, [])
        return Fitted(text, everything, [], estimate(text), None, False)
    truth_only = {s.key: len(s.items) if s.priority == TRUTH else 0 for s in sections}
    truth = estimate(_render(sections, truth_only, []))
    if truth > max_tokens:
        return _over(sections, truth_only, max_tokens, truth)
    # Room is first kept for the footer that says what was left out; its size depends on
    # what is left out, so the cut is redone with the footer the last try produced.
    reserve = 0
    for _ in range(4):
        kept = _greedy(sections, truth_only, max_tokens - reserve)
        footer = _footer(_left_out(sections, kept), max_tokens, truth, False)
        text = _render(sections, kept, footer)
        if estimate(text) <= max_tokens:
            break
        reserve = estimate("\n".join(footer)) + 1
    order = [s for s in sorted(sections, key=lambda s: s.priority, reverse=True) if s.priority != TRUTH]
    while estimate(text) > max_tokens:  # still over: drop the least important items kept
        last = next((s for s in order if kept[s.key]), None)
        if last is None:  # the truth fits, but not with the footer that says what was cut
            return _over(sections, kept, max_tokens, truth)
        kept[last.key] -= 1
        footer = _footer(_left_out(sections, kept), max_tokens, truth, False)
        text = _render(sections, kept, footer)
    return Fitted(text, kept, _left_out(sections, kept), estimate(text), max_tokens, False)


def _greedy(sections: Sequence[Section], start: dict[str, int], limit: int) -> dict[str, int]:
    """Items in priority order while the text stays within ``limit``; the first item that
    does not fit ends the cut, so nothing less important is kept in its place."""
    kept = dict(start)
    for s in sorted((s for s in sections if s.priority != TRUTH), key=lambda s: s.priority):
        for n in range(1, len(s.items) + 1):
            kept[s.key] = n
            if estimate(_render(sections, kept, [])) > limit:
                kept[s.key] = n - 1
                return kept
    return kept
