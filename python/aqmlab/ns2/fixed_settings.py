"""The ns-2.35 variables the export sets to one value whatever the scenario: those that make
ns-2's agents and queues the ones aqmlab's models reproduce (docs/ns2.md). The values are
ns-2's, the reasons beside them; what a scenario sets comes from the core (`export.py`).
"""

from __future__ import annotations

from typing import Any

# Queue/RED (queue/red.cc) without the options ns-2.35 added after RED's first models: no
# mark_p, no Adaptive RED, no cautious or double queue; the forced drop takes the arrival.
RED_FIXED: tuple[tuple[str, Any, str], ...] = (
    ("use_mark_p_", False, "mark every early drop when setbit_, and drop at avg >= maxthresh_ (not gentle)"),
    ("mark_p_", 0.1, "unused without use_mark_p_"),
    ("drop_tail_", True, "a forced drop takes the arrival"),
    ("drop_front_", False, ""),
    ("drop_rand_", False, ""),
    ("ns1_compat_", False, ""),
    ("doubleq_", False, ""),
    ("summarystats_", False, ""),
    ("adaptive_", 0, "not Adaptive RED: cur_max_p stays 1/linterm_"),
    ("feng_adaptive_", 0, ""),
    ("cautious_", 0, ""),
    ("alpha_", 0.01, "adaptive only"),
    ("beta_", 0.9, "adaptive only"),
    ("interval_", 0.5, "adaptive only"),
    ("targetdelay_", 0.005, "adaptive only (and thresh_ 0)"),
    ("top_", 0.5, "adaptive only"),
    ("bottom_", 0.01, "adaptive only"),
)

TCP_AGENTS = {"tahoe": "Agent/TCP", "reno": "Agent/TCP/Reno", "newreno": "Agent/TCP/Newreno", "sack": "Agent/TCP/Sack1"}
# (variant is sack, delayed ACK) -> the sink.
TCP_SINKS = {
    (False, False): "Agent/TCPSink",
    (False, True): "Agent/TCPSink/DelAck",
    (True, False): "Agent/TCPSink/Sack1",
    (True, True): "Agent/TCPSink/Sack1/DelAck",
}
WINDOW_OPTIONS = {"per_window": 0, "per_ack": 1}

# ns-2's one-way TCP as the `ns2` profile reproduces it (ns-2 of 1997–2001,
# transport/tcp/mod.rs and sender.rs): the variables whose ns-2.35 defaults came later, set
# back as the RED-PD authors' validation suite does (tcl/test/test-suite-red-pd.tcl).
NS2_PROFILE_CLASS_SETTINGS: tuple[tuple[str, str, Any, str], ...] = (
    ("Agent/TCP", "syn_", False, "no SYN: the first packet is data (default true from 2001/05/17)"),
    ("Agent/TCP", "delay_growth_", False, "(true from 2001/05/17)"),
    ("Agent/TCP", "singledup_", 0, "no limited transmit (1 from 2001/11/28)"),
    ("Agent/TCP", "LimTransmitFix_", False, ""),
    ("Agent/TCP", "precisionReduce_", False, "integer window halving (true from 2006/01/24)"),
    ("Agent/TCP", "updated_rttvar_", False, "(added 2006/01/21)"),
    ("Agent/TCP", "timerfix_", False, "(true from 2001/05/11)"),
    ("Agent/TCP", "rfc2988_", False, "back-off up to 64 (true from 2002/03/07)"),
    ("Agent/TCP", "maxrto_", 100000, "no practical cap (60 from 2007/03/28)"),
    ("Agent/TCP", "exitFastRetrans_", True, "inflate by dupacks only in fast recovery, as the profile (and the suite)"),
    ("Agent/TCP", "bugfix_ss_", True, "fast retransmit when packet 1 is lost (as the suite runs)"),
    ("Agent/TCP", "bugFix_", True, "one window reduction per window of data"),
    ("Agent/TCP", "useHeaders_", False, "packetSize_ is the packet on the wire, as aqmlab's packet_size"),
    ("Agent/TCP", "timestamps_", False, "RTT from one timed packet per RTT"),
    ("Agent/TCP", "windowInitOption_", 1, "windowInit_ packets"),
    ("Agent/TCP", "max_ssthresh_", 0, "no limited slow start"),
    ("Agent/TCP", "maxburst_", 0, ""),
    ("Agent/TCP", "numdupacks_", 3, ""),
    ("Agent/TCP", "overhead_", 0, ""),
    ("Agent/TCP", "srtt_init_", 0, ""),
    ("Agent/TCP", "rttvar_init_", 12, ""),
    ("Agent/TCP", "T_SRTT_BITS", 3, ""),
    ("Agent/TCP", "T_RTTVAR_BITS", 2, ""),
    ("Agent/TCP", "rttvar_exp_", 2, ""),
    ("Agent/TCP/Newreno", "newreno_changes_", 0, ""),
    ("Agent/TCP/Newreno", "newreno_changes1_", 0, "restart the timer on every partial ACK"),
    ("Agent/TCP/Newreno", "partial_window_deflation_", 0, "(1 from 2002)"),
    ("Agent/TCP/Newreno", "exit_recovery_fix_", 0, ""),
    ("Agent/TCPSink", "packetSize_", 40, "ACKs of 40 bytes, as aqmlab's"),
    ("Agent/TCPSink", "maxSackBlocks_", 3, ""),
    ("Agent/TCPSink", "generateDSacks_", False, ""),
    ("Agent/TCPSink", "RFC2581_immediate_ack_", True, "a gap-filling packet is ACKed at once"),
)

# Agent/TFRC and Agent/TFRCSink (tcp/tfrc.cc, tfrc-sink.cc) as ns-2.35 sets them (ns-default.tcl),
# written out so the script says what runs; TFRC's `profile = "ns2"` reproduces these (the export
# writes InitRate_, tcp_tick_ and discount_ from the flow's table).
TFRC_FIXED: tuple[tuple[str, Any, str], ...] = (
    ("df_", 0.95, "R's EWMA weight on the old value"),
    ("minrto_", 0.0, ""),
    ("srtt_init_", 0, ""),
    ("rttvar_init_", 12, ""),
    ("rtxcur_init_", 6.0, ""),
    ("rttvar_exp_", 2, ""),
    ("T_SRTT_BITS", 3, ""),
    ("T_RTTVAR_BITS", 2, ""),
    ("rate_init_option_", 2, "slow start from RFC 3390's initial window"),
    ("rate_init_", 2, "unused with rate_init_option_ 2"),
    ("ssmult_", 2, "slow start doubles the rate per RTT"),
    ("slow_increase_", True, "slow start spreads each increase over the RTT"),
    ("bval_", 1, "b of the throughput equation"),
    ("ca_", 1, "packets spaced by sqrt(mean R) / sqrt(R sample)"),
    ("overhead_", 0, "no dither of the gaps"),
    ("maxHeavyRounds_", 0, ""),
    ("conservative_", False, ""),
    ("voip_", False, ""),
    ("SndrType_", 0, "an infinite sender"),
    ("oldCode_", False, ""),
    ("idleFix_", True, ""),
    ("ecn_", False, ""),
)
TFRC_SINK_FIXED: tuple[tuple[str, Any, str], ...] = (
    ("packetSize_", 40, "feedback of 40 bytes, as aqmlab's"),
    ("NumFeedback_", 1, "one report per RTT"),
    ("algo_", 1, "the weighted average of loss intervals (SIGCOMM 2000)"),
    ("numPkts_", 1, "a loss at the first later packet"),
    ("PreciseLoss_", 1, ""),
    ("minDiscountRatio_", 0.5, ""),
    ("smooth_", 1, "the open interval counted only when it raises the average"),
    ("ShortIntervals_", 0, ""),
    ("AdjustHistoryAfterSS_", 1, ""),
    ("NumSamples_", -1, "the last 8 intervals"),
    ("InitHistorySize_", 100000, ""),
)
