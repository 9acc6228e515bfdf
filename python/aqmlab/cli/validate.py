"""`aqmlab validate SUITE`: the simulator against closed forms and exact counts, or against ns-2."""

from __future__ import annotations

from typing import Annotated

import typer

from .. import terminal
from ..validation import SUITES, run_suite
from ._common import command_app, command_help, fail, print_json, say

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
        "Prints key, model, ours, ratio, tolerance, pass and a note explaining any failure.\n\n"
        "`ns2`: aqmlab against ns-2.35 on 22 scenarios (python/aqmlab/ns2/scenarios/: one TCP per variant on "
        "drop-tail, drop-tail's buffer with CBRs, 4 and 16 TCPs on drop-tail and on RED, RED's average after "
        "idle, DRR and SFQ with CBRs and TCPs on 64 KB and on small buffers, TFRC alone and beside TCPs), "
        "against ns-2's numbers recorded in the package (its version, seeds, command and date shown above the "
        "table); --live runs ns-2 again and fails if the recorded numbers are stale. "
        "Rows: scenario, metric, ns-2, aqmlab (means over the seeds), ratio, tolerance "
        "(the issue's goal, or twice the standard error the seeds' spread allows), pass.\n\n"
        "`linux`: aqmlab's twin of each Linux cell (a qdisc as `tc qdisc add` writes it, under reno, cubic or "
        "bbr: 8 TCPs and a UDP on a 10 Mbit/s dumbbell) and of the two BBR-against-CUBIC pairs (drop-tail of "
        "0.5 and 4 BDP) against Linux 6.1's own runs in User-Mode Linux, recorded in the package (--live: "
        "measured again, about 80 minutes). Rows: UDP goodput, TCP total, Jain, median delay (pairs: each "
        "flow's goodput, BBR's share, median delay); tolerance Linux's spread (2 sd of its runs) or 10 %.\n\n"
        "`emulate`: the same cells emulated (`aqmlab emulate`: this machine's Linux TCP through aqmlab's qdisc), "
        "recorded in the package (--live: emulated again, root, about half an hour), against Linux's runs, and "
        "aqmlab's simulated twin against the emulation; columns Linux, emulated, aqmlab.\n\n"
        "Exits with status 1 if any graded row fails (or, for ns2, the recorded numbers are stale).",
    )
)
def validate(
    suite: Annotated[str, typer.Argument(help="Which suite: tcp, ns2, linux or emulate.")],
    live: Annotated[
        bool,
        typer.Option(
            "--live",
            help="ns2: run ns-2 too, and check the recorded numbers; linux: measure Linux again; "
            "emulate: emulate again (root).",
        ),
    ] = False,
    json_output: Annotated[
        bool,
        typer.Option(
            "--json",
            help='Print {"id", "rows": [{"key", "metric", "model", "ours", "tolerance", "pass", "note"?}]} on stdout '
            '(ns2: the reference\'s "ns2_version", "recorded", "command", "stale" and "not_rerun").',
        ),
    ] = False,
) -> None:
    if suite == "ns2":
        _validate_ns2(live, json_output)
        return
    if suite == "linux":
        _validate_linux(live, json_output)
        return
    if suite == "emulate":
        _validate_emulate(live, json_output)
        return
    if suite not in SUITES:
        raise fail(f"unknown suite {suite!r} (known: {', '.join([*SUITES, 'ns2', 'linux', 'emulate'])})")
    if live:
        raise fail("--live: only for the ns2 suite")
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


def _validate_ns2(live: bool, json_output: bool) -> None:
    from ..ns2.run import Ns2Error
    from ..ns2.validate import run_suite as run_ns2_suite

    try:
        outcome = run_ns2_suite(live=live, progress=lambda case: say(f"{case}: aqmlab" + (" and ns-2" if live else "")))
    except Ns2Error as e:
        raise fail(str(e), code=1) from None
    reference = outcome.reference
    if json_output:
        rows = [
            row.to_dict(reference="ns2") | ({"note": note} if note else {})
            for row, note in zip(outcome.rows, outcome.notes, strict=True)
        ]
        header = {key: reference[key] for key in ("ns2_version", "recorded", "command")}
        print_json(
            {
                "id": "ns2",
                **header,
                "live": live,
                "stale": outcome.stale,
                "not_rerun": outcome.not_rerun,
                "rows": rows,
            }
        )
    else:
        source = "run now" if live else f"recorded {reference['recorded']} by `{reference['command']}`"
        cells = []
        for row, sd in zip(outcome.rows, outcome.seed_sds, strict=True):
            scenario, metric = row.metric.split(": ", 1)
            ratio = f"{row.ours / row.paper:.3f}" if row.paper and isinstance(row.ours, float) else "-"
            mark = terminal.verdict(row.passed) if row.graded else "info"
            spread = "-" if sd is None else f"{sd:.1%}"
            cells.append(
                [scenario, metric, terminal.fmt(row.paper), terminal.fmt(row.ours), ratio, spread, row.tolerance, mark]
            )
        graded = [row for row in outcome.rows if row.graded]
        lines = terminal.table(
            ["scenario", "metric", "ns-2", "aqmlab", "ratio", "ns-2 seed sd", "tolerance", "pass"],
            cells,
            f"validate ns2: aqmlab against ns-{reference['ns2_version']} ({source})",
        )
        failures = [
            f"{row.metric.split(': ')[0]}: {note}"
            for row, note in zip(outcome.rows, outcome.notes, strict=True)
            if note
        ]
        lines += [line for failure in dict.fromkeys(failures) for line in terminal.paragraph(failure)]
        summary = f"{sum(row.passed for row in graded)} of {len(graded)} graded checks pass"
        terminal.show(
            [
                *lines,
                summary,
                *(f"stale: {problem}" for problem in outcome.stale),
                *(f"not re-run in ns-2: {case}" for case in outcome.not_rerun),
            ]
        )
    if not outcome.passed:
        raise typer.Exit(1)


def _validate_linux(live: bool, json_output: bool) -> None:
    from ..linux.uml import UmlError
    from ..linux.validate import run_suite as run_linux_suite

    try:
        outcome = run_linux_suite(live=live, progress=lambda cell: say(f"{cell}: aqmlab" + (" and Linux" * live)))
    except UmlError as e:
        raise fail(str(e), code=1) from None
    reference = outcome.reference
    header = {key: reference[key] for key in ("kernel", "recorded", "command", "host_load")}
    # The L4S cells ran on their own kernel (linux/l4s.json).
    l4s = (
        {key: outcome.l4s[key] for key in ("kernel", "build", "recorded", "command", "host_load")}
        if outcome.l4s
        else {}
    )
    if json_output:
        rows = [
            row.to_dict(reference="linux")
            | {"linux_spread": spread}
            | ({"note": f"{note}; {outcome.efforts[row.metric.split(': ')[0]]}"} if note else {})
            for row, (_, spread), note in zip(outcome.rows, outcome.linux, outcome.notes, strict=True)
        ]
        print_json({"id": "linux", **header, "l4s": l4s, "live": live, "tcp": outcome.tcp, "rows": rows})
    else:
        source = "measured now" if live else f"recorded {reference['recorded']} by `{reference['command']}`"
        cells = []
        for row, (mean, spread) in zip(outcome.rows, outcome.linux, strict=True):
            scenario, metric = row.metric.split(": ", 1)
            ratio = f"{row.ours / mean:.3f}" if mean else "-"
            linux = f"{terminal.fmt(mean)} ± {terminal.fmt(spread)}"
            verdict = terminal.verdict(row.passed)
            cells.append([scenario, metric, linux, terminal.fmt(row.ours), ratio, row.tolerance, verdict])
        lines = terminal.table(
            ["scenario", "metric", "Linux", "aqmlab", "ratio", "tolerance", "pass"],
            cells,
            f"validate linux: aqmlab against {reference['kernel']} ({source})",
        )
        tcps = "; ".join(f"{cc}: {tcp}" for cc, tcp in outcome.tcp.items())
        lines += terminal.paragraph(f"aqmlab's TCP: {tcps}. Host load while Linux ran: {reference['host_load']}.")
        if l4s:
            lines += terminal.paragraph(
                f"The L4S cells (dualpi2/..., fq_codel-ce/...) ran on {l4s['kernel']}, {l4s['build']}; recorded "
                f"{l4s['recorded']} by `{l4s['command']}`, host load {l4s['host_load']}."
            )
        # The failing rows by cell and cause, with what the cell's TCPs did in both.
        failing: dict[tuple[str, str], list[str]] = {}
        for row, note in zip(outcome.rows, outcome.notes, strict=True):
            if not row.passed:
                cell, metric = row.metric.split(": ", 1)
                failing.setdefault((cell, note), []).append(metric)
        for (cell, note), metrics in failing.items():
            text = f"{cell} ({', '.join(metrics)}): {note}; {outcome.efforts[cell]}"
            lines += terminal.paragraph(text)
        summary = f"{sum(row.passed for row in outcome.rows)} of {len(outcome.rows)} checks pass"
        terminal.show([*lines, summary])
    if not outcome.passed:
        raise typer.Exit(1)


def _validate_emulate(live: bool, json_output: bool) -> None:
    from ..linux.emulated import KNOWN_FAILURES
    from ..linux.emulated import run_suite as run_emulated_suite

    try:
        outcome = run_emulated_suite(live=live, progress=lambda cell: say(f"{cell}: aqmlab" + (" and emulated" * live)))
    except OSError as e:
        raise fail(f"emulate --live: {e}", code=1) from None
    reference, emulated = outcome.reference, outcome.emulated
    header = {
        "linux": {key: reference[key] for key in ("kernel", "recorded", "command", "host_load")},
        "emulated": {key: emulated[key] for key in ("kernel", "recorded", "command", "host_load")},
    }
    notes = {
        r.key: c.where if r.key in KNOWN_FAILURES else f"not expected to fail; {c.where}"
        for c in outcome.comparisons
        for r in c.rows
    }
    if json_output:
        rows = [
            r.to_dict(reference="reference")
            | {"reference_spread": spread[1]}
            | ({} if r.passed else {"note": notes[r.key]})
            for c in outcome.comparisons
            for r, spread in ((c.emulated_row, c.linux), (c.simulated_row, c.emulated))
        ]
        print_json({"id": "emulate", **header, "live": live, "rows": rows})
    else:
        cells = []
        for c in outcome.comparisons:
            metric = c.emulated_row.metric.split(": ", 1)[1]
            cells.append(
                [
                    c.cell,
                    metric,
                    f"{terminal.fmt(c.linux[0])} ± {terminal.fmt(c.linux[1])}",
                    f"{terminal.fmt(c.emulated[0])} ± {terminal.fmt(c.emulated[1])}",
                    terminal.verdict(c.emulated_row.passed),
                    terminal.fmt(c.simulated_row.ours),
                    terminal.verdict(c.simulated_row.passed),
                ]
            )
        lines = terminal.table(
            ["cell", "metric", "Linux", "emulated", "≈ Linux", "aqmlab", "≈ emulated"],
            cells,
            f"validate emulate: {emulated['kernel']} (recorded {emulated['recorded']} by `{emulated['command']}`) "
            f"against {reference['kernel']}",
        )
        lines += terminal.paragraph(
            "Emulated: Linux's TCP through aqmlab's twin of the qdisc, graded against Linux's runs (their spread, "
            "2 sd, or 10 %). aqmlab: the simulated twin (Linux TCP profile), graded against the emulated runs "
            f"(their spread or 10 %). Host load while emulating: {emulated['host_load']}."
        )
        failing: dict[tuple[str, str], list[str]] = {}
        for c in outcome.comparisons:
            for r in c.rows:
                if not r.passed:
                    # "bfifo.reno.udp_mbps.emulated": what fails, and in which comparison.
                    failing.setdefault((c.cell, notes[r.key]), []).append(r.key.split(".", 2)[2])
        for (cell, note), keys in failing.items():
            lines += terminal.paragraph(f"{cell} ({', '.join(keys)}): {note}; {outcome.efforts[cell]}")
        summary = f"{sum(r.passed for r in outcome.rows)} of {len(outcome.rows)} checks pass"
        terminal.show([*lines, summary])
    if not outcome.passed:
        raise typer.Exit(1)
