"""``progress --html FILE``: one self-contained page (no network, no external script or style)
showing each thread as a row along time: its attempts as marks coloured by outcome (a mark
where what it fails changed is drawn larger), the sessions they were made in as bands, and
the stop-loss and closes marked. Each mark's hover text is its observation.

Dates run along a time axis at the top; under the picture a table has a row per thread with
its latest failure in words, so nothing needs a mouse. An inline script, run by the browser
once the page is laid out, writes what it rendered (marks per thread with a size on screen,
stop-loss marks) into the hidden ``#rendered``, so a headless browser's DOM says what a
person would see.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from html import escape as _html

from git_continuity.display import clean
from git_continuity.model import Thread, parse_stamp, shown
from git_continuity.store import attempts
from git_continuity.store.attempts import Course, Waiting


def escape(text: str) -> str:
    """Text from the state as HTML: control and bidi characters written as visible escapes
    (a title is data; U+202E would reorder the page), then HTML's own."""
    return _html(clean(text))


WIDTH, ROW, LEFT, AXIS = 900, 64, 280, 28
COLOURS = {"contradicted": "#d73a49", "unknown": "#8a8a8a", "unchecked": "#b0b0b0", "stale": "#e3a008"}
STYLE = """
body { font: 14px system-ui, sans-serif; margin: 24px; color: #222; }
h1 { font-size: 20px; } .legend span { margin-right: 16px; }
svg { border: 1px solid #ddd; background: #fff; } text { font-size: 12px; }
.band { fill: #eef3fb; } .band.odd { fill: #f7f0fb; }
.axis { stroke: #999; } .tick { fill: #555; font-size: 11px; }
table { border-collapse: collapse; margin-top: 16px; } td, th { border: 1px solid #ddd; padding: 4px 8px;
  text-align: left; vertical-align: top; } td.failure { font-family: monospace; white-space: pre-wrap; }
"""
SCRIPT = """
const out = [];
document.querySelectorAll('g.thread').forEach(g => {
  const seen = [...g.querySelectorAll('.attempt')].filter(m => m.getBoundingClientRect().width > 0);
  const stops = [...g.querySelectorAll('.stop-loss')].filter(m => m.getBoundingClientRect().width > 0);
  out.push(g.dataset.thread + ' marks=' + seen.length + ' stop-loss=' + stops.length);
});
document.getElementById('rendered').textContent = out.join('\\n');
"""


def _x(moment: datetime, start: datetime, span: float) -> float:
    return LEFT + (WIDTH - LEFT - 20) * ((moment - start).total_seconds() / span if span else 0.5)


def _title(text: str) -> str:
    return f"<title>{escape(text)}</title>"


def page(stream: str, rows: Sequence[tuple[Thread, Course]], waiting: Mapping[str, Waiting] | None = None) -> str:
    """The whole page for these threads and their courses (and what those waiting on
    someone else wait on)."""
    waiting = waiting or {}
    times = [parse_stamp(a.at) for _, c in rows for a in c.attempts]
    times += [parse_stamp(t.blocked["at"]) for t, _ in rows if t.blocked]
    times += [parse_stamp(t.closed_at) for t, _ in rows if t.closed_at]
    start, end = (min(times), max(times)) if times else (None, None)
    span = (end - start).total_seconds() if start and end else 0.0
    height = ROW * max(1, len(rows)) + 16 + AXIS
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}">']
    if start is not None and end is not None:
        parts += _axis(start, span, height)
    for n, (thread, course) in enumerate(rows):
        y = 40 + AXIS + n * ROW
        parts.append(f'<g class="thread" data-thread="{escape(thread.id)}">')
        parts.append(f'<text x="8" y="{y + 4}">{escape(thread.id)} {escape(thread.title[:28])}</text>')
        summary = _summary(thread, course, waiting.get(thread.id))
        parts.append(f'<text x="8" y="{y + 20}" fill="#666">{escape(summary)}</text>')
        if start is not None:
            bands: dict[str, list[datetime]] = {}
            for a in course.attempts:
                bands.setdefault(a.who, []).append(parse_stamp(a.at))
            for i, (who, moments) in enumerate(bands.items()):
                x0, x1 = _x(min(moments), start, span) - 6, _x(max(moments), start, span) + 6
                parts.append(
                    f'<rect class="band{" odd" if i % 2 else ""}" x="{x0:.1f}" y="{y - 14}" '
                    f'width="{x1 - x0:.1f}" height="28">{_title(f"session {who}")}</rect>'
                )
            changed = {a.id for a in course.changes}
            for a in course.attempts:
                failing = [c for c in a.checks if c.failing]
                result = failing[0].result if failing else "verified"
                said = "; ".join(f"{c.handle}: {attempts.quote(c.observed)}" for c in failing) or "verified"
                x = _x(parse_stamp(a.at), start, span)
                parts.append(
                    f'<circle class="attempt" cx="{x:.1f}" cy="{y}" r="{7 if a.id in changed else 4}" '
                    f'fill="{COLOURS.get(result, "#2da44e")}">'
                    f"{_title(f'{shown(a.at)} {a.via} ({a.who}): {said}')}</circle>"
                )
            if thread.blocked:
                x = _x(parse_stamp(thread.blocked["at"]), start, span)
                parts.append(
                    f'<path class="stop-loss" d="M{x - 6:.1f} {y - 26} l12 12 m0 -12 l-12 12" stroke="#000" '
                    f'stroke-width="3">{_title("stop-loss: " + ", ".join(thread.blocked["spent"]))}</path>'
                )
            if thread.closed_at:
                x = _x(parse_stamp(thread.closed_at), start, span)
                parts.append(
                    f'<rect class="close" x="{x - 5:.1f}" y="{y - 5}" width="10" height="10" fill="#2da44e">'
                    f"{_title('closed ' + shown(thread.closed_at))}</rect>"
                )
        parts.append("</g>")
    parts.append("</svg>")
    when = f"{shown(start.isoformat())} to {shown(end.isoformat())} UTC" if start and end else "no attempts yet"
    legend = "".join(
        f'<span style="color:{c}">&#9679; {escape(k)}</span>' for k, c in {**COLOURS, "verified": "#2da44e"}.items()
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>git continuity progress: {escape(stream)}</title><style>{STYLE}</style></head><body>"
        f"<h1>Progress of stream {escape(stream)}</h1><p>{escape(when)}; a large mark: what fails changed; "
        "a shaded band: the attempts of one session; "
        f'&#10005; stop-loss; &#9632; closed.</p><p class="legend">{legend}</p>{"".join(parts)}'
        f"{_table(rows, waiting)}"
        f'<pre id="rendered" hidden></pre><script>{SCRIPT}</script></body></html>\n'
    )


def _summary(thread: Thread, course: Course, waiting: Waiting | None) -> str:
    state = f"waiting on {' and '.join(waiting.on)}" if waiting else "stalled" if course.stalled else "moving"
    return f"{thread.status}, {len(course.attempts)} attempts, {state}" + (", budget spent" if course.spent else "")


def _axis(start: datetime, span: float, height: int) -> list[str]:
    """The time axis along the top: a line, and five ticks with their date and time (UTC)."""
    from datetime import timedelta

    parts = [f'<line class="axis" x1="{LEFT}" y1="{AXIS}" x2="{WIDTH - 20}" y2="{AXIS}"/>']
    for i in range(5):
        moment = start + timedelta(seconds=span * i / 4)
        x = _x(moment, start, span)
        label = moment.strftime("%m-%d %H:%M" if span >= 600 else "%m-%d %H:%M:%S")  # apart by seconds
        anchor = "start" if i == 0 else "end" if i == 4 else "middle"
        parts.append(
            f'<line class="axis" x1="{x:.1f}" y1="{AXIS - 4}" x2="{x:.1f}" y2="{height}" stroke-dasharray="2 4"/>'
        )
        parts.append(f'<text class="tick" x="{x:.1f}" y="{AXIS - 8}" text-anchor="{anchor}">{label}</text>')
    return parts


def _table(rows: Sequence[tuple[Thread, Course]], waiting: Mapping[str, Waiting]) -> str:
    """A row per thread, readable without a mouse: its status, attempts, sessions, what it
    fails now (the latest attempt's observation), and the stop-loss."""
    out = [
        "<table><tr><th>thread</th><th>status</th><th>attempts</th><th>sessions</th>"
        "<th>latest failure</th><th>stop-loss</th></tr>"
    ]
    for thread, course in rows:
        last = course.attempts[-1] if course.attempts else None
        failing = [c for c in last.checks if c.failing] if last else []
        said = "\n".join(f"{c.handle}: {attempts.quote(c.observed)}" for c in failing) or "none"
        stop = (thread.blocked or {}).get("note") or ", ".join((thread.blocked or {}).get("spent", [])) or "no"
        out.append(
            f'<tr class="row" data-thread="{escape(thread.id)}"><td>{escape(thread.id)} {escape(thread.title)}</td>'
            f"<td>{escape(_summary(thread, course, waiting.get(thread.id)))}</td><td>{len(course.attempts)}</td>"
            f"<td>{len({a.who for a in course.attempts})}</td>"
            f'<td class="failure">{escape(said)}</td><td>{escape(stop)}</td></tr>'
        )
    return "".join(out) + "</table>"
