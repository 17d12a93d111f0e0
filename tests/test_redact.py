"""Secrets never reach stored or shown output."""

from __future__ import annotations

from git_continuity.plugins.redact import redact, tail


def test_secret_looking_values_are_masked() -> None:
    text = (
        "login password=hunter2 ok\n"
        "token ghp_abcdefghijklmnopqrstuvwxyz0123456789 used\n"
        "Authorization: Bearer xyz.abc\n"
        "clone https://ada:s3cret@example.com/repo.git\n"
        "api_key: k-123456\n"
    )
    assert redact(text, {"MY_API_TOKEN": "tok-987654321"}) == (
        "login password=[redacted] ok\n"
        "token [redacted] used\n"
        "Authorization: Bearer [redacted]\n"
        "clone https://ada:[redacted]@example.com/repo.git\n"
        "api_key: [redacted]\n"
    )


def test_values_of_secret_named_variables_are_masked_wherever_they_appear() -> None:
    assert redact("echo tok-987654321 done", {"MY_API_TOKEN": "tok-987654321", "HOME": "/root"}) == (
        "echo [redacted] done"
    )


def test_tail_keeps_the_end_within_its_caps() -> None:
    assert tail("\n".join(str(n) for n in range(100)), lines=3) == "97\n98\n99"
    assert tail("x" * 5000, chars=10) == "…" + "x" * 10


def test_an_answer_is_scrubbed_of_the_secrets_it_was_sent_however_it_spells_them() -> None:
    from git_continuity.plugins.redact import scrub, scrub_bytes

    secrets = ["Bearer tok-987654321", "tok-987654321"]
    assert scrub({"tok-987654321": ["by tok-987654321", 7]}, secrets) == {"[redacted]": ["by [redacted]", 7]}
    escaped = "".join(f"\\u{ord(c):04x}" for c in "tok-987654321")
    assert scrub_bytes(f'{{"login": "{escaped}", "n": 1}}'.encode(), secrets) == b'{"login": "[redacted]", "n": 1}'
    assert scrub_bytes(b"<html>tok-987654321</html>", secrets) == b"<html>[redacted]</html>"
    assert scrub_bytes(b'{"login": "ada"}', secrets) == b'{"login": "ada"}'  # untouched, byte for byte
