"""`aqmlab validate SUITE`: the simulator against closed forms and exact counts."""

from __future__ import annotations

from typing import Annotated

import typer

from .. import terminal
from ..validation import SUITES, run_suite
from ._common import command_app, command_help, fail, print_json

app = command_app()


@app.command(
    help=command_help(
        "validate",
        "`tcp`: one long-lived flow per variant (Reno, NewReno, SACK; Tahoe for the counts) over a 100 ms path "
        "with a loss module, or a 10 Mbps drop-tail bottleneck. Rows: periodic loss at p = 0.5/1/2 % against the "
        "exact periodic-loss cycle (W/2 + 2 rounds, 1/p = 3W²/8 + 5W/4 packets, ±3 %), with delayed ACKs at "
        "p = 0.1 % (b = 2, ±3 %); p ≤ 0.1 % against the square-root law (RED-PD eq. 1, ±5 %); after warm-up, "
        "zero timeouts and one fast retransmit per loss; Reno under Bernoulli loss against PFTK with "
        "t_RTO = 4·RTT (RED-PD eq. 2, three seeds, ±10 %), NewReno and SACK at least Reno's rate; drop-tail "
        "utilisation against the fluid sawtooth 3(P+B)²/(4(P²+PB+B²)) (±3 %); scripted losses (Reno times "
        "out on two in a window, NewReno does not; a timeout in recovery sets ssthresh to FlightSize/2). "
        "Prints key, model, ours, ratio, tolerance, pass and a note explaining any failure; exits with status "
        "1 if any row fails.",
    )
)
def validate(
    suite: Annotated[str, typer.Argument(help="Which suite: tcp.")],
    json_output: Annotated[
        bool,
        typer.Option(
            "--json",
            help='Print {"id", "rows": [{"key", "metric", "model", "ours", "tolerance", "pass", "note"?}]} on stdout.',
        ),
    ] = False,
) -> None:
    if suite not in SUITES:
        raise fail(f"unknown suite {suite!r} (known: {', '.join(SUITES)})")
    rows, notes = run_suite(suite)
    if json_output:
        print_json(
            {
                "id": suite,
                "rows": [
                    row.to_dict(reference="model") | ({"note": note} if note else {})
                    for row, note in zip(rows, notes, strict=True)
                ],
            }
        )
    else:
        lines = terminal.rows_table(rows, title=f"validate {suite}", reference="model", ratio=True, notes=notes)
        terminal.show([*lines, f"{sum(row.passed for row in rows)} of {len(rows)} checks pass"])
    if not all(row.passed for row in rows):
        raise typer.Exit(1)
