"""A brief as sections of items, cut to a token budget by priority and rendered as Markdown.

Token estimate: one token per 3 bytes of UTF-8, rounded up (``estimate``). Tokenizers give
about 4 bytes per token on English prose and 3 or fewer on text dense in ids, hashes and
paths, which a brief is full of; counting 3 keeps a brief cut to N tokens under N on the
tokenizers agents use, at the price of leaving a little room unused on plain prose. No
tokenizer is imported: the brief must be cheap to make on every session start.

Cutting keeps every section of priority 0 (the truth: what must not be acted on) whole, then
adds items section by section in priority order while they fit, and says at the end what it
left out and how to see it. When the truth alone is larger than the budget it is printed
anyway, marked as over budget: a brief without it would be worse than a long one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

BYTES_PER_TOKEN = 3
TRUTH = 0


def estimate(text: str) -> int:
    """Estimated tokens of text: UTF-8 bytes / 3, rounded up."""
    return -(-len(text.encode()) // BYTES_PER_TOKEN)


@dataclass
class Item:
    lines: list[str]  # its Markdown
    data: Any  # its JSON


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
    return [
        LeftOut(s.key, len(s.items) - kept[s.key], len(s.items), s.what, s.see)
        for s in sorted(sections, key=lambda s: s.priority)
        if kept[s.key] < len(s.items)
    ]


def _said(x: LeftOut) -> str:
    if x.of == 1 and x.what.startswith("the "):
        return x.what  # "the work tree", not "1 of 1 the work tree"
    return f"{x.count} of {x.of} {x.what}"


def _footer(left: Sequence[LeftOut], max_tokens: int | None, truth: int, over: bool) -> list[str]:
    if max_tokens is None or (not left and not over):
        return []
    parts = [_said(x) + (f" ({x.see})" if x.see else "") for x in left]
    if over:
        head = (
            f"Over budget: the truth section alone is about {truth} tokens, more than --max-tokens {max_tokens}; "
            "only it is printed."
        )
        return ["", "---", head + (" Left out: " + "; ".join(parts) + "." if parts else "")]
    return ["", "---", f"Left out to stay under {max_tokens} tokens (1 token ≈ 3 bytes): " + "; ".join(parts) + "."]


def fit(sections: Sequence[Section], max_tokens: int | None) -> Fitted:
    """The sections cut to ``max_tokens`` (None: everything), rendered in their given order."""
    everything = {s.key: len(s.items) for s in sections}
    if max_tokens is None:
        text = _render(sections, everything, [])
        return Fitted(text, everything, [], estimate(text), None, False)
    kept = {s.key: len(s.items) if s.priority == TRUTH else 0 for s in sections}
    truth = estimate(_render(sections, kept, []))
    if truth > max_tokens:
        left = _left_out(sections, kept)
        text = _render(sections, kept, _footer(left, max_tokens, truth, True))
        return Fitted(text, kept, left, estimate(text), max_tokens, True)

    def size(candidate: dict[str, int]) -> int:
        left = _left_out(sections, candidate)
        return estimate(_render(sections, candidate, _footer(left, max_tokens, truth, False)))

    # Greedy by priority. Sizes are measured on the real text, footer included, but an item
    # is tried only when its own bytes could still fit, so a long section costs one render
    # per kept item at most.
    used = size(kept)
    for s in sorted((s for s in sections if s.priority != TRUTH), key=lambda s: s.priority):
        for n in range(1, len(s.items) + 1):
            room = max_tokens - used
            cost = estimate("\n".join(s.items[n - 1].lines + (_heading(s) + s.intro if n == 1 else [])))
            if cost > room + 20:  # the "… more" and footer lines may shrink; 20 tokens of slack
                break
            kept[s.key] = n
            trial = size(kept)
            if trial > max_tokens:
                kept[s.key] = n - 1
                break
            used = trial
    left = _left_out(sections, kept)
    text = _render(sections, kept, _footer(left, max_tokens, truth, False))
    return Fitted(text, kept, left, estimate(text), max_tokens, False)
