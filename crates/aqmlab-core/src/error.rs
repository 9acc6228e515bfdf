//! The crate's errors, the bottom layer, so every other module may use them.
//! [`ScenarioError`] is about the user's input and names the field it concerns;
//! [`InternalError`] is a broken invariant of the simulator itself (a bug);
//! [`Error`] is either, as a whole run can fail both ways.

use std::fmt;

/// A problem with a scenario, naming the field (`path`) it concerns.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioError {
    pub path: String,
    pub message: String,
}

impl ScenarioError {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        ScenarioError {
            path: path.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for ScenarioError {}

/// An invariant of the engine did not hold (e.g. packet conservation): a bug
/// in the simulator, whatever the scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct InternalError(pub String);

impl fmt::Display for InternalError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "internal error: {}", self.0)
    }
}

impl std::error::Error for InternalError {}

/// A queue discipline written outside the crate (a user's Python class) failed or broke the
/// engine's contract: the message names the link, the time and what happened.
#[derive(Clone, Debug, PartialEq)]
pub struct MechanismError(pub String);

impl fmt::Display for MechanismError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for MechanismError {}

/// Why a run failed: the scenario, a user's mechanism, or the simulator.
#[derive(Clone, Debug, PartialEq)]
pub enum Error {
    Scenario(ScenarioError),
    Mechanism(MechanismError),
    Internal(InternalError),
}

impl From<MechanismError> for Error {
    fn from(e: MechanismError) -> Self {
        Error::Mechanism(e)
    }
}

impl From<ScenarioError> for Error {
    fn from(e: ScenarioError) -> Self {
        Error::Scenario(e)
    }
}

impl From<InternalError> for Error {
    fn from(e: InternalError) -> Self {
        Error::Internal(e)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Error::Scenario(e) => e.fmt(f),
            Error::Mechanism(e) => e.fmt(f),
            Error::Internal(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Error {}

/// The candidate `word` was most likely meant to be, for a "did you mean" in an error:
/// one that differs only in case (`mbps` for `Mbps`), else the nearest by edit distance
/// (a letter added, dropped, changed, or two swapped: `dumbell`, `fq-codel`, `acess_delay`)
/// within a quarter of the word's length, at least one edit; None if none is that near.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str> + Clone) -> Option<&'a str> {
    if let Some(same) = candidates.clone().into_iter().find(|c| c.eq_ignore_ascii_case(word)) {
        return Some(same);
    }
    let within = (word.chars().count() / 4).max(1);
    candidates
        .into_iter()
        .map(|c| (edit_distance(word, c), c))
        .filter(|&(d, _)| d <= within)
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`
/// (the optimal string alignment distance).
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    // rows[i][j]: the distance between a[..i] and b[..j]; only the last two rows are needed.
    let mut before: Vec<usize> = Vec::new();
    let mut last: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut row = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let substitute = last[j - 1] + usize::from(a[i - 1] != b[j - 1]);
            row[j] = substitute.min(last[j] + 1).min(row[j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                row[j] = row[j].min(before[j - 2] + 1);
            }
        }
        before = std::mem::replace(&mut last, row);
    }
    last[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_suggests_a_near_name_and_nothing_far() {
        let qdiscs = ["droptail", "red", "fq_codel", "codel", "sfq", "pie"];
        assert_eq!(closest("fq-codel", qdiscs), Some("fq_codel"));
        assert_eq!(closest("FQ_CODEL", qdiscs), Some("fq_codel"));
        assert_eq!(closest("dropt", qdiscs), None);
        assert_eq!(closest("fifo", qdiscs), None);
        assert_eq!(
            closest("dumbell", ["dumbbell", "graph", "parking_lot"]),
            Some("dumbbell")
        );
        assert_eq!(closest("mbps", ["bps", "kbps", "Kbps", "Mbps"]), Some("Mbps"));
        assert_eq!(
            closest("acess_delay", ["access_rate", "access_delay"]),
            Some("access_delay")
        );
        assert_eq!(closest("varaint", ["profile", "variant"]), Some("variant"));
        assert_eq!(edit_distance("ab", "ba"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
