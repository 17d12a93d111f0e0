"""Copy the pieces of GitHub's published OpenAPI description that the GitHub verifier uses.

Source: the npm package ``@octokit/openapi`` (GitHub's official description with Octokit's
extensions), file ``generated/api.github.com.json``. Run from a folder holding the unpacked
package (``npm pack @octokit/openapi && tar xzf octokit-openapi-*.tgz``):

    python tests/forge_api/extract_github.py package/generated/api.github.com.json

It writes ``tests/forge_api/github.json``: the three operations and every component they
reference, transitively, and nothing else.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

OPERATIONS = (
    ("/repos/{owner}/{repo}/pulls/{pull_number}", "get"),
    ("/repos/{owner}/{repo}/commits/{ref}/check-runs", "get"),
    ("/repos/{owner}/{repo}/commits/{ref}/status", "get"),
)
EXTRA = ("#/components/schemas/basic-error",)  # the body of 401/403/429 answers


def refs(node: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            found.add(node["$ref"])
        for value in node.values():
            found |= refs(value)
    elif isinstance(node, list):
        for value in node:
            found |= refs(value)
    return found


def main(source: str) -> None:
    full = json.loads(Path(source).read_text())
    out: dict[str, Any] = {"openapi": full["openapi"], "info": full["info"], "paths": {}, "components": {}}
    for path, method in OPERATIONS:
        out["paths"].setdefault(path, {})[method] = full["paths"][path][method]
    todo = refs(out["paths"]) | set(EXTRA)
    done: set[str] = set()
    while todo:
        ref = todo.pop()
        done.add(ref)
        _, _, section, name = ref.split("/", 3)
        node = full["components"][section][name]
        out["components"].setdefault(section, {})[name] = node
        todo |= refs(node) - done
    for section in out["components"].values():
        for name in sorted(section):
            section[name] = section.pop(name)
    target = Path(__file__).with_name("github.json")
    target.write_text(json.dumps(out, indent=1, sort_keys=False) + "\n")
    print(f"wrote {target} ({target.stat().st_size} bytes, {len(done)} components)")


if __name__ == "__main__":
    main(sys.argv[1])
