//! Runs one scenario (JSON, as `Scenario.to_json()` writes it) and prints its events, wall time
//! and the process's peak resident memory: the driver for profiling the engine alone under
//! valgrind or perf (BENCHMARKS.md, issue 40), without Python around it.
//!
//!     cargo run --release --example run_json -p aqmlab-core -- scenario.json

use aqmlab_core::Scenario;
use std::time::Instant;

fn main() {
    let path = std::env::args().nth(1).expect("usage: run_json SCENARIO.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let scenario = Scenario::from_json_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    let start = Instant::now();
    let results = aqmlab_core::run(&scenario).expect("the scenario runs");
    let wall = start.elapsed().as_secs_f64();
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let peak = status.lines().find(|l| l.starts_with("VmHWM")).unwrap_or("VmHWM: ?");
    let events = results.summary.events;
    println!(
        "events {events} wall {wall:.3} s events/s {:.0} {peak}",
        events as f64 / wall
    );
}
