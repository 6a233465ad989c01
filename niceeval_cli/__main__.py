"""`python -m niceeval_cli` is `niceeval`."""

from . import _interrupt

_interrupt.hold()  # as the console script: Ctrl-C from here on is one line and exit 130

from .cli import main  # noqa: E402

main()
