//! A queue discipline of `type = "python"` (qdisc/external.rs) where no provider is installed:
//! the Rust crate alone, as a program that does not install one sees it.

mod common;
use common::error_of;

#[test]
fn without_a_provider_a_python_qdisc_is_refused_naming_the_field() {
    // No provider is installed in the crate's own tests (the PyO3 module installs one).
    let text = r#"
[simulation]
duration = "1s"
[topology]
type = "dumbbell"
bottleneck = { rate = "1Mbps", delay = "1ms", qdisc = { type = "python", class = "mine.py:Mine", slope = 0.1 } }
[[flows]]
type = "cbr"
rate = "1Mbps"
"#;
    assert_eq!(
        error_of(text),
        "topology.bottleneck.qdisc.type: a python qdisc runs through aqmlab's Python package (`import aqmlab`), \
         not the Rust crate alone"
    );
    let missing = text.replace(r#"class = "mine.py:Mine", "#, "");
    assert!(error_of(&missing).contains("missing field `class`"));
}
