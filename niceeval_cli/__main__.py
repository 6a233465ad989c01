"""`python -m niceeval_cli` is `niceeval`."""

from .cli import main

main()
