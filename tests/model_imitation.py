"""Loopback imitations of the two model APIs the agents talk to, for the real-binary tests.

No model service can run here, so each test starts one of these on 127.0.0.1 and points the
agent at it. It logs every request body the agent sends (what the model would have
received: the tests assert on that) and answers from a script, with the published streaming
event shapes:

- Anthropic Messages (``POST /v1/messages``, server-sent events): ``message_start``, per
  content block ``content_block_start`` / ``content_block_delta`` (``text_delta`` or
  ``input_json_delta``) / ``content_block_stop``, then ``message_delta`` with the stop reason
  and ``message_stop``. Claude Code also sends ``HEAD /`` to see the endpoint is up.
- OpenAI Responses (``POST /v1/responses``, server-sent events): ``response.created``, per
  output item ``response.output_item.added`` (and ``response.output_text.delta`` for a
  message) and ``response.output_item.done``, then ``response.completed`` with the usage.
- Gemini API (``POST /v1beta/models/{model}:streamGenerateContent?alt=sse``, server-sent
  events of ``GenerateContentResponse``; ``:generateContent`` answers one of them whole, and
  ``:countTokens`` a count): a candidate whose content parts are a ``text`` and a
  ``functionCall``, with ``finishReason`` ``STOP`` and the ``usageMetadata``.

A script is a function from the request body to a ``Reply``; ``Turns`` plays a list of
replies in order, one per conversation request, and then keeps saying it is done.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Tool:
    name: str
    input: dict[str, Any]


@dataclass(frozen=True)
class Reply:
    text: str = ""
    tool: Tool | None = None
    input_tokens: int = 50  # the usage reported back (Codex compacts on it)


Script = Callable[[dict[str, Any]], Reply]


@dataclass
class Turns:
    """Replies in order, one for each request ``wanted`` picks (the conversation's, not a
    side request such as a title); every other request, and any after the last, gets
    ``rest``."""

    replies: list[Reply]
    wanted: Callable[[dict[str, Any]], bool] = lambda body: True
    rest: Reply = field(default_factory=lambda: Reply("Done."))
    played: int = 0

    def __call__(self, body: dict[str, Any]) -> Reply:
        if not self.wanted(body) or self.played >= len(self.replies):
            return self.rest
        self.played += 1
        return self.replies[self.played - 1]


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    body: dict[str, Any]


def _sse(events: list[tuple[str, dict[str, Any]]]) -> bytes:
    return b"".join(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events)


def anthropic_events(reply: Reply, model: str, serial: int) -> bytes:
    blocks: list[tuple[dict[str, Any], dict[str, Any]]] = []
    if reply.text:
        blocks.append(({"type": "text", "text": ""}, {"type": "text_delta", "text": reply.text}))
    if reply.tool is not None:
        start = {"type": "tool_use", "id": f"toolu_{serial:04d}", "name": reply.tool.name, "input": {}}
        blocks.append((start, {"type": "input_json_delta", "partial_json": json.dumps(reply.tool.input)}))
    message: dict[str, Any] = {
        "id": f"msg_{serial:04d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": reply.input_tokens, "output_tokens": 1},
    }
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": message})]
    for index, (start, delta) in enumerate(blocks):
        events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": start}))
        events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    stop = "tool_use" if reply.tool is not None else "end_turn"
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 5},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return _sse(events)


def responses_events(reply: Reply, model: str, serial: int) -> bytes:
    items: list[dict[str, Any]] = []
    if reply.text:
        items.append(
            {
                "type": "message",
                "id": f"msg_{serial:04d}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
            }
        )
    if reply.tool is not None:
        items.append(
            {
                "type": "function_call",
                "id": f"fc_{serial:04d}",
                "call_id": f"call_{serial:04d}",
                "name": reply.tool.name,
                "arguments": json.dumps(reply.tool.input),
                "status": "completed",
            }
        )
    response = {"id": f"resp_{serial:04d}", "object": "response", "model": model, "status": "in_progress", "output": []}
    sequence = itertools.count()
    events: list[tuple[str, dict[str, Any]]] = [
        ("response.created", {"type": "response.created", "sequence_number": next(sequence), "response": response})
    ]
    for index, item in enumerate(items):
        started = {**item, "status": "in_progress"} | ({"content": []} if item["type"] == "message" else {})
        events.append(
            (
                "response.output_item.added",
                {
                    "type": "response.output_item.added",
                    "sequence_number": next(sequence),
                    "output_index": index,
                    "item": started,
                },
            )
        )
        if item["type"] == "message":
            events.append(
                (
                    "response.output_text.delta",
                    {
                        "type": "response.output_text.delta",
                        "sequence_number": next(sequence),
                        "item_id": item["id"],
                        "output_index": index,
                        "content_index": 0,
                        "delta": reply.text,
                    },
                )
            )
        events.append(
            (
                "response.output_item.done",
                {
                    "type": "response.output_item.done",
                    "sequence_number": next(sequence),
                    "output_index": index,
                    "item": item,
                },
            )
        )
    usage = {
        "input_tokens": reply.input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": reply.input_tokens + 5,
    }
    done = {**response, "status": "completed", "output": items, "usage": usage}
    events.append(
        ("response.completed", {"type": "response.completed", "sequence_number": next(sequence), "response": done})
    )
    return _sse(events)


def gemini_response(reply: Reply, model: str, serial: int) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if reply.text:
        parts.append({"text": reply.text})
    if reply.tool is not None:
        parts.append({"functionCall": {"name": reply.tool.name, "args": reply.tool.input}})
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {
            "promptTokenCount": reply.input_tokens,
            "candidatesTokenCount": 5,
            "totalTokenCount": reply.input_tokens + 5,
        },
        "modelVersion": model,
        "responseId": f"resp_{serial:04d}",
    }


def gemini_events(reply: Reply, model: str, serial: int) -> bytes:
    return f"data: {json.dumps(gemini_response(reply, model, serial))}\r\n\r\n".encode()


class Imitation:
    """One API on a loopback port, in a thread; ``requests`` holds what the agent sent."""

    def __init__(self, api: str, script: Script) -> None:
        assert api in ("anthropic", "openai", "gemini")
        self.api = api
        self.script = script
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> Imitation:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def conversation(self) -> list[dict[str, Any]]:
        """The bodies of the model requests (Messages or Responses), in order."""
        if self.api == "gemini":
            return [r.body for r in self.requests if r.method == "POST" and ":streamGenerateContent" in r.path]
        endpoint = "/v1/messages" if self.api == "anthropic" else "/v1/responses"
        return [r.body for r in self.requests if r.method == "POST" and r.path.split("?")[0] == endpoint]

    def _answer(self, method: str, path: str, body: dict[str, Any]) -> tuple[int, str, bytes]:
        with self._lock:
            self.requests.append(Request(method, path, body))
            serial = len(self.requests)
            endpoint = path.split("?")[0]
            if method == "POST" and endpoint == "/v1/messages":
                reply = self.script(body)
                return 200, "text/event-stream", anthropic_events(reply, str(body.get("model")), serial)
            if method == "POST" and endpoint == "/v1/responses":
                reply = self.script(body)
                return 200, "text/event-stream", responses_events(reply, str(body.get("model")), serial)
            if method == "POST" and endpoint.startswith("/v1beta/models/"):
                model, _, verb = endpoint.removeprefix("/v1beta/models/").partition(":")
                if verb == "streamGenerateContent":
                    return 200, "text/event-stream", gemini_events(self.script(body), model, serial)
                if verb == "generateContent":
                    answer = gemini_response(self.script(body), model, serial)
                    return 200, "application/json", json.dumps(answer).encode()
                if verb == "countTokens":
                    return 200, "application/json", json.dumps({"totalTokens": len(json.dumps(body)) // 4}).encode()
            if method in ("HEAD", "GET") and endpoint in ("/", "/v1"):
                return 200, "text/plain", b""
            return 404, "application/json", json.dumps({"error": {"message": f"no {method} {endpoint} here"}}).encode()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        imitation = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else {}
                except ValueError:
                    body = {"unparsed": raw.decode(errors="replace")}
                status, kind, payload = imitation._answer(self.command, self.path, body)
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(payload)

            do_GET = do_POST = do_HEAD = _serve

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler


def texts(value: Any) -> Iterator[str]:
    """Every string inside a request body, depth first: what the model would read."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from texts(item)
