"""The JSON Schemas in ``schema/``: loading them and turning violations into plain problems.

jsonschema costs ~100 ms to import, so it is imported only when something is validated;
the read path skips content already validated (see store.ValidityCache).
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Any

from git_continuity.constants import ID_ALPHABET
from git_continuity.errors import UserError

# The most that is read of one file from state or from the work tree: a packet is a few
# lines people edit, an entry one record. A file over its limit is refused before it is
# parsed, so one oversized file cannot stall every clone that reads it.
MAX_BYTES = {"packet": 256 * 1024, "policy": 64 * 1024, "entry": 1024 * 1024}


def size_problem(size: int, limit: int) -> str | None:
    """What is wrong with a file of ``size`` bytes where at most ``limit`` are read."""
    if size <= limit:
        return None
    return f"{size:,} bytes, over the limit of {limit:,} bytes for this file"


def _schema_dir() -> Path:
    # Wheels carry schema/ inside the package (pyproject force-include); an editable
    # install or a source checkout reads the top-level schema/ folder.
    packaged = Path(__file__).resolve().parents[1] / "schema"
    return packaged if packaged.is_dir() else Path(__file__).resolve().parents[2] / "schema"


@functools.cache
def load(name: str) -> dict[str, Any]:
    """The schema ``schema/<name>.schema.json``."""
    data: dict[str, Any] = json.loads((_schema_dir() / f"{name}.schema.json").read_text(encoding="utf-8"))
    return data


@functools.cache
def digest(names: tuple[str, ...] | None = None) -> str:
    """Changes whenever one of these schemas changes (any, when none are named), so what was
    judged under them never outlives them."""
    h = hashlib.sha1()
    paths = [_schema_dir() / f"{n}.schema.json" for n in names] if names else _schema_dir().glob("*.schema.json")
    for path in sorted(paths):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


@functools.cache
def _validator(name: str) -> Any:
    """One validator per schema, built once: building it costs more than most validations.
    Schemas refer to each other by ``$id`` (status embeds conflict records)."""
    import jsonschema
    from referencing import Registry, Resource

    resources = [
        (schema["$id"], Resource.from_contents(schema))
        for schema in (load(p.name.removesuffix(".schema.json")) for p in sorted(_schema_dir().glob("*.schema.json")))
        if "$id" in schema
    ]
    return jsonschema.Draft202012Validator(load(name), registry=Registry().with_resources(resources))


def warm(names: tuple[str, ...]) -> None:
    """Build these schemas' validators now: the helper does, once, so that a command's copy
    that meets an entry not yet known good (another writer's, a fetched one) validates it
    without importing jsonschema and building a validator (~200 ms) first."""
    for name in names:
        _validator(name)


def problems(name: str, data: Any) -> list[tuple[tuple[str | int, ...], str]]:
    """Each violation of schema ``name`` as (path to the bad key, message)."""
    validator = _validator(name)
    found: list[tuple[tuple[str | int, ...], str]] = []
    for error in sorted(_leaves(validator.iter_errors(data)), key=lambda e: list(map(str, e.absolute_path))):
        path = tuple(error.absolute_path)
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            allowed = set(error.schema.get("properties", {})) if isinstance(error.schema, dict) else set()
            for key in sorted(set(error.instance) - allowed):
                found.append(((*path, key), f"unknown key {key!r}"))
            continue
        found.append((path, _message(error)))
    return found


def _leaves(errors: Any) -> list[Any]:
    """Errors of a oneOf/anyOf replaced by those of the branch that fits the value's type
    (``objective`` is null or a mapping: a bad key inside the mapping is reported at that
    key, not as the whole mapping "not valid here")."""
    out = []
    for error in errors:
        fitting = [e for e in error.context or () if not (e.validator == "type" and not e.relative_path)]
        if error.validator in ("oneOf", "anyOf") and fitting:
            out.extend(_leaves(fitting))
        else:
            out.append(error)
    return out


# The patterns of schema/ in words: a message names the form a value must take.
FORMS = {
    r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?Z$": "a UTC time such as 2026-12-01T14:05:00Z",
    r"^[a-z]-[2-9a-hjkmnp-z]{6}$": f"an id: a letter, '-' and 6 of {ID_ALPHABET}, e.g. b-k7m2qx",
    r"^[0-9a-f]{40}$": "a full commit id, 40 hexadecimal digits",
    r"^[0-9a-f]{40,64}$": "a full object id, 40 or 64 hexadecimal digits",
    r"^[a-z][a-z0-9-]*:": "a handle, scheme:address, e.g. commit:HEAD",
    r"^(@[a-z0-9][a-z0-9_-]{0,31}:)?[a-z][a-z0-9-]*:": "a handle, scheme:address, e.g. commit:HEAD",
    r"^\d{1,5}(s|m|h|d)$": "a whole number and a unit, s, m, h or d: 90s, 10m, 8h, 2d; at most 99999",
    r"^[^\u0000-\u001f\u007f]{1,64}$": "1 to 64 characters, none of them a control character",
}


def _message(error: Any) -> str:
    if error.validator == "required":
        return str(error.message).replace("is a required property", "is missing")
    if error.validator == "pattern":
        pattern = str(error.validator_value)
        form = f" ({FORMS[pattern]})" if pattern in FORMS else ""  # else the caller names it
        return f"{error.instance!r} is not in the expected form{form}"
    if error.validator == "oneOf":
        return f"{error.instance!r} is not valid here"
    return str(error.message)


def key_path(path: tuple[str | int, ...]) -> str:
    return ".".join(str(p) for p in path) or "(top level)"


def check_output(name: str, data: Any) -> None:
    """Raise if a --json document does not match its published schema (a bug, not bad input)."""
    found = problems(name, data)
    if found:
        raise AssertionError(f"{name}: " + "; ".join(f"{key_path(p)}: {m}" for p, m in found))


def require_valid(name: str, data: Any, where: str) -> None:
    """Refuse to write an entry that violates its schema."""
    found = problems(name, data)
    if found:
        detail = "\n".join(f"  {where}: {key_path(p)}: {m}" for p, m in found)
        raise UserError(f"refusing to write invalid state:\n{detail}")
