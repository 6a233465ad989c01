#!/usr/bin/env python3
"""A scripted model server on 127.0.0.1 for coding-agent CLIs: nothing leaves the machine.

It speaks what the CLIs call — Anthropic's Messages API (`POST /v1/messages`, streamed or not)
for Claude Code, OpenAI's Responses API (`POST /v1/responses`, streamed) for Codex — and plays a
script: one shell command per model call, then a final text. The step is the number of tool
results already in the conversation, so a CLI replaying its history always gets the next one.

    python _fake_model.py SCRIPT.json [PORT_FILE]    # serves until killed; writes its port

SCRIPT.json: {"commands": ["sed -i ... calc.py", ...], "final": "text", "input_tokens": 100,
"output_tokens": 20}. Every request is appended to `<SCRIPT>.requests.ndjson`.
"""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


def _shell_call(tools: list[Any], command: str) -> tuple[str, dict[str, Any]]:
    """The offered shell tool's name and arguments for `command` (the CLIs name it differently)."""
    names = [t.get("name") for t in tools if isinstance(t, dict)]
    if "Bash" in names:
        return "Bash", {"command": command, "description": "run a command"}
    if "exec_command" in names:
        return "exec_command", {"cmd": command}
    if "shell_command" in names:
        return "shell_command", {"command": command}
    return "shell", {"command": ["bash", "-lc", command]}


class Script:
    def __init__(self, path: Path) -> None:
        data = json.loads(path.read_text())
        self.commands: list[str] = data.get("commands", [])
        self.final: str = data.get("final", "Done.")
        self.input_tokens = int(data.get("input_tokens", 100))
        self.output_tokens = int(data.get("output_tokens", 20))
        self.log = path.with_suffix(".requests.ndjson")
        self.lock = threading.Lock()

    def record(self, path: str, body: Any) -> None:
        with self.lock, self.log.open("a") as out:
            out.write(json.dumps({"path": path, "body": body}) + "\n")


class Handler(BaseHTTPRequestHandler):
    script: Script
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        return None

    def _send(self, code: int, body: bytes, kind: str = "application/json") -> None:
        self.send_response(code)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        self._send(200, b'{"data": [], "models": []}')

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        path = self.path.split("?", 1)[0]
        self.script.record(path, body)
        if path.endswith("/messages/count_tokens"):
            self._send(200, b'{"input_tokens": 10}')
        elif path.endswith("/messages"):
            self._anthropic(body)
        elif path.endswith("/responses"):
            self._responses(body)
        else:
            self._send(404, b'{"error": {"message": "not served by the fake model"}}')

    # -- Anthropic Messages (Claude Code) ------------------------------------------------------
    def _anthropic(self, body: dict[str, Any]) -> None:
        script = self.script
        tools = body.get("tools") or []
        done = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        if tools and done < len(script.commands):
            name, args = _shell_call(tools, script.commands[done])
            block: dict[str, Any] = {"type": "tool_use", "id": f"toolu_{done + 1:04d}", "name": name, "input": args}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": script.final if tools else "Coding task"}
            stop = "end_turn"
        usage = {"input_tokens": script.input_tokens, "output_tokens": script.output_tokens}
        message = {"id": f"msg_{done + 1}", "type": "message", "role": "assistant", "model": body.get("model", "m"),
                   "content": [block], "stop_reason": stop, "stop_sequence": None, "usage": usage}
        if not body.get("stream"):
            self._send(200, json.dumps(message).encode())
            return
        start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
        if block["type"] == "text":
            opened, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
        else:
            opened = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        self._sse([
            ("message_start", {"type": "message_start", "message": start}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": opened}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": script.output_tokens}}),
            ("message_stop", {"type": "message_stop"}),
        ])

    # -- OpenAI Responses (Codex) -------------------------------------------------------------
    def _responses(self, body: dict[str, Any]) -> None:
        script = self.script
        items = body.get("input") or []
        done = sum(1 for i in items if isinstance(i, dict) and i.get("type") == "function_call_output")
        response_id = f"resp_{done + 1}"
        if done < len(script.commands):
            name, args = _shell_call(body.get("tools") or [], script.commands[done])
            item: dict[str, Any] = {"type": "function_call", "id": f"fc_{done + 1}", "call_id": f"call_{done + 1}",
                                    "name": name, "arguments": json.dumps(args), "status": "completed"}
        else:
            item = {"type": "message", "id": f"msg_{done + 1}", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": script.final, "annotations": []}]}
        usage = {"input_tokens": script.input_tokens, "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": script.output_tokens, "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": script.input_tokens + script.output_tokens}
        response = {"id": response_id, "object": "response", "status": "completed", "model": body.get("model"),
                    "output": [item], "usage": usage}
        self._sse([
            ("response.created", {"type": "response.created", "response": {**response, "status": "in_progress",
                                                                           "output": []}}),
            ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": item}),
            ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
            ("response.completed", {"type": "response.completed", "response": response}),
        ])

    def _sse(self, events: list[tuple[str, dict[str, Any]]]) -> None:
        data = "".join(f"event: {name}\ndata: {json.dumps(payload)}\n\n" for name, payload in events).encode()
        self._send(200, data, "text/event-stream")


def serve(script_path: Path, port: int = 0) -> ThreadingHTTPServer:
    """Start serving on a thread; the caller stops it with `.shutdown()`."""

    class Bound(Handler):
        script = Script(script_path)

    server = ThreadingHTTPServer(("127.0.0.1", port), Bound)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


if __name__ == "__main__":
    live = serve(Path(sys.argv[1]))
    if len(sys.argv) > 2:
        Path(sys.argv[2]).write_text(str(live.server_address[1]))
    print(live.server_address[1], flush=True)
    threading.Event().wait()
