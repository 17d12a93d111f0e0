"""``git continuity progress [THREAD]``: per thread, its attempts over time, when what it
fails changed, its budget and what is spent, and whether it is stalled. Derived from the
attempts (store/attempts.py), never typed in: the view's document (view/progress.py),
rendered (render/progress_text.py, render/progress_html.py)."""

from __future__ import annotations

from git_continuity.errors import UserError
from git_continuity.render import progress_text
from git_continuity.render import text as render
from git_continuity.repo import Repo
from git_continuity.view import progress as document


def progress(repo: Repo, *, stream: str, thread_id: str | None, as_json: bool, html: str | None = None) -> int:
    doc = document.progress_document(repo, stream, thread_id)
    if html is not None:
        _page(html, stream, doc)
    elif as_json:
        render.emit_json(
            "progress",
            {
                "stream": stream,
                "stalled_after": {"attempts": doc.rules.stall_attempts, "sessions": doc.rules.stall_sessions},
                "threads": [progress_text.thread_json(tv, doc.courses[tv.thread.id], doc.at) for tv in doc.views],
                "problems": doc.snap.problems,
            },
            doc.marker,
        )
    else:
        lines: list[str] = []
        for tv in doc.views:
            lines += [*progress_text.thread_lines(tv, doc.courses[tv.thread.id], doc.rules, doc.at), ""]
        if not doc.views:
            lines = ["No threads that are not done: nothing is being tried.", ""]
        lines += [f"problem: {p}" for p in doc.snap.problems]
        print("\n".join(lines).rstrip("\n"))
    return 2 if doc.snap.problems else 0


def _page(html: str, stream: str, doc: document.Progress) -> None:
    """progress --html FILE: the page written whole, or an error naming the file (a typo in
    its folder gets an error, not new folders)."""
    from pathlib import Path

    from git_continuity import atomic
    from git_continuity.render import progress_html

    target = Path(html)
    folder = target.parent
    if not folder.is_dir():
        why = f"{folder} is not a folder" if folder.exists() else f"the folder {folder} does not exist"
        raise UserError(f"--html {html}: {why}; nothing was written")
    chosen = [tv.thread for tv in doc.views]
    waiting = {tv.thread.id: tv.waiting for tv in doc.views if tv.waiting is not None}
    try:
        atomic.write(target, progress_html.page(stream, [(t, doc.courses[t.id]) for t in chosen], waiting))
    except OSError as error:
        raise UserError(f"--html {html}: cannot write it: {error.strerror or error}") from None
    count = sum(len(c.attempts) for c in doc.courses.values())
    print(f"Wrote {html}: {len(chosen)} thread{'s' if len(chosen) != 1 else ''}, {count} attempts.")
