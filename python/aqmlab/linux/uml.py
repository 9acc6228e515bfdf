"""Runs one dumbbell in Linux under User-Mode Linux and reads its measurements (issue 24).

User-Mode Linux (Debian's `user-mode-linux`, a Linux 6.1 kernel that runs as an ordinary
process) boots with this machine's `/` as a read-only root; PID 1 is `INIT`, which mounts the
run's folder read-write, loads the qdisc modules and runs `JOB`, the dumbbell, in three
network namespaces:

    snd (iperf3 TCP clients on 10.1.0.11, .12, ..., the UDP one on 10.1.0.20)
      --veth s0|r0--> rtr --veth r1|c0--> rcv (the iperf3 servers)

Who sends is a `Dumbbell`: `Dumbbell.cell(cc)` is `validate linux`'s (8 TCP flows under `cc` with
base RTTs 20-100 ms, and a UDP flood); others mix congestion controls (BBR against CUBIC; DCTCP
against CUBIC or Reno, beside a UDP flow marked ECT(1)).

Which kernel boots is a `Kernel`: `DEBIAN`, Debian's `user-mode-linux` package, or `L4S`, the one
`tools/l4s_kernel/build.sh` builds (Linux 6.1 with sch_dualpi2, and the L4STeam iproute2's tc).

The bottleneck is the router's egress r1: an htb class at `RATE` with the qdisc under test as its
child (handle 10:). Each TCP flow's base RTT (`RTTS_MS`) is a netem delay on the receiver's
egress (the ACK path), chosen by the flow's address. Offloads (TSO, GSO, GRO) are off, so every
packet is one MTU-sized frame, as in a simulator. Nothing leaves the UML process.

Measured over [warmup, duration] of the run: each flow's goodput from its iperf3 server's
per-second intervals (payload bytes), and the qdisc's backlog in bytes, sampled with `tc -s -j`
about ten times a second, as queueing delay (backlog / rate), the median. UML is one CPU at
HZ = 100: it is sensitive to the host's load, which `run_cell` records beside each run.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import statistics
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

UML = "/usr/bin/linux.uml"
INSTALL_HINT = "apt-get install -y user-mode-linux iperf3 ethtool kmod"
RTTS_MS = (20, 30, 40, 50, 60, 70, 80, 100)
RATE = "10mbit"
RATE_BPS = 10e6
# htb's bucket: 10 full frames (12 ms at 10 Mbit/s) rather than tc's default of one. With one, every
# late wake-up of the guest's timer (UML is a process among the host's) is capacity lost: 8.6 Mbit/s
# measured at a host load of 10.
HTB_BURST = "15140b"
UDP_RATE = "10M"
# The senders' last address bytes: TCP flows from FIRST_TCP_SENDER up, the UDP one UDP_SENDER; and each
# one's IP + transport header bytes (TCP with timestamps: 20 + 32; UDP: 20 + 8).
FIRST_TCP_SENDER = 11
UDP_SENDER = 20
TCP_HEADERS = 52
UDP_HEADERS = 28
# The ACK path's prio qdisc has 10 bands, one per TCP flow and the last for the rest.
MAX_TCP_FLOWS = 9
# 1472 B of UDP payload = one 1514-B Ethernet frame, as each TCP segment (1448 B + 12 B of timestamps).
UDP_PAYLOAD = 1472
MODULES = (
    "veth sch_htb sch_prio sch_netem sch_ingress cls_u32 act_gact "
    "sch_red sch_choke sch_sfb sch_sfq sch_codel sch_fq_codel sch_pie tcp_bbr tcp_dctcp"
)
# Twins whose qdisc the reference kernel (Debian's UML 6.1) lacks: sch_dualpi2 is mainline from 6.17,
# so it has no `validate linux` cell until a kernel with it is recorded.
MISSING_QDISCS = frozenset({"dualpi2"})
# Congestion controls that answer every mark (RFC 9330's scalable ones); the other TCP flows are classic.
SCALABLE = ("dctcp", "prague")
# A run is the duration plus boot (5 s) and the servers' start; more than this is a hung guest.
TIMEOUT_MARGIN_S = 120.0


class UmlError(RuntimeError):
    """User-Mode Linux is missing, the guest failed, or it measured nothing."""


@dataclass(frozen=True)
class Kernel:
    """A User-Mode Linux kernel: its binary, the folder holding its module folder (one per release,
    as /lib/modules), the modules the dumbbell loads, the `tc` that sets up and reads the qdisc
    under test, and how to get them."""

    binary: str
    modules: str
    load: str
    tc: str
    install_hint: str

    def available(self) -> bool:
        return Path(self.binary).exists() and all(shutil.which(tool) for tool in ("iperf3", "ethtool", "modprobe"))

    def version(self) -> str:
        """The kernel's release, from its module folder (e.g. `6.1.176`)."""
        releases = sorted(Path(self.modules).glob("*"))
        if not releases:
            raise UmlError(f"no User-Mode Linux modules in {self.modules}; {self.install_hint}")
        return releases[-1].name


DEBIAN = Kernel(UML, "/usr/lib/uml/modules", MODULES, "tc", INSTALL_HINT)
# tools/l4s_kernel/build.sh's output folder.
L4S_BUILD = Path(os.environ.get("AQMLAB_L4S_KERNEL", "/work/l4s-kernel"))
L4S = Kernel(
    str(L4S_BUILD / "linux.uml"),
    str(L4S_BUILD / "root/lib/modules"),
    MODULES + " sch_dualpi2",
    str(L4S_BUILD / "iproute2/tc/tc"),
    f"tools/l4s_kernel/build.sh {L4S_BUILD} (and {INSTALL_HINT})",
)


@dataclass(frozen=True)
class Dumbbell:
    """Who sends through the bottleneck: each TCP flow as (congestion control, base RTT in ms), and
    whether iperf3's UDP flood (`UDP_RATE`) runs beside them, with `udp_tos` as its IP TOS byte
    (iperf3's `-S`: 1 is ECT(1))."""

    tcp: tuple[tuple[str, int], ...]
    udp: bool = True
    udp_tos: int = 0

    def __post_init__(self) -> None:
        if not 1 <= len(self.tcp) <= MAX_TCP_FLOWS:
            raise ValueError(f"a dumbbell has 1 to {MAX_TCP_FLOWS} TCP flows, got {len(self.tcp)}")

    @classmethod
    def cell(cls, cc: str) -> Dumbbell:
        """`validate linux`'s dumbbell: 8 TCP flows under `cc`, base RTTs `RTTS_MS`, and the UDP flood."""
        return cls(tuple((cc, rtt) for rtt in RTTS_MS))

    @property
    def senders(self) -> tuple[int, ...]:
        """Each flow's last address byte: the TCP flows in order, then the UDP one."""
        tcp = tuple(FIRST_TCP_SENDER + k for k in range(len(self.tcp)))
        return tcp + ((UDP_SENDER,) if self.udp else ())

    @property
    def headers(self) -> tuple[int, ...]:
        """Each flow's IP and transport header bytes, in `senders` order."""
        return (TCP_HEADERS,) * len(self.tcp) + ((UDP_HEADERS,) if self.udp else ())

    @property
    def receiver_cc(self) -> str | None:
        """The receivers' congestion control (their namespace's default), where a flow needs it: DCTCP's
        receiver echoes each CE (RFC 8257 §3.2), and only a DCTCP listener accepts its ECT(0) SYN
        (tcp_ecn_create_request; beside any other, DCTCP falls back to `dctcp-reno`, without ECN)."""
        return "dctcp" if any(cc == "dctcp" for cc, _ in self.tcp) else None

    @property
    def route_ccs(self) -> list[tuple[int, str]]:
        """The TCP flows (index, congestion control) that negotiate ECN in their handshake because their
        congestion control needs it (TCP_CONG_NEEDS_ECN: the scalable ones)."""
        return [(k, cc) for k, (cc, _) in enumerate(self.tcp) if cc in SCALABLE]

    @property
    def scalable(self) -> list[bool]:
        """Per TCP flow, whether its congestion control is scalable (`SCALABLE`)."""
        return [cc in SCALABLE for cc, _ in self.tcp]

    def to_dict(self) -> dict[str, Any]:
        return {
            "tcp": [list(flow) for flow in self.tcp],
            "udp": self.udp,
            "udp_tos": self.udp_tos,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Dumbbell:
        return cls(
            tuple((cc, int(rtt)) for cc, rtt in data["tcp"]),
            bool(data["udp"]),
            int(data.get("udp_tos", 0)),
        )

    @classmethod
    def of_run(cls, folder: Path) -> Dumbbell:
        """The dumbbell a run's folder was made with (`dumbbell.json`); runs kept from before that file
        was written are the cells' 8 TCP flows and UDP flood (their congestion control does not matter
        to `measure`)."""
        path = folder / "dumbbell.json"
        return cls.from_dict(json.loads(path.read_text())) if path.exists() else cls.cell("reno")


# PID 1 of the guest. $run and $modules (the kernel command line's run= and modules=) are this run's
# folder on the host and the folder holding the kernel's module folder.
INIT = r"""#!/bin/bash
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp
mount -t proc proc /proc; mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null || mount -t tmpfs tmpfs /dev
[ -e /dev/null ] || mknod -m 666 /dev/null c 1 3
[ -e /dev/urandom ] || mknod -m 444 /dev/urandom c 1 9
[ -e /dev/random ] || mknod -m 444 /dev/random c 1 8
mount -t tmpfs tmpfs /run; mount -t tmpfs tmpfs /tmp  # iperf3 keeps its buffers in files under /tmp
mount -t hostfs hostfs "$run" -o "$run"
# modprobe wants lib/modules/$(uname -r): the package's modules, indexed in a scratch tree.
mods=/run/modules/lib/modules/$(uname -r); mkdir -p "$(dirname "$mods")"
ln -s "$modules/$(uname -r)" "$mods"; depmod -b /run/modules $(uname -r) 2>/dev/null
export MODULES_ROOT=/run/modules
bash "$run/job.sh" > "$run/guest.log" 2>&1
echo $? > "$run/rc"
sync; echo o > /proc/sysrq-trigger; sleep 5; halt -f
"""

# The dumbbell. Filled in by `job_script`: {qtc}, {routes}, {receiver_cc}, {qdisc}, {ccs}, {duration},
# {modules}, {rtts}, {rate}, {burst}, {senders}, {flows}, {servers}, {tcp_clients}, {udp_client}.
# $qtc is the tc that adds, shows and samples the qdisc under test (the kernel's: `Kernel.tc`); the
# host's tc does the rest (the L4STeam iproute2 5.12 prints u32 filters as broken JSON).
JOB = r"""set -u
cd "$run"
qtc={qtc}
for m in {modules}; do modprobe -d "$MODULES_ROOT" $m || exit 2; done
# Any congestion control loaded may be chosen (DCTCP is a module).
sysctl -qw net.ipv4.tcp_allowed_congestion_control="$(cat /proc/sys/net/ipv4/tcp_available_congestion_control)"
for n in snd rtr rcv; do ip netns add $n; ip -n $n link set lo up; done
ip link add s0 netns snd type veth peer name r0 netns rtr
ip link add r1 netns rtr type veth peer name c0 netns rcv
ip -n snd addr add 10.1.0.1/24 dev s0
for h in {senders}; do ip -n snd addr add 10.1.0.$h/24 dev s0; done
ip -n rtr addr add 10.1.0.254/24 dev r0; ip -n rtr addr add 10.2.0.254/24 dev r1
ip -n rcv addr add 10.2.0.1/24 dev c0
for end in "snd s0" "rtr r0" "rtr r1" "rcv c0"; do
  set -- $end; ip -n $1 link set $2 up; ip netns exec $1 ethtool -K $2 tso off gso off gro off > /dev/null
done
ip -n snd route add default via 10.1.0.254; ip -n rcv route add default via 10.2.0.254
{routes}
ip netns exec rtr sysctl -qw net.ipv4.ip_forward=1
{receiver_cc}
# The bottleneck: htb at {rate} on the router's egress, the qdisc under test its child.
ip netns exec rtr tc qdisc add dev r1 root handle 1: htb default 1
ip netns exec rtr tc class add dev r1 parent 1: classid 1:1 htb rate {rate} ceil {rate} burst {burst} cburst {burst}
ip netns exec rtr $qtc qdisc add dev r1 parent 1:1 handle 10: {qdisc} || exit 3
# The base RTTs: one prio band per TCP sender on the ACK path, each a netem delay; band 10 (1:a) for the rest.
ip netns exec rcv tc qdisc add dev c0 root handle 1: prio bands 10 priomap 9 9 9 9 9 9 9 9 9 9 9 9 9 9 9 9
k=0
for rtt in {rtts}; do
  ip netns exec rcv tc qdisc add dev c0 parent 1:$((k+1)) handle $((k+20)): netem delay ${{rtt}}ms limit 10000
  ip netns exec rcv tc filter add dev c0 parent 1: protocol ip prio 1 u32 \
    match ip dst 10.1.0.$((11+k))/32 flowid 1:$((k+1))
  k=$((k+1))
done
ip netns exec rcv tc qdisc add dev c0 parent 1:a handle 30: netem delay 20ms limit 10000
{{ uname -r; ip netns exec rtr $qtc -d qdisc show dev r1; ip netns exec rtr tc -d class show dev r1
   ip netns exec rcv tc qdisc show dev c0; ip netns exec snd ethtool -k s0 | grep offload
   ip netns exec snd sysctl net.ipv4.tcp_congestion_control net.ipv4.tcp_sack net.ipv4.tcp_ecn
   ip netns exec rcv sysctl net.ipv4.tcp_congestion_control net.ipv4.tcp_ecn
   sysctl net.ipv4.tcp_allowed_congestion_control
   $qtc -V; }} > setup.txt 2>&1
for k in {servers}; do
  ip netns exec rcv timeout $(({duration}+40)) iperf3 -s -1 -J -p $((5201+k)) --logfile srv$k.json > /dev/null 2>&1 &
done
# Every server listening before the first client (a loaded guest starts them slowly).
for try in $(seq 100); do [ $(ip netns exec rcv ss -Hltn | wc -l) -ge {flows} ] && break; sleep 0.1; done
# What reaches the receiver, per sender: an ingress u32 filter on c0 per source address (pref k+1),
# whose action counts bytes (frames with their Ethernet header) and packets.
ip netns exec rcv tc qdisc add dev c0 handle ffff: ingress
k=1
for h in {senders}; do
  ip netns exec rcv tc filter add dev c0 parent ffff: protocol ip pref $k u32 match ip src 10.1.0.$h/32 action pass
  k=$((k+1))
done
# About ten samples a second, each stamped: the qdiscs of r1 (backlog, bytes sent) and c0's per-sender
# counters. One tc per namespace for the whole run (tc -batch; it keeps a `handle` from one line to
# the next, so all of r1's qdiscs are asked for) and bash's builtins: a program started per sample
# costs a UML guest a noticeable share of its one CPU.
mkfifo /run/q.in /run/q.out /run/f.in /run/f.out /run/tick
ip netns exec rtr stdbuf -oL $qtc -s -j -batch - < /run/q.in > /run/q.out 2>&1 &
ip netns exec rcv stdbuf -oL tc -s -j -batch - < /run/f.in > /run/f.out 2>&1 &
bash -c '
  exec 3> /run/q.in 4< /run/q.out 5> /run/f.in 6< /run/f.out 7<> /run/tick
  end=$((EPOCHSECONDS + {duration} + 2))
  while [ $EPOCHSECONDS -lt $end ]; do
    echo "qdisc show dev r1" >&3; read -r q <&4
    echo "filter show dev c0 ingress" >&5; read -r f <&6
    echo "{{\"t\": $EPOCHREALTIME, \"q\": $q, \"f\": $f}}"; read -t 0.1 -u 7
  done' > samples.jsonl 2>&1 &
echo $EPOCHREALTIME > start.txt
head -1 /proc/stat > cpu_start.txt
ccs=({ccs})
for k in {tcp_clients}; do
  ip netns exec snd timeout $(({duration}+30)) iperf3 -c 10.2.0.1 -p $((5201+k)) -B 10.1.0.$((11+k)) \
    -C ${{ccs[$k]}} -t {duration} -J > cli$k.json 2>&1 &
done
{udp_client}
wait
head -1 /proc/stat > cpu_end.txt
ip netns exec rtr $qtc -s qdisc show dev r1 > qdisc_end.txt 2>&1
"""


# A TCP flow whose congestion control must be in place before its SYN (`Dumbbell.route_ccs`) gets it
# from its own route (policy routing by source address, `congctl`: tcp_ca_dst_init at connect);
# iperf3's -C comes after the handshake, too late for DCTCP's ECN negotiation.
ROUTE = (
    "ip -n snd rule add from 10.1.0.{sender} lookup {table}; "
    "ip -n snd route add default via 10.1.0.254 dev s0 onlink table {table} congctl {cc}"
).replace("{table}", "$((100+{k}))")

# iperf3's UDP client, the last flow: {k} is its index (its server's port is 5201 + k); {tos} its `-S`.
UDP_CLIENT = (
    "ip netns exec snd timeout $(({duration}+30)) iperf3 -c 10.2.0.1 -p {port} -B 10.1.0.{sender} -u -b {rate} \\\n"
    "  -l {payload}{tos} -t {duration} -J > cli{k}.json 2>&1 &"
)


def job_script(qdisc: str, dumbbell: Dumbbell, duration_s: int, kernel: Kernel = DEBIAN) -> str:
    """The guest's `dumbbell` with `tc qdisc add ... {qdisc}` at the bottleneck, on `kernel`."""
    flows = len(dumbbell.senders)
    n_tcp = len(dumbbell.tcp)
    udp_client = UDP_CLIENT.format(
        duration=duration_s,
        port=5201 + n_tcp,
        sender=UDP_SENDER,
        rate=UDP_RATE,
        payload=UDP_PAYLOAD,
        tos=f" -S {dumbbell.udp_tos}" if dumbbell.udp_tos else "",
        k=n_tcp,
    )
    return JOB.format(
        qtc=kernel.tc,
        routes="\n".join(ROUTE.format(k=k, sender=FIRST_TCP_SENDER + k, cc=cc) for k, cc in dumbbell.route_ccs),
        receiver_cc=(
            f"ip netns exec rcv sysctl -qw net.ipv4.tcp_congestion_control={dumbbell.receiver_cc}"
            if dumbbell.receiver_cc
            else ""
        ),
        qdisc=qdisc,
        ccs=" ".join(cc for cc, _ in dumbbell.tcp),
        duration=duration_s,
        modules=kernel.load,
        rtts=" ".join(str(rtt) for _, rtt in dumbbell.tcp),
        rate=RATE,
        burst=HTB_BURST,
        senders=" ".join(map(str, dumbbell.senders)),
        flows=flows,
        servers=" ".join(map(str, range(flows))),
        tcp_clients=" ".join(map(str, range(n_tcp))),
        udp_client=udp_client if dumbbell.udp else "",
    )


def available() -> bool:
    return DEBIAN.available()


def kernel_version() -> str:
    """Debian's UML kernel's release (e.g. `6.1.176`)."""
    return DEBIAN.version()


@dataclass
class Run:
    """One run's measurements over the window: goodputs in Mb/s of payload (the UDP's 0 in a dumbbell
    without it), Jain's index of the TCP flows' goodputs, the median queueing delay in ms."""

    udp_mbps: float
    tcp_mbps: float
    jain: float
    delay_median_ms: float
    tcp_flow_mbps: list[float]
    # What left the qdisc, Ethernet frames (the bottleneck's rate actually achieved).
    link_mbps: float
    samples: int
    # Per TCP flow over the whole run, from iperf3's senders: retransmitted and sent segments.
    tcp_retransmits: float
    tcp_sent_packets: float
    # The guest's CPU not idle over the run (1.0: the guest was short of CPU, its numbers suspect).
    guest_busy: float
    load_before: float
    load_after: float
    wall_s: float

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def run_cell(
    qdisc: str,
    dumbbell: Dumbbell,
    folder: Path,
    duration_s: int = 30,
    warmup_s: int = 10,
    nice: int = -10,
    kernel: Kernel = DEBIAN,
) -> Run:
    """Boots `kernel` once for `tc qdisc add dev r1 parent 1:1 handle 10: {qdisc}` with `dumbbell`'s
    flows, keeping the guest's files in `folder`, and returns what it measured. The guest runs at
    `nice` (root may raise its priority: a host busy elsewhere then disturbs it less)."""
    if not kernel.available():
        raise UmlError(f"User-Mode Linux or iperf3 missing; {kernel.install_hint}")
    folder = folder.resolve()
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    (folder / "init.sh").write_text(INIT)
    (folder / "init.sh").chmod(0o755)
    (folder / "job.sh").write_text(job_script(qdisc, dumbbell, duration_s, kernel))
    (folder / "dumbbell.json").write_text(json.dumps(dumbbell.to_dict()) + "\n")
    ccs = "+".join(sorted({cc for cc, _ in dumbbell.tcp}))
    command = [
        kernel.binary,
        "mem=768M",
        f"umid=aqmlab{os.getpid()}",
        "root=/dev/root",
        "rootfstype=hostfs",
        "rootflags=/",
        "ro",
        f"init={folder / 'init.sh'}",
        "con=null",
        "con0=null,fd:1",
        "ssl=null",
        "quiet",
        f"run={folder}",
        f"modules={kernel.modules}",
    ]
    if nice and os.geteuid() == 0:
        command = ["nice", "-n", str(nice), *command]
    load_before = os.getloadavg()[0]
    started = time.monotonic()
    with open(folder / "console.log", "wb") as console:
        # UML runs each guest process as a host process in its own group: stop them all with it.
        guest = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=console, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            guest.wait(timeout=duration_s + TIMEOUT_MARGIN_S)
        except subprocess.TimeoutExpired:
            raise UmlError(
                f"{qdisc} / {ccs}: the guest did not finish in {duration_s + TIMEOUT_MARGIN_S:.0f} s"
            ) from None
        finally:
            if guest.poll() is None:
                os.killpg(guest.pid, signal.SIGKILL)
                guest.wait()
    wall = time.monotonic() - started
    rc = (folder / "rc").read_text().strip() if (folder / "rc").exists() else "none"
    if rc != "0":
        log = (folder / "guest.log").read_text()[-2000:] if (folder / "guest.log").exists() else ""
        raise UmlError(f"{qdisc} / {ccs}: the guest's dumbbell exited with {rc} (see {folder}):\n{log}")
    return measure(folder, warmup_s, duration_s, load_before, os.getloadavg()[0], wall)


def read_samples(path: Path, start: float, warmup_s: float, duration_s: float, senders: int) -> list[dict[str, Any]]:
    """The samples inside [warmup, duration] after the clients started, each as `t` (s since then),
    `qdisc` (the qdisc under test's `tc -s -j` fields) and `flows` (per sender, in `Dumbbell.senders`
    order, `senders` of them: bytes and packets that reached the receiver, IP packets without the
    Ethernet header)."""
    kept = []
    for line in path.read_text().splitlines():
        try:
            sample = json.loads(line)
        except json.JSONDecodeError:
            continue
        t = sample["t"] - start
        qdisc = [q for q in sample["q"] if q["handle"] == "10:"]
        counters = {
            f["pref"]: f["options"]["actions"][0]["stats"] for f in sample["f"] if "actions" in f.get("options", {})
        }
        if warmup_s <= t <= duration_s and qdisc and len(counters) == senders:
            flows = [(counters[k + 1]["bytes"], counters[k + 1]["packets"]) for k in range(senders)]
            kept.append({"t": t, "qdisc": qdisc[0], "flows": flows})
    return kept


def guest_busy(start: Path, end: Path) -> float:
    """The share of the guest's CPU time between two `/proc/stat` "cpu" lines not spent idle."""
    first, last = ([int(v) for v in path.read_text().split()[1:]] for path in (start, end))
    spent = [b - a for a, b in zip(first, last, strict=True)]
    idle = spent[3] + spent[4]  # idle, iowait
    return 1.0 - idle / sum(spent) if sum(spent) else 0.0


def jain(values: list[float]) -> float:
    return sum(values) ** 2 / (len(values) * sum(v * v for v in values)) if any(values) else 0.0


def client_reports(folder: Path, senders: int) -> list[dict[str, Any]]:
    """iperf3's client reports, `senders` of them in `Dumbbell.senders` order (a UDP warning may
    precede the JSON)."""
    reports = []
    for k in range(senders):
        text = (folder / f"cli{k}.json").read_text()
        try:
            reports.append(json.loads(text[text.find("{") :]))
        except json.JSONDecodeError:
            reports.append({"error": "no report"})
    return reports


def client_errors(folder: Path, senders: int) -> list[str]:
    """The errors iperf3's clients reported (a UDP client whose handshake timed out in a busy guest
    sends nothing: the run is not a measurement)."""
    return [f"client {k}: {r['error']}" for k, r in enumerate(client_reports(folder, senders)) if "error" in r]


def measure(folder: Path, warmup_s: int, duration_s: int, load_before: float, load_after: float, wall: float) -> Run:
    dumbbell = Dumbbell.of_run(folder)
    senders = len(dumbbell.senders)
    errors = client_errors(folder, senders)
    if errors:
        raise UmlError(f"{folder}: {'; '.join(errors)}")
    start = float((folder / "start.txt").read_text())
    samples = read_samples(folder / "samples.jsonl", start, warmup_s, duration_s, senders)
    if len(samples) < 2:
        raise UmlError(f"{folder}: fewer than two samples inside the window")
    first, last = samples[0], samples[-1]
    seconds = last["t"] - first["t"]
    idle = [k for k, (_, packets) in enumerate(first["flows"]) if packets == 0]
    if idle:
        raise UmlError(f"{folder}: sender(s) {idle} had sent nothing when the window began ({warmup_s} s)")
    # Goodput: the bytes that arrived less each packet's IP and transport headers.
    goodput = [
        ((b1 - b0) - header * (p1 - p0)) * 8 / seconds / 1e6
        for (b0, p0), (b1, p1), header in zip(first["flows"], last["flows"], dumbbell.headers, strict=True)
    ]
    n_tcp = len(dumbbell.tcp)
    tcp, udp = goodput[:n_tcp], sum(goodput[n_tcp:])
    sent = [report["end"]["sum_sent"] for report in client_reports(folder, senders)[:n_tcp]]
    return Run(
        tcp_retransmits=statistics.fmean(s["retransmits"] for s in sent),
        tcp_sent_packets=statistics.fmean(s["bytes"] / 1448 for s in sent),
        udp_mbps=udp,
        tcp_mbps=sum(tcp),
        jain=jain(tcp),
        delay_median_ms=statistics.median(s["qdisc"]["backlog"] * 8 / RATE_BPS * 1000 for s in samples),
        tcp_flow_mbps=tcp,
        link_mbps=(last["qdisc"]["bytes"] - first["qdisc"]["bytes"]) * 8 / seconds / 1e6,
        samples=len(samples),
        guest_busy=guest_busy(folder / "cpu_start.txt", folder / "cpu_end.txt"),
        load_before=load_before,
        load_after=load_after,
        wall_s=wall,
    )


def percentile(values: list[float], q: float) -> float:
    """The `q`-th percentile (0-100) of `values`, linear between the nearest ranks."""
    ranked = sorted(values)
    at = (len(ranked) - 1) * q / 100
    low = int(at)
    high = min(low + 1, len(ranked) - 1)
    return ranked[low] + (ranked[high] - ranked[low]) * (at - low)


# Per qdisc kind, its `tc -s -j` counters of CE marks: all of them, and those of a step (DualPI2's L
# queue step; FQ-CoDel's ce_threshold). DualPI2's ecn_mark includes its step marks; FQ-CoDel's
# ecn_mark is CoDel's own, ce_mark the threshold's.
MARKS = {"dualpi2": (("ecn_mark",), "step_marks"), "fq_codel": (("ecn_mark", "ce_mark"), "ce_mark")}


def classes(folder: Path, run: Run, warmup_s: int, duration_s: int) -> dict[str, float]:
    """The L4S rows of a measured run (`run`, from `folder`): goodput of the scalable TCP flows
    (`SCALABLE`), of the classic ones and of the UDP; the queueing delay's median and 99th percentile
    over the ~10 samples a second, of the whole qdisc (backlog / rate) and, under DualPI2, of each
    queue (the sojourn of its head packet, tc's delay_l and delay_c; 0 when it is empty); and CE marks
    (all, and a step's) and drops, per second over the window, from the qdisc's counters."""
    dumbbell = Dumbbell.of_run(folder)
    start = float((folder / "start.txt").read_text())
    samples = read_samples(folder / "samples.jsonl", start, warmup_s, duration_s, len(dumbbell.senders))
    first, last = samples[0]["qdisc"], samples[-1]["qdisc"]
    seconds = samples[-1]["t"] - samples[0]["t"]
    scalable = dumbbell.scalable
    out = {
        "scalable_mbps": sum(r for r, s in zip(run.tcp_flow_mbps, scalable, strict=True) if s),
        "classic_mbps": sum(r for r, s in zip(run.tcp_flow_mbps, scalable, strict=True) if not s),
        "udp_mbps": run.udp_mbps,
        "drops_per_s": (last["drops"] - first["drops"]) / seconds,
    }
    queues = {"": [s["qdisc"]["backlog"] * 8 / RATE_BPS * 1000 for s in samples]}
    if first["kind"] == "dualpi2":
        queues |= {f"_{q}": [s["qdisc"][f"delay_{q}"] / 1000 for s in samples] for q in ("l", "c")}
    for suffix, delays in queues.items():
        out[f"delay{suffix}_median_ms"] = statistics.median(delays)
        out[f"delay{suffix}_p99_ms"] = percentile(delays, 99)
    if first["kind"] in MARKS:
        every, step = MARKS[first["kind"]]
        out["marks_per_s"] = sum(last[key] - first[key] for key in every) / seconds
        out["step_marks_per_s"] = (last[step] - first[step]) / seconds
    return out
