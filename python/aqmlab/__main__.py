"""The `aqmlab` command (also `python -m aqmlab`): `run FILE --json` directly, everything else
through the typer CLI (`aqmlab.cli`); `aqmlab.run_summary` says why."""

import gc
import sys


def main() -> None:
    from .run_summary import command_line, print_summary

    quick = command_line(sys.argv[1:])
    if quick is not None:
        # What the imports built lives until the process ends: the cyclic collector need not
        # walk it again, in a collection during the run nor in the interpreter's last ones at
        # exit (8 % of the instructions of a short run; issue 21).
        gc.freeze()
        sys.exit(print_summary(*quick))
    from .cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
