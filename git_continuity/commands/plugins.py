from __future__ import annotations

from git_continuity.plugins import verify
from git_continuity.render import text as render


def plugins(*, as_json: bool) -> int:
    """Every verifier plugin, its version and the handle schemes it adds; then, when two of
    them declare one scheme, the error that every handle command gives (exit 2)."""
    _list(verify.plugins(), as_json=as_json)
    verify.schemes()  # raises UserError naming both plugins of a scheme declared twice
    return 0


def _list(found: tuple[verify.PluginInfo, ...], *, as_json: bool) -> None:
    if as_json:
        render.emit_json(
            "plugins",
            {
                "plugins": [
                    {
                        "name": p.name,
                        "version": p.version,
                        "schemes": [
                            {
                                "scheme": s.name,
                                "summary": s.summary,
                                "example": s.example,
                                "live": s.live,
                                "network": s.network,
                            }
                            for s in p.schemes
                        ],
                    }
                    for p in found
                ]
            },
        )
        return
    for p in found:
        print(f"{p.name} {p.version}")
        for s in p.schemes:
            # live: dereferenced on every status; network: asked by verify --online, status
            # shows the last evidence; evidence: re-derived by verify.
            kind = "live" if s.live else "network" if s.network else "evidence"
            print(f"  {(s.name + ':').ljust(11)} {s.summary}  [{kind}]\n  {'':11} e.g. {s.example}")
