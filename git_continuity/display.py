"""Text that came from state or from a remote, made safe to show to a person or an agent.

A teammate's journal entry, a forge's answer, a command's output: all of it reaches the
screen of everyone who syncs. Printed raw, ``\\e]0;title\\a`` in an entry retitles the
reader's terminal and ``\\e[31m`` colours it (issue 10). So every character that drives a
terminal or reorders text is shown escaped instead: C0 controls except newline and tab, DEL,
C1 controls, and the bidirectional embeddings, overrides, isolates and marks.

The cleaning happens in one place, at the door: ``cleaning`` wraps the entry points (the CLI
and the hooks) so that everything written to stdout and stderr passes through ``clean``.
Cleaning each field where text is made would miss the next field someone adds. JSON for
programs stays exact: ``json_text`` writes those characters as ``\\uXXXX`` escapes, which
decode to the same string. Text for an agent inside JSON (a hook's answer) is cleaned first
(``clean_strings``), since the agent reads the decoded string.

Standard library only: the hooks import this on their hot path.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from contextlib import contextmanager

TYPE_CHECKING = False  # typing costs the loop notice's path milliseconds; mypy reads the name as true
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any, TextIO, TypeVar

    Main = TypeVar("Main", bound=Callable[..., int])

_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}]")
# What json.dumps(ensure_ascii=False) leaves raw (it escapes C0 itself).
_UNSAFE_IN_JSON = re.compile(f"[\x7f-\x9f{_BIDI}]")
LONG = 1000  # characters of one field shown before it is cut


def at_a_terminal() -> bool:
    """Whether a person's terminal is this process's own (an agent's tool call has none): the
    fixes that are a person's to choose are offered there only (helper/door.py and doctor ask the same)."""
    try:
        os.close(os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY))
    except OSError:
        return False
    return True


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def undecodable(data: bytes, error: UnicodeDecodeError) -> str:
    """Where bytes are not UTF-8, for a message: `` line 2: byte offset 27 is not UTF-8 (0xe9)``."""
    line = data[: error.start].count(b"\n") + 1
    return f" line {line}: byte offset {error.start} is not UTF-8 ({data[error.start]:#04x})"


def clean(text: str) -> str:
    """``text`` with every control character but newline and tab, and every bidi control,
    written as a visible escape (``\\x1b``, ``\\u202e``)."""
    return UNSAFE.sub(_escape, text) if UNSAFE.search(text) else text


class Showing:
    """How text for people is shown in this run; cli.main sets it from ``--full``, ``-v`` and
    the terminal, and puts it back afterwards (``showing``)."""

    full = False  # --full: long text is not cut
    verbose = False  # -v: object ids whole
    width: int | None = None  # fold long lines at this many columns (a terminal's); None: never
    colour = False  # colour states and warnings (a terminal, and neither NO_COLOR nor TERM=dumb)


@contextmanager
def showing(
    *, full: bool = False, verbose: bool = False, width: int | None = None, colour: bool = False
) -> Iterator[None]:
    saved = Showing.full, Showing.verbose, Showing.width, Showing.colour
    Showing.full, Showing.verbose, Showing.width, Showing.colour = full, verbose, width, colour
    try:
        yield
    finally:
        Showing.full, Showing.verbose, Showing.width, Showing.colour = saved


def cut(text: str, whole: str, limit: int = LONG) -> str:
    """``text`` up to ``limit`` characters, then a marker saying how much is left out and
    what shows it whole (``whole``: a command, or an option of this one); all of it with
    ``--full``."""
    if len(text) <= limit or Showing.full:
        return text
    return f"{text[:limit]}… [{len(text) - limit:,} more characters: {whole} shows it whole]"


def one_line(text: str, limit: int = LONG) -> str:
    """``text`` shown on one line: its first line, cut at ``limit`` characters, and ``…`` where
    more was left out (a newline in a teammate's text would otherwise start a line that reads
    as the tool's own). For a summary of one line an item (``status -s``); elsewhere ``hang``."""
    lines = text.strip().splitlines() or [""]
    return lines[0][:limit] + ("…" if len(lines) > 1 or len(lines[0]) > limit else "")


def quoted(text: str, limit: int = 72) -> str:
    """Another's text in double quotes on one line (``one_line``), its quotes and backslashes
    escaped, so that it cannot close the quote and go on as the tool's words."""
    inner = one_line(text, limit).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{clean(inner)}"'


BREAK = re.compile("\r?\n|[\u2028\u2029]")  # where a text's line ends (hang); a lone \r is escaped (clean)


def hang(first: str, text: str, *, fold: bool = True) -> str:
    """``first`` (a label, an indentation) and then ``text``, whose further lines start under
    its first character, each keeping its own indentation; a line longer than the terminal
    is folded, its pieces under its own start (not with ``fold=False``: the brief's Markdown).

    This is how text of several lines (a title, an objective, a journal entry: a teammate's)
    is shown everywhere: none of its lines can start a line that reads as the tool's own
    (#26). ``first`` may itself hold lines (a ``hang`` of an earlier text): ``text`` then
    hangs under where it starts on the last of them."""
    width = Showing.width if fold else None
    if "\n" not in first and (width is None or len(first) + len(text) <= width) and not BREAK.search(text):
        return first + text  # nearly every line: one line that fits (status calls this 3 times a claim)
    above, newline, start = first.rpartition("\n")
    pad = " " * _visible(start)
    out: list[str] = []
    for n, line in enumerate(BREAK.split(text.strip("\n\u2028\u2029"))):
        out += _fold(start if n == 0 else pad, line, width)
    return above + newline + "\n".join(out)


def _fold(prefix: str, line: str, width: int | None) -> list[str]:
    if width is None or _visible(prefix) + len(line) <= width:
        return [prefix + line]
    import textwrap

    own = " " * (len(line) - len(line.lstrip(" ")))
    under = " " * _visible(prefix) + own
    room = max(width - len(under), 20)
    pieces = textwrap.wrap(line.strip(), room, break_on_hyphens=False, break_long_words=False) or [""]
    return [prefix + own + pieces[0], *(under + piece for piece in pieces[1:])]


def fold(text: str, width: int | None) -> str:
    """``text`` with each line wider than ``width`` folded at word boundaries (never inside a
    word), its further pieces under its own indentation plus two. A command line (``git …``,
    ``$ git …``) folds only between shell words outside quotes, each piece but the last
    ending in `` \\``, so it still pastes as one command. None: as it is."""
    lines = text.split("\n")
    if width is None or all(len(line) <= width for line in lines):
        return text
    out: list[str] = []
    for block in _paragraphs(lines):
        if len(block) > 1 and any(len(line) > width for line in block):  # a paragraph folds as one
            out += _pack(" ".join(block).split(), "", "", "", width)
        else:
            out += [piece for line in block for piece in _fold_line(line, width)]
    return "\n".join(out)


def _paragraphs(lines: list[str]) -> list[list[str]]:
    """Runs of prose lines (not indented, no table column, no command) as one block each;
    every other line a block of its own."""
    blocks: list[list[str]] = []
    for line in lines:
        if _is_prose(line) and blocks and _is_prose(blocks[-1][-1]):
            blocks[-1].append(line)
        else:
            blocks.append([line])
    return blocks


def _is_prose(line: str) -> bool:
    return bool(line) and line[0] != " " and "  " not in line and re.match(r"(?:\S*\$ )?git ", line) is None


def _fold_line(line: str, width: int) -> list[str]:
    if len(line) <= width:
        return [line]
    own = " " * (len(line) - len(line.lstrip(" ")))
    body = line.strip()
    command = re.match(r"(?:\S*\$ )?git ", body) is not None
    first, under, end = own, own, ""
    if command:
        words = _shell_words(body)
        said = words.index("#") if "#" in words else len(words)
        folded = _pack(words[:said], own, own + "    ", " \\", width)
        if said < len(words):  # a comment: on the last line when it fits, else its own lines after
            comment = " ".join(words[said:])
            if len(folded[-1]) + 2 + len(comment) <= width:
                folded[-1] += "  " + comment
            else:
                folded += _pack(words[said:], own + "    ", own + "    # ", "", width)
        return folded
    else:
        # A table's row ("  commit:<rev>     the commit exists here") continues under its
        # second column, the row's start kept as it is; a list item under its text; a
        # paragraph under its own start.
        column = [m.end() for m in re.finditer(r"\S {2,}", line) if m.end() <= width - 20]
        if column:
            first, under = line[: column[0]], " " * column[0]
        elif body.startswith(("- ", "* ")):
            under = own + "  "
        words = line[len(first) :].split()
    return _pack(words, first, under, end, width)


def _pack(words: list[str], first: str, under: str, end: str, width: int) -> list[str]:
    """Words on lines of at most ``width`` (a word longer than that stands alone, whole):
    the first line after ``first``, the others after ``under``; each but the last ends in ``end``."""
    out: list[str] = []
    current = ""
    for word in words:
        lead = under if out else first
        if current and len(lead) + len(current) + 1 + len(word) + len(end) > width:
            out.append(lead + current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    out.append((under if out else first) + current)
    return [piece + end for piece in out[:-1]] + out[-1:]


def _shell_words(text: str) -> list[str]:
    """``text`` split at spaces outside single and double quotes (the quotes kept); a run
    of spaces (aligned comments) is one break."""
    words, current, quote = [], "", ""
    for char in text:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == " ":
            if current:
                words.append(current)
            current = ""
            continue
        current += char
    return [*words, current] if current else words


# Colour is written as marks that only this process can make (the nonce), turned into
# terminal codes by CleanStream after everything else was cleaned: text from state can
# neither colour the screen nor forge a mark.
_MARK = "\ue000" + os.urandom(4).hex()
_PAINTED = re.compile(re.escape(_MARK) + r"(\w+)\ue001(.*?)" + re.escape(_MARK) + "\ue001", re.DOTALL)
COLOURS = {
    "verified": "green",
    "contradicted": "red",
    "unknown": "yellow",
    "stale": "yellow",
    "warning": "yellow",
    "problem": "red",
}


def _visible(text: str) -> int:
    """How many columns text takes on the screen (colour marks take none)."""
    return len(_PAINTED.sub(r"\2", text)) if _MARK in text else len(text)


def paint(text: str, kind: str) -> str:
    """``text`` in the colour of ``kind`` (a claim's state, ``warning``, ``problem``) when
    colour is on; as it is otherwise."""
    if not Showing.colour or kind not in COLOURS:
        return text
    return f"{_MARK}{kind}\ue001{text}{_MARK}\ue001"


def _coloured(text: str) -> str:
    from termcolor import colored  # only when colour is on: nothing else pays its import

    out, at = [], 0
    for found in _PAINTED.finditer(text):
        out += [clean(text[at : found.start()]), colored(clean(found[2]), COLOURS[found[1]], force_color=True)]
        at = found.end()
    return "".join([*out, clean(text[at:])])


def wants_colour(stream: TextIO) -> bool:
    """Colour for a terminal only: never for a pipe or a file, nor with NO_COLOR set
    (https://no-color.org) or TERM=dumb."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def clean_strings(value: Any) -> Any:
    """Every string in a JSON-like value cleaned (for JSON an agent reads as text)."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict):
        return {k: clean_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clean_strings(v) for v in value]
    return value


def json_text(document: Any, indent: int | None = None) -> str:
    """``document`` as JSON with nothing raw that could drive a terminal; it decodes to
    exactly the same values."""
    import json

    text = json.dumps(document, indent=indent, ensure_ascii=False)
    return _UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class OutputError(Exception):
    """Writing the output failed (a full disk, a terminal gone): the environment's failure,
    not ours; cli.main says so in one line."""


@contextmanager
def _output_failures() -> Iterator[None]:
    """An OSError of the stream as OutputError; a reader that left (`| head`) stays a
    BrokenPipeError, which cli.main ends quietly."""
    try:
        yield
    except BrokenPipeError:
        raise
    except OSError as error:
        raise OutputError(error.strerror or str(error)) from error


def encodable(text: str, encoding: str) -> str:
    """``text`` with each character ``encoding`` cannot hold (``LC_ALL=C``, ``PYTHONIOENCODING=latin-1``)
    written as ``\\uXXXX``, a pair of them beyond U+FFFF: readable, and JSON's own escape, so
    a --json document stays valid and decodes to the same values."""

    def escape(char: str) -> str:
        try:
            char.encode(encoding)
        except UnicodeEncodeError:
            units = char.encode("utf-16-be", "surrogatepass")
            return "".join(f"\\u{int.from_bytes(units[i : i + 2], 'big'):04x}" for i in range(0, len(units), 2))
        return char

    return "".join(map(escape, text))


class CleanStream:
    """A text stream whose writes are cleaned; everything else is the wrapped stream's."""

    def __init__(self, raw: TextIO) -> None:
        self.raw = raw

    def write(self, text: str) -> int:
        shown = _coloured(text) if _MARK in text else clean(text)
        with _output_failures():
            try:
                self.raw.write(shown)
            except UnicodeEncodeError:
                self.raw.write(encodable(shown, self.raw.encoding))
        return len(text)

    def flush(self) -> None:
        with _output_failures():
            self.raw.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


def raw(stream: TextIO) -> TextIO:
    """The stream under a CleanStream: for what git-continuity draws itself (the progress
    line rewrites itself with a carriage return)."""
    return stream.raw if isinstance(stream, CleanStream) else stream


@contextmanager
def cleaned_output() -> Iterator[None]:
    """stdout and stderr cleaned for the duration (once: nesting changes nothing)."""
    if isinstance(sys.stdout, CleanStream):
        yield
        return
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = CleanStream(sys.stdout), CleanStream(sys.stderr)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


def cleaning(main: Main) -> Main:
    """An entry point whose output is cleaned (see the module docstring)."""

    @functools.wraps(main)
    def run(*args: Any, **kwargs: Any) -> int:
        with cleaned_output():
            return main(*args, **kwargs)

    return run  # type: ignore[return-value]
