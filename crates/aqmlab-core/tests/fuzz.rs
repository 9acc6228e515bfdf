//! A seeded fuzz loop over the scenario parser and the engine (issue 14 item 2):
//! the shipped scenarios, mutated as a tree (fields deleted, wrong types,
//! extreme numbers, nan and inf, huge counts, unknown names) and as text
//! (truncated, a byte changed), read from TOML and from JSON. Every case must be
//! accepted or be a `ScenarioError` with a path; no case may panic; an accepted
//! one is run for `SIMULATED` of simulated time and must end within `WALL_BOUND`.
//!
//! `AQMLAB_FUZZ_CASES` sets the number of cases (default `QUICK_CASES`, for
//! `cargo test`); `AQMLAB_FUZZ_SEED` the seed. Before a release: `make fuzz-long`.

use aqmlab_core::sim::Simulation;
use aqmlab_core::time::from_secs;
use aqmlab_core::Scenario;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::time::{Duration, Instant};
use toml::Value;

const QUICK_CASES: u64 = 300;
const SIMULATED: f64 = 0.1;
const WALL_BOUND: Duration = Duration::from_secs(60);

fn shipped() -> Vec<(String, toml::Table)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/aqmlab/scenarios");
    let mut out: Vec<(String, toml::Table)> = std::fs::read_dir(&dir)
        .expect("the package's scenarios folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                text.parse().unwrap(),
            )
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// A value of the wrong type, an extreme number, a string with a unit, or an unknown name.
fn strange_value(rng: &mut Pcg64) -> Value {
    const NUMBERS: &[f64] = &[
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        1e308,
        -1e308,
        5e-324,
        1e-300,
        0.0,
        -1.0,
        0.5,
        1e9,
        1e10,
        1e12,
        1e13,
        1e-9,
    ];
    const INTEGERS: &[i64] = &[0, -1, 1, 1000, 10_000, 10_001, 1 << 31, 1 << 32, i64::MAX, i64::MIN];
    const UNITS: &[&str] = &[
        "", "s", "ms", "ns", "h", "min", "Mbps", "Gbps", "bps", "KB", "KiB", "furlongs",
    ];
    const NAMES: &[&str] = &["fifo", "", "red", "tcp", "droptail", "Dumbbell", "graph", "__proto__"];
    match rng.gen_range(0..7) {
        0 => Value::Float(*NUMBERS.choose(rng).unwrap()),
        1 => Value::Integer(*INTEGERS.choose(rng).unwrap()),
        2 => Value::String(format!(
            "{}{}",
            NUMBERS.choose(rng).unwrap(),
            UNITS.choose(rng).unwrap()
        )),
        3 => Value::String(format!(
            "{}{}",
            INTEGERS.choose(rng).unwrap(),
            UNITS.choose(rng).unwrap()
        )),
        4 => Value::String(NAMES.choose(rng).unwrap().to_string()),
        5 => Value::Boolean(rng.gen()),
        _ => [Value::Array(vec![]), Value::Table(Default::default())]
            .choose(rng)
            .unwrap()
            .clone(),
    }
}

/// The value scaled by a factor from 1e-6 to 1e6 (a number, or the number of a
/// string with a unit): mostly still valid, so the engine runs extreme settings.
fn scaled(value: &Value, rng: &mut Pcg64) -> Option<Value> {
    let factor = *[1e-6, 1e-3, 0.1, 0.5, 2.0, 10.0, 1e3, 1e6].choose(rng).unwrap();
    match value {
        Value::Float(v) => Some(Value::Float(v * factor)),
        Value::Integer(v) => Some(Value::Integer((*v as f64 * factor).round() as i64)),
        Value::String(s) => {
            let end = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
            let number: f64 = s[..end].parse().ok()?;
            Some(Value::String(format!("{}{}", number * factor, &s[end..])))
        }
        _ => None,
    }
}

/// Applies one mutation somewhere in `value` (a walk from the root to a random
/// node); the root itself stays a table.
fn mutate(value: &mut Value, root: bool, rng: &mut Pcg64) {
    match value {
        Value::Table(table) if !table.is_empty() && (root || rng.gen_bool(0.7)) => {
            let key = table.keys().nth(rng.gen_range(0..table.len())).unwrap().clone();
            match rng.gen_range(0..6) {
                0 => {
                    table.remove(&key);
                }
                1 => {
                    table.insert(key, strange_value(rng));
                }
                2 => {
                    table.insert("typo".into(), strange_value(rng));
                }
                _ => mutate(table.get_mut(&key).unwrap(), false, rng),
            }
        }
        Value::Array(items) if !items.is_empty() && rng.gen_bool(0.7) => {
            let i = rng.gen_range(0..items.len());
            match rng.gen_range(0..5) {
                0 => {
                    items.remove(i);
                }
                1 => {
                    let copy = items[i].clone();
                    items.push(copy);
                }
                _ => mutate(&mut items[i], false, rng),
            }
        }
        _ => match scaled(value, rng) {
            Some(v) if rng.gen_bool(0.5) => *value = v,
            _ => *value = strange_value(rng),
        },
    }
}

/// Cuts or changes the text at a random place (syntax the parser must refuse with a message).
fn garble(text: &str, rng: &mut Pcg64) -> String {
    if text.is_empty() {
        return String::new();
    }
    let mut bytes = text.as_bytes().to_vec();
    let at = rng.gen_range(0..bytes.len());
    match rng.gen_range(0..3) {
        0 => bytes.truncate(at),
        1 => bytes[at] = *b"=[]{}\"'#.,\n0e-".choose(rng).unwrap(),
        _ => bytes.insert(at, rng.gen()),
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

#[derive(Default, Debug)]
struct Outcomes {
    ran: u64,
    refused: u64,
}

/// Reads, and if valid runs, one case; Err describes a failure.
fn check(text: &str, json: bool, outcomes: &mut Outcomes) -> Result<(), String> {
    let parsed = catch_unwind(|| {
        if json {
            Scenario::from_json_str(text)
        } else {
            Scenario::from_toml_str(text)
        }
    })
    .map_err(|_| "the parser panicked".to_string())?;
    let scenario = match parsed {
        Err(e) if e.path.is_empty() => return Err(format!("an error without a field path: {e}")),
        Err(_) => {
            outcomes.refused += 1;
            return Ok(());
        }
        Ok(s) => s,
    };
    // Building finds what only the network can tell (a flow without a route), also a field error.
    let mut sim = match catch_unwind(|| Simulation::build(&scenario)).map_err(|_| "building panicked".to_string())? {
        Err(e) if e.path.is_empty() => return Err(format!("a build error without a field path: {e}")),
        Err(_) => {
            outcomes.refused += 1;
            return Ok(());
        }
        Ok(sim) => sim,
    };
    let started = Instant::now();
    let ran = catch_unwind(AssertUnwindSafe(|| -> Result<(), String> {
        let until = from_secs(SIMULATED);
        while !sim.run_events(until, 1 << 16) {
            if started.elapsed() > WALL_BOUND {
                return Err(format!("still running after {WALL_BOUND:?}"));
            }
        }
        sim.results().map(|_| ()).map_err(|e| e.to_string())
    }))
    .map_err(|_| "the engine panicked".to_string())?;
    ran?;
    outcomes.ran += 1;
    Ok(())
}

#[test]
fn mutated_shipped_scenarios_never_panic_and_name_a_field() {
    let cases: u64 = std::env::var("AQMLAB_FUZZ_CASES").map_or(QUICK_CASES, |v| v.parse().unwrap());
    let seed: u64 = std::env::var("AQMLAB_FUZZ_SEED").map_or(14, |v| v.parse().unwrap());
    let mut rng = Pcg64::seed_from_u64(seed);
    let scenarios = shipped();
    assert!(scenarios.len() >= 5);
    let mut outcomes = Outcomes::default();
    let mut failures = Vec::new();
    // Trees TOML cannot write (e.g. a value after a table in an array of tables): no case.
    let mut unwritable = Vec::new();
    for case in 0..cases {
        let (name, table) = scenarios.choose(&mut rng).unwrap();
        let mut value = Value::Table(table.clone());
        // Mostly one mutation, so that many cases stay valid and run.
        for _ in 0..*[1, 1, 1, 2, 3].choose(&mut rng).unwrap() {
            mutate(&mut value, true, &mut rng);
        }
        let Value::Table(table) = value else { continue };
        let json = case % 4 == 3;
        let text = if json {
            // NaN and inf become null in JSON, as they cannot be written there.
            serde_json::to_string(&table).unwrap()
        } else {
            match toml::to_string(&table) {
                Ok(text) if case % 4 == 2 => garble(&text, &mut rng),
                Ok(text) => text,
                Err(e) => {
                    unwritable.push(e.to_string());
                    continue;
                }
            }
        };
        if case % 1000 == 999 {
            eprintln!("fuzz: {} cases, {outcomes:?}, {} failures", case + 1, failures.len());
        }
        if let Err(why) = check(&text, json, &mut outcomes) {
            failures.push(format!(
                "case {case} (from {name}, {}): {why}\n{text}",
                if json { "JSON" } else { "TOML" }
            ));
        }
    }
    println!(
        "fuzz: {cases} cases (seed {seed}): {outcomes:?}, {} not writable as TOML, {} failures",
        unwritable.len(),
        failures.len()
    );
    println!("{:?}", &unwritable[..unwritable.len().min(5)]);
    assert!(
        failures.is_empty(),
        "{} failures; the first:\n{}",
        failures.len(),
        failures[0]
    );
    assert!(outcomes.ran > 0 && outcomes.refused > 0, "{outcomes:?}");
}
