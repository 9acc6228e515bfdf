"""The `aqmlab` command (also `python -m aqmlab`): `run FILE --json` directly, everything else
through the typer CLI (`aqmlab.cli`); `aqmlab.run_summary` says why."""

import sys


def main() -> None:
    from .run_summary import command_line, print_summary

    quick = command_line(sys.argv[1:])
    if quick is not None:
        sys.exit(print_summary(*quick))
    from .cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
