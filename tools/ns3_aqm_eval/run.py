"""Build the ns-3 AQM evaluation suite against the ns-3.44 wheel, run its RFC 7928 scenarios, write reference data.

The suite (ajupazhamayil/aqm-eval-suite-2.0, src/aqm-eval-suite) is a measuring instrument kept outside the
repository: its source comes from --suite-src (or $AQM_EVAL_SUITE_SRC), by default extracted with `git archive`
from the local mirror into the cache. aqm-eval-suite-ns3.44.patch (beside this file) makes it compile against
ns-3.44 and adds the traces this driver reads; see README.md.

Usage: python3 tools/ns3_aqm_eval/run.py [--seeds 1-5] [--sections 5.1.1,6] [--aqms red,codel,pie]
       [--bql false,true] [--jobs 2] [--out python/aqmlab/characterize/ns3_reference.json]
Progress goes to stderr; each run's summary is cached, so re-running only runs what is missing.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PATCH = HERE / "aqm-eval-suite-ns3.44.patch"
MIRROR = Path(os.environ.get("AQM_EVAL_SUITE_MIRROR", "/work/.mirror/ajupazhamayil+aqm-eval-suite-2.0/repo"))
NS3_PIN = "ns3==3.44.post0"
WINDOW_S = (10.0, 300.0)
PAYLOAD_BYTES = 698  # the programs' EvaluationTopology pktSize
PPP_HEADER_BYTES = 2
TCP_IP_HEADER_BYTES = 20 + 20 + 12  # IPv4 + TCP + timestamp option (SACK blocks only in ACKs)
UDP_IP_HEADER_BYTES = 20 + 8

AQMS = {"red": "ns3::RedQueueDisc", "codel": "ns3::CoDelQueueDisc", "pie": "ns3::PieQueueDisc"}
# RFC 7928 section -> (program, example source, the scenario name its traces are written under)
PROGRAMS = {
    "5.1.1": ("TCPFriendlySameInitCwnd", "tcp-friendly-same-initcwnd.cc"),
    "5.3.1": ("UnresponsiveTransport", "single-unresponsive-transport.cc"),
    "5.3.2": ("UnresponsiveWithFriendly", "unresponsive-with-friendly-transport.cc"),
    "6": ("RttFairness", "rtt-fairness.cc"),
    "8.2.2": ("MildCongestion", "mild-congestion.cc"),
    "8.2.3": ("MediumCongestion", "medium-congestion.cc"),
    "8.2.4": ("HeavyCongestion", "heavy-congestion.cc"),
}
OTHER_PROGRAMS = {  # compiled with --build-all only, to check the whole suite builds
    "TCPFriendlyDifferentInitCwnd": "tcp-friendly-different-initcwnd.cc",
    "AggressiveTransportSender": "aggressive-transport-sender.cc",
    "LbeTransportSender": "LBE-transport-sender.cc",
    "RttFairnessWithEcn": "rtt-fairness-with-ecn.cc",
    "VaryingCongestion": "vary-congestion-level.cc",
    "VaryingBandwidthUno": "vary-available-capacity-uno.cc",
    "VaryingBandwidthDuo": "vary-available-capacity-duo.cc",
    "aqm-eval-suite-runner": "aqm-eval-suite-runner.cc",
}
RTT_FAIRNESS_MS = [5, 8, 10, 16, 20, 30, 40, 60, 80, 100, 150, 200, 300, 400, 500]  # rtt-fairness.cc `delay`
LIBS = ["point-to-point-layout", "applications", "internet", "point-to-point", "traffic-control", "network", "core"]
CXXFLAGS = ["-O2", "-std=c++20", "-DNS3_BUILD_PROFILE_RELEASE", "-DNS3_LOG_ENABLE", "-DNS3_ASSERT_ENABLE"]


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def ns3_wheel(cache: Path) -> tuple[Path, str]:
    """Install the ns-3 wheel (headers and libraries only: --no-deps skips cppyy, which builds from source)."""
    venv = cache / "venv"
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", NS3_PIN], check=True)
    query = "import sysconfig, importlib.metadata as m; print(sysconfig.get_paths()['purelib'], m.version('ns3'))"
    purelib, version = subprocess.run(
        [str(python), "-c", query], check=True, capture_output=True, text=True
    ).stdout.split()
    return Path(purelib) / "ns3", version


def suite_source(args: argparse.Namespace, cache: Path) -> tuple[Path, str]:
    """The suite's src/aqm-eval-suite directory and a label naming where it came from."""
    if args.suite_src:
        return Path(args.suite_src).resolve(), f"path:{args.suite_src}"
    commit = subprocess.run(
        ["git", "-C", str(MIRROR), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    target = cache / f"suite-{commit[:12]}"
    if not (target / "src" / "aqm-eval-suite" / "wscript").exists():
        target.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "-C", str(MIRROR), "archive", "--format=tar", commit, "src/aqm-eval-suite"],
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return target / "src" / "aqm-eval-suite", f"ajupazhamayil/aqm-eval-suite-2.0@{commit}"


def build(suite: Path, ns3: Path, cache: Path, programs: dict[str, str], jobs: int) -> dict[str, Path]:
    """Copy the suite, apply the patch, compile its module and the given programs; return program paths."""
    include, lib = ns3 / "include", ns3 / "lib64"
    version = next(p.name for p in lib.glob("libns3.*-core.so")).removeprefix("lib").removesuffix("-core.so")
    stamp = hashlib.sha256(PATCH.read_bytes() + str(suite).encode() + version.encode()).hexdigest()[:12]
    out = cache / f"build-{stamp}"
    src = out / "src"
    if not (out / "patched").exists():
        shutil.rmtree(out, ignore_errors=True)
        shutil.copytree(suite, src / "src" / "aqm-eval-suite")
        subprocess.run(["patch", "-p1", "-s", "-i", str(PATCH)], cwd=src, check=True)
        (out / "patched").touch()
    module = src / "src" / "aqm-eval-suite"
    headers = out / "include" / "ns3"
    headers.mkdir(parents=True, exist_ok=True)
    for header in [*module.glob("model/*.h"), *module.glob("helper/*.h")]:
        shutil.copy(header, headers)
    # waf would generate this module header; written by hand here
    (headers / "aqm-eval-suite-module.h").write_text(
        "".join(
            f'#include "ns3/{h}"\n' for h in ["eval-topology.h", "eval-app.h", "eval-ts.h", "aqm-eval-suite-helper.h"]
        )
    )
    compile_flags = [*CXXFLAGS, f"-I{out / 'include'}", f"-I{include}"]

    def compile_object(source: Path) -> Path:
        obj = out / (source.stem + ".o")
        if not obj.exists():
            subprocess.run(["g++", *compile_flags, "-c", str(source), "-o", str(obj)], check=True)
        return obj

    def link_program(name: str, source: str) -> Path:
        binary = out / name
        if not binary.exists():
            subprocess.run(
                ["g++", *compile_flags, str(module / "examples" / source), *map(str, objects), "-o", str(binary)]
                + [f"-L{lib}", f"-Wl,-rpath,{lib}", *[f"-l{version}-{lib_name}" for lib_name in LIBS], "-lpthread"],
                check=True,
            )
        return binary

    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        objects = list(pool.map(compile_object, [*module.glob("model/*.cc"), *module.glob("helper/*.cc")]))
        binaries = dict(zip(programs, pool.map(link_program, programs, programs.values()), strict=True))
    log(f"built {len(binaries)} programs in {out} ({time.monotonic() - started:.1f} s)")
    return binaries


def run_cases(section: str) -> list[tuple[str, tuple[str, ...], str]]:
    """(case label, extra program arguments, scenario directory) for each case of a section."""
    program = PROGRAMS[section][0]
    if section == "6":
        return [(f"R={r}ms", (f"--rttIndex={i}",), f"{program}{i + 1}") for i, r in enumerate(RTT_FAIRNESS_MS)]
    return [("", (), program)]


def percentile(sorted_values: list[float], fraction: float) -> float:
    """Linear-interpolation percentile (numpy's default) of an ascending list."""
    position = fraction * (len(sorted_values) - 1)
    low = int(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


def flow_of(address: str) -> int:
    """Flow number (1-based) from a sink's sender address, e.g. '03-06-0a:01:02:01:01:c0' is 10.1.2.1, flow 2."""
    octets = address.split("-")[2].split(":")
    return int(octets[2], 16)


def summarize(data: Path, aqm_type: str, flows: int) -> dict:
    """Goodput and delay over the window from the traces one run wrote."""
    stem = aqm_type.removeprefix("ns3::")
    start, stop = WINDOW_S
    received = [0] * flows
    with open(data / f"{stem}-goodput.dat") as trace:  # sink Rx: sender address, time (s), payload bytes
        for line in trace:
            address, when, size = line.split()
            if start <= float(when) <= stop:
                received[flow_of(address) - 1] += int(size)
    sojourn, device_wait, total, wire_sizes = [], [], [], set()
    with open(data / f"{stem}-sojourn.dat") as trace:  # device dequeue: time (s), qdisc ns, device-queue ns, bytes
        for line in trace:
            when, qdisc_ns, device_ns, size = line.split()
            if start <= float(when) <= stop:
                sojourn.append(int(qdisc_ns) / 1e6)
                device_wait.append(int(device_ns) / 1e6)
                total.append((int(qdisc_ns) + int(device_ns)) / 1e6)
                wire_sizes.add(int(size))
    with open(data / f"{stem}-drop.dat") as trace:  # qdisc drops: destination, time (s)
        drops = sum(1 for line in trace if start <= float(line.split()[1]) <= stop)
    sojourn.sort()
    device_wait.sort()
    total.sort()
    goodput = [8 * b / (stop - start) for b in received]
    return {
        "goodput_bps": goodput,
        "total_goodput_bps": sum(goodput),
        "delay_median_ms": statistics.median(sojourn),
        "delay_p99_ms": percentile(sojourn, 0.99),
        "delay_mean_ms": statistics.fmean(sojourn),
        "device_queue_wait_median_ms": statistics.median(device_wait),
        "device_queue_wait_mean_ms": statistics.fmean(device_wait),
        "bottleneck_delay_median_ms": statistics.median(total),
        "bottleneck_delay_p99_ms": percentile(total, 0.99),
        "packets_dequeued": len(sojourn),
        "qdisc_drops": drops,
        "wire_bytes_seen": sorted(wire_sizes),
    }


def run_one(binary: Path, section: str, case: tuple, aqm: str, bql: bool, seed: int, cache: Path) -> dict:
    label, extra, scenario = case
    argv = [str(binary), "--QueueDiscMode=QUEUE_DISC_MODE_PACKETS", f"--isBql={'true' if bql else 'false'}", *extra]
    key = hashlib.sha256(json.dumps([str(binary), argv[1:], aqm, seed, WINDOW_S]).encode()).hexdigest()[:16]
    cached = cache / "runs" / f"{key}.json"
    if cached.exists():
        return json.loads(cached.read_text())
    env = {**os.environ, "AQM_EVAL_AQMS": AQMS[aqm], "NS_GLOBAL_VALUE": f"RngRun={seed}"}
    with tempfile.TemporaryDirectory(dir=cache) as work:
        data = Path(work) / "aqm-eval-output" / scenario / "data"
        data.mkdir(parents=True)
        stderr_path = Path(work) / "stderr"
        started = time.monotonic()
        with open(stderr_path, "w") as stderr:
            child = subprocess.Popen(argv, cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=stderr)
            # wait4 gives this child's own CPU time: wall time alone depends on what else the machine runs
            _, status, usage = os.wait4(child.pid, 0)
        wall = time.monotonic() - started
        stderr_text = stderr_path.read_text()
        exit_code = os.waitstatus_to_exitcode(status)
        if exit_code != 0:
            raise RuntimeError(f"{' '.join(argv)} (AQM {aqm}, seed {seed}) exited {exit_code}: {stderr_text[-2000:]}")
        attributes, wall_run = {}, None
        for line in stderr_text.splitlines():
            if line.startswith("attr "):
                _, obj, setting = line.split(" ", 2)
                name, _, value = setting.partition("=")
                if not value.startswith("0x"):  # pointers to helper objects say nothing
                    attributes.setdefault(obj, {})[name] = value
            elif line.startswith("wall_run_s "):
                wall_run = float(line.split()[2])
        flows = sum(1 for obj in attributes if obj.startswith("tcp-flow")) + (1 if section.startswith("5.3") else 0)
        result = summarize(data, AQMS[aqm], flows)
    cpu = usage.ru_utime + usage.ru_stime
    result.update(seed=seed, wall_s=round(wall, 3), cpu_s=round(cpu, 3), wall_run_s=wall_run, attributes=attributes)
    result["command"] = (
        " ".join(f"{k}={env[k]}" for k in ("AQM_EVAL_AQMS", "NS_GLOBAL_VALUE"))
        + " "
        + " ".join([binary.name, *argv[1:]])
    )
    cached.parent.mkdir(exist_ok=True)
    cached.write_text(json.dumps(result))
    log(
        f"{section:6} {label:9} {aqm:5} bql={bql!s:5} seed {seed}: {result['total_goodput_bps'] / 1e3:7.1f} kb/s, "
        f"median sojourn {result['delay_median_ms']:6.2f} ms, device {result['device_queue_wait_median_ms']:6.1f} ms, "
        f"{wall:.1f} s wall, {cpu:.1f} s CPU"
    )
    return result


def section_settings(section: str, aqms: list[str], runs: dict) -> dict:
    """What the program sets, from its source (topology, flows, times) and the attributes it printed."""
    first = {aqm: next(r for (s, _, a, _, _), r in runs.items() if s == section and a == aqm) for aqm in aqms}
    any_run = next(iter(first.values()))
    tcp = {k: v for k, v in any_run["attributes"].items() if k.startswith("tcp-flow")}
    common = {
        "program": PROGRAMS[section][0] + " (" + PROGRAMS[section][1] + ")",
        "arguments": "--QueueDiscMode=QUEUE_DISC_MODE_PACKETS --isBql=false|true (the runner's defaults are false)",
        "payload_bytes": PAYLOAD_BYTES,
        "access_links": "10 Mb/s each direction, 1 ms one-way, per flow (sender side and receiver side)",
        "bottleneck": "1 Mb/s, 48 ms one-way",
        "traffic": "flows start at 0 s and stop at 300 s; simulation stops at 310 s",
        "bottleneck_device_queue": {k: v for k, v in any_run["attributes"]["device"].items() if k != "isBql"},
        "qdisc_attributes": {aqm: first[aqm]["attributes"]["qdisc"] for aqm in aqms},
        "tcp_socket_attributes": next(iter(tcp.values()), None),
        "reverse_path": "ACKs cross the right router's bottleneck device with ns-3's default qdisc (not traced)",
    }
    specific = {
        "5.1.1": {"flows": "1 TCP NewReno (SACK on), IW 3"},
        "5.3.1": {"flows": "1 UDP CBR at 10 Mb/s of 698-byte payloads (EvalApp)"},
        "5.3.2": {"flows": "flow 1: TCP NewReno (SACK on), IW 3; flow 2: UDP CBR at 0.8 Mb/s of 698-byte payloads"},
        "6": {
            "flows": "2 TCP NewReno (SACK on), IW 3: flow 1 RTT 100 ms (0-600 s), flow 2 RTT R (0.5-600.5 s)",
            "bottleneck": "1 Mb/s, one-way 0.4 R for R < 100 ms else 40 ms",
            "access_links": "10 Mb/s; one-way per side: flow 2 0.05 R (R < 100) else (R - 80)/4; flow 1 (50 - "
            "bottleneck)/2 (R < 100) else 5 ms",
            "traffic": "simulation stops at 610 s; only the window [10, 300] s is summarised here",
            "R_ms": RTT_FAIRNESS_MS,
            "red_link_delay_setting": "2ms (ConfigureQueueDisc argument, used by RED's idle-time estimate)",
        },
        "8.2.2": {
            "flows": "2 TCP NewReno (SACK on), IW 3 (nflow = uint(0.036 * 62)); flow i (0-based) runs i to 300 + i s",
            "bottleneck": "1 Mb/s, 45 ms one-way (RED told 48 ms)",
        },
        "8.2.3": {"flows": "5 TCP NewReno (SACK on), IW 3 (nflow = uint(0.081 * 62)); flow i runs i to 300 + i s"},
        "8.2.4": {"flows": "7 TCP NewReno (SACK on), IW 3 (nflow = uint(0.114 * 62)); flow i runs i to 300 + i s"},
    }
    return {**common, **specific[section]}


def parse_seeds(spec: str) -> list[int]:
    """'1-5' or '1,3' as a list of ns-3 RngRun values."""
    low, _, high = spec.partition("-")
    return list(range(int(low), int(high) + 1)) if high else [int(s) for s in spec.split(",")]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite-src", default=os.environ.get("AQM_EVAL_SUITE_SRC"), help="src/aqm-eval-suite dir")
    parser.add_argument("--cache", default=os.environ.get("NS3_CACHE", str(Path.home() / ".cache/aqmlab-ns3-eval")))
    parser.add_argument("--sections", default=",".join(PROGRAMS))
    parser.add_argument("--aqms", default=",".join(AQMS))
    parser.add_argument("--seeds", default="1-5", help="ns-3 RngRun values: '1-5' or '1,3'")
    parser.add_argument(
        "--seeds-override", default="", help="per cell seeds, SECTION:AQM=SEEDS[;...], e.g. '6:codel=1-2;6:red=1-3'"
    )
    parser.add_argument("--bql", default="false,true", help="isBql values to run")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--build-all", action="store_true", help="compile all 15 of the suite's programs (14 scenarios and the runner)"
    )
    parser.add_argument("--out", help="write the JSON here (default: stdout)")
    args = parser.parse_args()

    sections = args.sections.split(",")
    aqms = args.aqms.split(",")
    for name, values, known in (("--sections", sections, PROGRAMS), ("--aqms", aqms, AQMS)):
        unknown = [v for v in values if v not in known]
        if unknown:
            parser.error(f"{name}: unknown {', '.join(unknown)} (known: {', '.join(known)})")
    seeds = parse_seeds(args.seeds)
    overrides = {}
    for item in filter(None, args.seeds_override.split(";")):
        where, _, spec = item.partition("=")
        section, _, aqm = where.partition(":")
        if section not in PROGRAMS or aqm not in AQMS or not spec:
            parser.error(f"--seeds-override: '{item}' is not SECTION:AQM=SEEDS with a known section and AQM")
        overrides[(section, aqm)] = parse_seeds(spec)

    def seeds_for(section: str, aqm: str) -> list[int]:
        return overrides.get((section, aqm), seeds)

    bqls = [{"false": False, "true": True}[b] for b in args.bql.split(",")]

    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    ns3, ns3_version = ns3_wheel(cache)
    suite, suite_label = suite_source(args, cache)
    wanted = {PROGRAMS[s][0]: PROGRAMS[s][1] for s in (PROGRAMS if args.build_all else sections)}
    binaries = build(suite, ns3, cache, {**wanted, **(OTHER_PROGRAMS if args.build_all else {})}, args.jobs)

    jobs = [
        (section, case, aqm, bql, seed)
        for bql in bqls
        for section in sections
        for case in run_cases(section)
        for aqm in aqms
        for seed in seeds_for(section, aqm)
    ]
    runs = {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {
            job: pool.submit(run_one, binaries[PROGRAMS[job[0]][0]], job[0], job[1], job[2], job[3], job[4], cache)
            for job in jobs
        }
        for (section, case, aqm, bql, seed), future in futures.items():
            runs[(section, case[0], aqm, bql, seed)] = future.result()

    cells = []
    for section, case, aqm, bql, _ in dict.fromkeys((s, c[0], a, b, None) for s, c, a, b, _ in jobs):
        per_seed = [runs[(section, case, aqm, bql, seed)] for seed in seeds_for(section, aqm)]
        outcome = [
            {k: v for k, v in r.items() if k not in ("seed", "wall_s", "cpu_s", "wall_run_s", "command")}
            for r in per_seed
        ]
        tcp = section != "5.3.1"
        cells.append(
            {
                "section": section,
                "case": case,
                "aqm": aqm,
                "bql": bql,
                "seed_dependent": any(o != outcome[0] for o in outcome),
                "payload_bytes": PAYLOAD_BYTES,
                "wire_bytes": PAYLOAD_BYTES + (TCP_IP_HEADER_BYTES if tcp else UDP_IP_HEADER_BYTES) + PPP_HEADER_BYTES,
                "wire_bytes_udp": PAYLOAD_BYTES + UDP_IP_HEADER_BYTES + PPP_HEADER_BYTES
                if section == "5.3.2"
                else None,
                "command": per_seed[0]["command"].replace("RngRun=1 ", "RngRun=<seed> "),
                "seeds": [{k: v for k, v in r.items() if k not in ("attributes", "command")} for r in per_seed],
            }
        )
    document = {
        "ns3_version": ns3_version + " (pip wheel " + NS3_PIN + ")",
        "suite": suite_label,
        "patch": "tools/ns3_aqm_eval/aqm-eval-suite-ns3.44.patch sha256:"
        + hashlib.sha256(PATCH.read_bytes()).hexdigest()[:16],
        "command": shlex.join(["python3", "tools/ns3_aqm_eval/run.py", *sys.argv[1:]]),
        "window_s": list(WINDOW_S),
        "measures": {
            "goodput_bps": "application payload bytes received by each flow's PacketSink in the window, x 8 / 290 s",
            "delay_*_ms": "qdisc sojourn (qdisc enqueue to dequeue) of every packet of every flow that the "
            "bottleneck qdisc passed to the device and the device started sending in the window, aggregated",
            "device_queue_wait_*_ms": "time the same packets then waited in the device's DropTail transmit queue",
            "bottleneck_delay_*_ms": "qdisc sojourn + device-queue wait (excludes the packet's own serialization)",
            "wire_bytes": "bytes per data packet on the bottleneck wire: payload + IP/TCP(+timestamps) or IP/UDP + 2 B "
            "PPP; wire_bytes_seen is what the device trace saw",
            "wall_s": "process wall time (setup, run, traces) for one AQM and seed; wall_run_s: Simulator::Run only; "
            "cpu_s: the process's user + system CPU time (the machine was shared, so wall_s overstates)",
        },
        "settings": {section: section_settings(section, aqms, runs) for section in sections},
        "cells": cells,
    }
    text = json.dumps(document, indent=2, sort_keys=True) + "\n"
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text)
        log(f"wrote {args.out}: {len(cells)} cells, {len(runs)} runs")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
