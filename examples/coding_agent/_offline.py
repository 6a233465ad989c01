"""Run a real coding-agent CLI offline: a scripted model server on 127.0.0.1 answers it.

`_offline_claude` and `_offline_codex` call `main("claude" | "codex")`: start `_fake_model.py`
with a script that fixes calc.py and writes NOTES.md, point the CLI at it, run the CLI with the
arguments NiceEval gave (its stdout is the event stream NiceEval reads), stop the server. Without
the CLI installed they say so and exit 127, so the experiment's preflight stops it (exit 3).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _fake_model import serve  # noqa: E402

NOTES = """# Notes

## Install

    python -m pip install -e .
    python -m pytest -q        # all tests pass

## Rollback

Revert the change with `git revert <commit>` (or `git checkout HEAD~1 -- calc.py`), then run
`python -m pytest -q` again to confirm the previous behaviour is back.
"""

SCRIPT = {
    "commands": ["sed -i 's/return a - b/return a + b/' calc.py",
                 f"cat > NOTES.md <<'NOTES_END'\n{NOTES}NOTES_END"],
    "final": "Fixed calc.add (it subtracted) and wrote NOTES.md with install and rollback steps.",
    "input_tokens": 1200,
    "output_tokens": 150,
}
NPM = {"claude": "@anthropic-ai/claude-code", "codex": "@openai/codex"}


def main(cli: str) -> int:
    found = shutil.which(cli)
    if found is None:
        print(f"{cli} is not installed (npm install -g {NPM[cli]}); this example experiment needs the real CLI",
              file=sys.stderr)
        return 127
    if sys.argv[1:] == ["--version"]:
        return subprocess.call([found, "--version"])
    state = Path(tempfile.gettempdir()) / f"niceeval-example-{cli}"  # the CLI's home: resume finds its sessions
    state.mkdir(exist_ok=True)
    script = state / "script.json"
    script.write_text(json.dumps(SCRIPT))
    server = serve(script)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    env = dict(os.environ)
    if cli == "claude":
        env.update(HOME=str(state), ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY="offline-example",
                   CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1")
    else:
        (state / "config.toml").write_text('model_provider = "offline"\n[model_providers.offline]\n'
                                           f'name = "offline"\nbase_url = "{url}/v1"\nwire_api = "responses"\n')
        env.update(CODEX_HOME=str(state))
    try:
        return subprocess.call([found, *sys.argv[1:]], env=env, stdin=subprocess.DEVNULL)
    finally:
        server.shutdown()
