"""What the CSFQ paper's §3 comparisons (Stoica, Shenker, Zhang, SIGCOMM 1998) share: their
TCP, FRED's better version, CSFQ's flow-0 arithmetic; used by the demo, the figures (csfq/fig*.py, their
setup in csfq/_figures.py) and the tables (csfq/table*.py, their setup in csfq/_tables.py).

The mechanisms and their buffer are the presets of `aqmlab/presets.py` (`csfq_mechanisms`), where
the paper's words for each setting stand beside it.

TCP, one setup for every §3 experiment (`TCP`): the paper ran ns-2 (§3: "All algorithms
used in the simulation, except CSFQ and FRED, were part of the standard ns-2
distribution") and names no TCP variant or setting, so its TCPs were ns-2's of 1998 with
the defaults of the day: `profile = "ns2"` (`cwnd_ += 1/cwnd_`, one packet timed per RTT
on the 100 ms `tcpTick_`, `rtxcur_init_` 6 s, `window_` 20; see docs/scenario.md).
Variant: NewReno, kept from before the profile existed (unstated; ns-2's plain
`Agent/TCP` would be Tahoe). The demo (Fig. 3(b)) and Table 3 also run today's RFC TCP
(`TCP_RFC`, the `rfc` profile that the figures used before) as informative rows.
"""

from __future__ import annotations

from collections.abc import Mapping

from ...results import MBPS, Results

# The paper's simulator's TCP (module docstring), and today's RFC TCP for the informative rows.
# ns-2's `window_ 20` (the ns2 profile's default), written out because the figures' reasons use it.
WINDOW = 20
TCP = {"profile": "ns2", "variant": "newreno", "window": WINDOW}
TCP_RFC = {"profile": "rfc", "variant": "newreno"}


def better_fred(values: Mapping[str, float], lower_is_better: bool) -> str:
    """The FRED version the paper quotes as "FRED": "when we do not distinguish between the
    two, we are quoting the results from the version of FRED which performed better" (§3).
    `values` by mechanism; the better of "fred-1" and "fred-2" is the lower or the higher."""
    pick = min if lower_is_better else max
    return pick(("fred-1", "fred-2"), key=lambda m: values[m])


def tcp_share(results: Results) -> float:
    """The TCPs' (every flow but 0) mean goodput over flow 0's: what each TCP gets of flow 0's share."""
    flows = results.flows
    return flows.loc[flows["id"] != 0, "goodput_bps"].mean() / flows.loc[flows["id"] == 0, "goodput_bps"].sum()


def paper_tcp_share(capacity_mbps: float, tcps: int, flow0_mbps: float) -> float:
    """`tcp_share` that a paper's flow-0 number leaves at most: the rest of a full link, shared by the TCPs."""
    return (capacity_mbps - flow0_mbps) / tcps / flow0_mbps


def flow0_share_reason(results: Results, paper: str, paper_mbps: float | None = None) -> str:
    """Why CSFQ lets flow 0 (the UDP or ON-OFF source of a dumbbell, bottleneck "L->R") have
    more than the paper's `paper`, measured. CSFQ passes flow 0 at its fair-share estimate α,
    and α settles where the accepted rate equals the link's (Eq. 6), so flow 0 gets what the
    TCPs (every other flow) leave: α = C − their take. With `paper_mbps` (flow 0's goodput in
    the paper) the reason also gives the TCPs' share that the paper's number implies."""
    flows = results.flows
    tcp = flows[flows["id"] != 0]
    link = results.link("L->R")
    alpha = link["qdisc.alpha_bps"] / MBPS
    flow0 = flows.loc[flows["id"] == 0, "goodput_bps"].sum() / MBPS
    loss = tcp["window_dropped_packets"].sum() / tcp["window_sent_packets"].sum()
    reason = (
        f"CSFQ gives flow 0 its fair-share estimate α = {alpha:.3f} Mbps at the end (flow 0 {flow0:.3f} Mbps), "
        f"and α is what the TCPs leave of the link: they take {tcp['goodput_bps'].sum() / MBPS:.2f} Mbps, "
        f"each {tcp_share(results):.2f} of flow 0's share"
    )
    if paper_mbps is not None:
        implied = paper_tcp_share(link["rate_bps"] / MBPS, len(tcp), paper_mbps)
        reason += f"; the paper's {paper_mbps} Mbps leaves each TCP {implied:.2f} of it"
    return reason + (
        f". The TCPs lose {loss:.1%} of their packets and take {tcp['timeouts'].sum()} timeouts "
        f"against {tcp['fast_retransmits'].sum()} fast retransmits, which keeps α above the paper's {paper}"
    )
