"""A fake OpenAI-compatible judge for this example: no network, no key, two "models".

    python _fake_judge.py [PORT]          # serves http://127.0.0.1:PORT/v1 (default 8765); Ctrl-C stops it

It answers every `POST /v1/chat/completions` with a forced `grade` tool call, as a real judge
does, and decides by the model named in the request:

- `lenient-judge` says Y to every answer;
- `strict-judge` says Y only to an answer of at least eight words (a terse "Yes." is not a full
  answer), N otherwise.

So `niceeval run` (lenient) passes everything, and `niceeval regrade --judge-model strict-judge`
shows what a stricter judge would have decided, without running the evals again. Standard
library only; it binds 127.0.0.1.
"""

from __future__ import annotations

import json
import re
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_OUTPUT = re.compile(r"<output>\n(.*?)\n</output>", re.S)


def decide(model: str, prompt: str) -> tuple[str, str]:
    """(letter, reasoning) for the grading prompt, as the named model would answer."""
    found = _OUTPUT.search(prompt)
    answer = found.group(1) if found else ""
    if model == "strict-judge" and len(answer.split()) < 8:
        return "N", f"strict-judge: {answer!r} is too terse to fully answer the question."
    return "Y", f"{model}: the answer addresses the question."


class _Judge(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # quiet: the run's output is what matters
        pass

    def do_POST(self) -> None:  # the http.server hook for POST
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        model = str(request.get("model", ""))
        prompt = "\n".join(str(m.get("content", "")) for m in request.get("messages", []))
        letter, reasoning = decide(model, prompt)
        call = {"id": "call_1", "type": "function",
                "function": {"name": "grade", "arguments": json.dumps({"reasoning": reasoning, "choice": letter})}}
        body = json.dumps({
            "id": "fake", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "finish_reason": "tool_calls",
                         "message": {"role": "assistant", "content": None, "tool_calls": [call]}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        }).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def main() -> None:
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8765
    server = ThreadingHTTPServer(("127.0.0.1", port), _Judge)
    server.daemon_threads = True
    print(f"fake judge on http://127.0.0.1:{server.server_address[1]}/v1 (lenient-judge, strict-judge)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
