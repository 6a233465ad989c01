"""What every command shares: the typer app, the options' shapes, the guard that turns a
NiceEvalError into one paragraph and its exit code, and the console."""

import functools
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
import typer.core

from .. import __version__, _interrupt
from .._errors import COMMAND_EXIT_CODES, ExitCode, NiceEvalError
from .._stdout import reader_went_away


def _metavar_only(param: Any) -> Any:
    """A parameter's help row shows its metavar, never typer's type label (`<list[str]>` for an
    argument, `<bool>` for a flag such as --help): a flag's metavar is the empty one, and an
    argument, whose label typer draws whatever its metavar, is told to draw none."""
    if isinstance(param, typer.core.TyperArgument):
        param.display_type_rich = _no_type_label  # type: ignore[method-assign]  # this one parameter only
    elif getattr(param, "is_flag", False) and param.metavar is None:
        param.metavar = ""
    return param


def _no_type_label(ctx: Any = None) -> None:
    return None


class _Command(typer.core.TyperCommand):
    """Every command's class (typer's `cls=`): its parameters and its --help shown by metavar only."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            _metavar_only(param)

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)
        return _metavar_only(option) if option is not None else None


class _Group(typer.core.TyperGroup):
    """The command groups' class (`niceeval`, `niceeval sandbox`): --help shown without a type."""

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)
        return _metavar_only(option) if option is not None else None


app = typer.Typer(
    name="niceeval",
    help="Run evals for AI applications and agents; read honest results back from SQLite.\n\n"
         "Start with `niceeval init`, then `niceeval run` and `niceeval view`.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
    cls=_Group,
)


def command(*names: str, on: typer.Typer = app, **options: Any) -> Callable[[Callable[..., None]], Any]:
    """`on.command(...)` (the app's by default), the command of class `_Command`."""
    return on.command(*names, cls=_Command, **options)

def _exit_codes(command: str) -> str:
    """The command's own exit codes for its --help, from the one table (`_errors.COMMAND_EXIT_CODES`)."""
    codes = sorted(COMMAND_EXIT_CODES[command].items())
    return "**Exit codes**\n\n" + "\n".join(f"* {int(code)}: {meaning}" for code, meaning in codes) + "\n"


def _guard(fn: Callable[..., None]) -> Callable[..., None]:
    """User mistakes → one paragraph on stderr and their exit code; bugs → short message + crash file, exit 4."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        try:
            with _interrupt.command_body():  # Ctrl-C / SIGTERM raise KeyboardInterrupt only in here
                fn(*args, **kwargs)
        except (typer.Exit, SystemExit):
            raise
        except KeyboardInterrupt:
            raise _interrupted() from None
        except BrokenPipeError:  # `niceeval query ... | head`: the reader has what it wanted
            reader_went_away()
            raise typer.Exit(ExitCode.OK) from None
        except NiceEvalError as error:
            if _caused_by_interrupt(error):  # an eval module's import that Ctrl-C stopped
                raise _interrupted() from None
            typer.echo(f"niceeval: {error}", err=True)
            raise typer.Exit(error.exit_code) from None
        except UnicodeEncodeError as exc:
            given = _argument_not_utf8(exc, kwargs)
            if given is None:
                _report_crash(exc)
                raise typer.Exit(ExitCode.INTERNAL) from None
            typer.echo(f"niceeval: the argument {given} holds bytes that are not UTF-8 (shown as \\udcXX), which "
                       "no id, key or name can hold; give it as UTF-8 text.", err=True)
            raise typer.Exit(ExitCode.USAGE) from None
        except Exception as exc:
            if _caused_by_interrupt(exc):
                raise _interrupted() from None
            _report_crash(exc)
            raise typer.Exit(ExitCode.INTERNAL) from None

    return wrapper


def _argument_not_utf8(exc: UnicodeEncodeError, arguments: dict[str, Any]) -> str | None:
    """The command's argument (shown escaped) that a UnicodeEncodeError failed on, when it is one:
    bytes that are not UTF-8 on the command line reach Python as lone surrogates, which SQLite and
    every encoder refuse. None for text from anywhere else (that is a bug, reported as one)."""
    from ..reports import visible

    failed = exc.object if isinstance(exc.object, str) else ""
    if not failed or exc.reason != "surrogates not allowed":
        return None
    for value in arguments.values():
        for text in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(text, str) and failed in text:
                return f"\"{visible(text, 120)}\""
    return None


def _interrupted() -> typer.Exit:
    typer.echo(_interrupt.MESSAGE, err=True)
    _interrupt.announced()
    return typer.Exit(ExitCode.INTERRUPTED)


def _caused_by_interrupt(exc: BaseException) -> bool:
    """A Ctrl-C that a library wrapped in another error is still a Ctrl-C, not a bug: CPython 3.11
    raises `RuntimeError: Error calling __set_name__` from a KeyboardInterrupt that lands while a
    class is made (a dataclass's fields, as a command's modules import); pydantic-core, building a
    model's validator or serializer, folds it into a SchemaError's text ("KeyboardInterrupt: ")."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt) or "KeyboardInterrupt" in str(cause):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


def _report_crash(exc: BaseException) -> None:
    from .._crash import crash_secrets, write_crash_report
    from .._redact import redact

    try:
        where = f"the traceback is in {write_crash_report(traceback.format_exc())}"
    except OSError:
        where = "the traceback could not be written"
    message = redact(f"{type(exc).__name__}: {exc}", crash_secrets())
    typer.echo(
        f"niceeval: internal error ({message}); this is a bug in NiceEval — {where}. "
        "Results sealed before this point are kept in the store.",
        err=True,
    )


def _version(value: bool) -> None:
    if value:
        typer.echo(f"niceeval {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, metavar="",
                           help="Print the version and exit.")
    ] = False,
) -> None:
    """NiceEval: run evals, then `niceeval view` to see why something failed."""


# Optional[...] (not `X | None`): typer reads these annotations at runtime on Python 3.10 too.
_FLAG = ""  # the metavar of a flag: none, not typer's `<bool>`


def _flag(*names: str, **options: Any) -> Any:
    """A boolean flag, shown in --help without a type placeholder."""
    return typer.Option(*names, metavar=_FLAG, **options)

_FILES = "Project"
_SCALE = "Scale"
_SELECT = "Selection"
ConfigOpt = Annotated[Optional[Path], typer.Option(  # noqa: UP045
    "--config", metavar="FILE", help="Use this niceeval.toml.", rich_help_panel=_FILES)]
StoreOpt = Annotated[Optional[Path], typer.Option(  # noqa: UP045
    "--store", metavar="FILE", help="Use this store file.", rich_help_panel=_FILES)]
Names = Optional[list[str]]  # noqa: UP045
Int = Optional[int]  # noqa: UP045
Text = Optional[str]  # noqa: UP045
ExperimentsOpt = Annotated[Names, typer.Option(
    "-e", "--experiment", metavar="ID", help="Experiment id, or a group prefix like `models/` (repeatable).",
    rich_help_panel=_SELECT)]
ExperimentFilter = Annotated[Names, typer.Option(
    "--experiment", metavar="ID", help="Only this experiment id, or a group prefix like `models/` (repeatable).",
    rich_help_panel=_SELECT)]
EvalFilter = Annotated[Names, typer.Option(
    "--eval", metavar="PREFIX", help="Only evals whose id starts with PREFIX (repeatable).", rich_help_panel=_SELECT)]


def _console(stderr: bool = False, file: Any = None) -> Any:
    """`file`: a stream the console keeps (else it writes to whatever sys.stdout is at the time)."""
    from ..reports import console

    no_color = bool(os.environ.get("NO_COLOR"))
    return console(stderr=stderr, file=file, no_color=no_color, highlight=False, soft_wrap=True)



_console_script = False  # set by main(): only a real process may exit without joining threads


def _exit_now_if_threads_linger(code: int) -> None:
    """A plain-function adapter abandoned by a timeout or Ctrl-C may still be running in a
    worker thread; everything is sealed and printed, so exit now instead of waiting for it."""
    import threading

    if _console_script and any(t.name.startswith("niceeval-worker") and t.is_alive() for t in threading.enumerate()):
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (BrokenPipeError, ValueError):
            pass
        os._exit(code)
