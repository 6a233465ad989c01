"""A Ctrl-C that Python wraps in another error is still a Ctrl-C (cli.md: exit 130, one line).

CPython 3.11 turns a KeyboardInterrupt that lands while a class is made (a dataclass's fields
being named, as a command's modules or an eval module import) into `RuntimeError: Error calling
__set_name__`; the command said "internal error" and exited 4, or, for an eval module, "failed to
load" and exited 2. The descriptor below raises the KeyboardInterrupt exactly there."""

from __future__ import annotations

INTERRUPTED_WHILE_A_CLASS_IS_MADE = """
from niceeval_cli import define_eval
from niceeval_cli.expect import equals


class Field:
    def __set_name__(self, owner, name):
        raise KeyboardInterrupt  # as if Ctrl-C landed here


class Record:
    value = Field()


@define_eval()
def ok(t):
    t.check(1, equals(1))
"""


def test_a_ctrl_c_wrapped_by_python_while_an_eval_module_imports_is_exit_130(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/wrapped.py", INTERRUPTED_WHILE_A_CLASS_IS_MADE)
    result = project.run()
    text = result.stdout + result.stderr
    assert result.exit_code == 130, text
    assert "niceeval: interrupted; results sealed before this point are kept." in result.stderr
    assert "internal error" not in text and "failed to load" not in text and "Traceback" not in text
