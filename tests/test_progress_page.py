"""The progress page as a person sees it (issue 27): no debug line, a time axis with dates,
sessions as bands, a legend, the failure in words, a row per thread readable without a
mouse; checked in headless Chromium, its screenshot included."""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest
from conftest import approve, cont

FAILING = "echo 'fatal: Cannot allocate memory'; exit 1"
RED = (0xD7, 0x3A, 0x49)  # a contradicted attempt's mark, and its legend


def pixels(png: bytes) -> tuple[int, int, list[tuple[int, ...]]]:
    """Width, height and RGB pixels of an 8-bit RGB or RGBA PNG (what Chromium writes)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    at, data, width, height, kind = 8, b"", 0, 0, 0
    while at < len(png):
        size, tag = struct.unpack(">I4s", png[at : at + 8])
        body = png[at + 8 : at + 8 + size]
        if tag == b"IHDR":
            width, height, depth, kind = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and kind in (2, 6)
        elif tag == b"IDAT":
            data += body
        at += 12 + size
    raw, step = zlib.decompress(data), 3 if kind == 2 else 4
    stride, rows, prev = width * step, [], bytearray(width * step)
    for y in range(height):
        kind_of, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - step] if i >= step else 0
            b, c = prev[i], prev[i - step] if i >= step else 0
            if kind_of == 1:
                line[i] = (line[i] + a) & 255
            elif kind_of == 2:
                line[i] = (line[i] + b) & 255
            elif kind_of == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind_of == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, [tuple(r[i : i + 3]) for r in rows for i in range(0, stride, step)]


def test_the_page_reads_without_a_mouse_in_chromium(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    assert browser is not None, "chromium is not installed (Debian package chromium)"
    assert cont(repo, "init").code == 0
    tid = cont(repo, "thread", "add", "Build the engine", "--check", f"cmd:{FAILING}").out.split()[1]
    approve(repo, FAILING)
    for session in ("s-one", "s-two"):
        monkeypatch.setenv("GIT_CONTINUITY_SESSION", session)
        assert cont(repo, "verify").code == 1
    page = tmp_path / "progress.html"
    assert cont(repo, "progress", "--html", str(page)).code == 0
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--window-size=1000,600"]
    env = {**os.environ, "HOME": str(tmp_path / "chromium-home")}
    dom = subprocess.run(
        [browser, *flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120, env=env, check=True
    ).stdout
    # what it rendered is kept for programs, hidden from people: no debug line on the page
    assert re.search(r'<pre id="rendered" hidden="">[^<]*marks=2 stop-loss=1', dom)
    ticks = re.findall(r'<text class="tick"[^>]*>([^<]+)</text>', dom)
    assert len(ticks) == 5 and all(re.fullmatch(r"\d\d-\d\d \d\d:\d\d(:\d\d)?", t) for t in ticks)
    assert dom.count('class="band') == 2  # each session a band
    assert "a shaded band: the attempts of one session" in dom and "contradicted</span>" in dom  # the legend
    row = re.search(rf'<tr class="row" data-thread="{tid}">(.*?)</tr>', dom)
    assert row is not None
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row.group(1), re.S)
    assert cells == [
        f"{tid} Build the engine",
        "blocked, 2 attempts, moving, budget spent",
        "2",
        "2",
        f"cmd:{FAILING}: fatal: Cannot allocate memory",  # the DOM as parsed: quotes back as typed
        "the machine is the limit: it ran out of memory again; change the shape of the work (less at once:"
        " fewer jobs, smaller batches, less data) or move it to a bigger machine instead of another retry",
    ]
    shot = tmp_path / "progress.png"
    subprocess.run(
        [browser, *flags, f"--screenshot={shot}", page.as_uri()], capture_output=True, timeout=120, env=env, check=True
    )
    width, height, seen = pixels(shot.read_bytes())
    assert (width, height) == (1000, 600)
    red = [n for n, p in enumerate(seen) if p == RED]
    assert len(red) > 100  # the marks and the legend are drawn, in the contradicted colour
    # the table's text is drawn below the picture: dark pixels in the lower part of the page
    lower = seen[width * 300 : width * 450]
    assert sum(1 for p in lower if max(p) < 80) > 500


def test_control_and_bidi_characters_of_a_title_reach_the_page_escaped(repo: Path, tmp_path: Path) -> None:
    """A thread's title is data (#35): ESC, BEL and U+202E (right-to-left override) are written
    as visible escapes, never raw, in the page and its title."""
    assert cont(repo, "init").code == 0
    title = "Ship \x1b[31mred\x07 \u202egnp.exe"
    assert cont(repo, "thread", "add", title, "--check", "tag:v9").code == 0
    assert cont(repo, "verify").code == 1
    page = tmp_path / "progress.html"
    assert cont(repo, "progress", "--html", str(page)).code == 0
    text = page.read_text()
    assert not {"\x1b", "\x07", "\u202e"} & set(text)
    assert "Ship \\x1b[31mred\\x07 \\u202egnp.exe" in text
