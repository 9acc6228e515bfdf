//! Whole-run benchmarks: `cargo bench -p aqmlab-core`.
//!
//! Runs each scenarios/bench-*.toml several times and prints the fastest and
//! median wall time, simulated events and events per second. The engine is
//! deterministic, so every repetition does exactly the same work: the spread is
//! the machine's noise, and the fastest run is the best estimate of the cost.

use aqmlab_core::Scenario;
use std::path::Path;
use std::time::Instant;

const REPETITIONS: usize = 7;

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("scenarios/ beside the workspace")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("bench-") && n.ends_with(".toml"))
        })
        .collect();
    files.sort();
    println!(
        "{:<28} {:>10} {:>10} {:>10} {:>12}",
        "scenario", "fastest s", "median s", "events", "events/s"
    );
    for path in files {
        let text = std::fs::read_to_string(&path).expect("readable scenario");
        let scenario = Scenario::from_toml_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut walls = Vec::with_capacity(REPETITIONS);
        let mut events = 0;
        for _ in 0..REPETITIONS {
            let start = Instant::now();
            let results = aqmlab_core::run(&scenario).expect("benchmark scenario runs");
            walls.push(start.elapsed().as_secs_f64());
            events = results.summary.events;
        }
        walls.sort_by(f64::total_cmp);
        let name = path.file_stem().unwrap().to_string_lossy();
        println!(
            "{:<28} {:>10.4} {:>10.4} {:>10} {:>12.0}",
            name,
            walls[0],
            walls[REPETITIONS / 2],
            events,
            events as f64 / walls[0]
        );
    }
}
