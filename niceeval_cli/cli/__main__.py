"""`python -m niceeval_cli.cli` is `niceeval`."""

from . import main

main()
