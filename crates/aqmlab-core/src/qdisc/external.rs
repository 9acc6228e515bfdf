//! A queue discipline written outside the crate: `type = "python"`, a class of the user's that
//! aqmlab's Python package runs (issue 35). The core knows no Python: the program that embeds it
//! installs one [`ExternalQdiscs`] provider (the PyO3 module does, when it is imported), which
//! checks a table before the run and builds the discipline of each link; the discipline is an
//! ordinary [`QueueDisc`] to the engine, its packets stay in the arena and its verdicts, drops
//! and marks go through [`QdiscCtx`](super::QdiscCtx) as every other's.
//!
//! A provider's discipline that fails (an exception in the user's code) or breaks the engine's
//! contract says so with [`QdiscCtx::fail`](super::QdiscCtx::fail): the run stops with a
//! [`MechanismError`](crate::error::MechanismError), not an internal error.

use super::{LinkInfo, QdiscConfig, QueueDisc};
use crate::error::ScenarioError;
use crate::rng::Rng;
use serde::Deserialize;
use std::sync::OnceLock;

/// What builds external disciplines; installed once per process with [`install`].
pub trait ExternalQdiscs: Send + Sync {
    /// Checks `config` (its class can be found and takes its parameters) before the run;
    /// errors name the field under `path`.
    fn validate(&self, config: &ExternalConfig, path: &str) -> Result<(), ScenarioError>;
    /// The discipline of one link, drawing from `rng`, its own stream.
    fn build(&self, config: &ExternalConfig, link: &LinkInfo, rng: Rng) -> Box<dyn QueueDisc>;
}

static PROVIDER: OnceLock<Box<dyn ExternalQdiscs>> = OnceLock::new();

/// Installs the provider of external disciplines; false if one was installed before (it stays).
pub fn install(provider: Box<dyn ExternalQdiscs>) -> bool {
    PROVIDER.set(provider).is_ok()
}

/// A `type = "python"` table: `class` names the discipline (`"my_aqm.py:ExcessDrop"`,
/// `"package.module:Class"`), every other key is one of its parameters, which the class checks.
#[derive(Clone, Debug, Deserialize)]
pub struct ExternalConfig {
    pub class: String,
    #[serde(flatten)]
    pub params: serde_json::Map<String, serde_json::Value>,
}

fn provider(path: &str) -> Result<&'static dyn ExternalQdiscs, ScenarioError> {
    PROVIDER.get().map(Box::as_ref).ok_or_else(|| {
        ScenarioError::new(
            format!("{path}.type"),
            "a python qdisc runs through aqmlab's Python package (`import aqmlab`), not the Rust crate alone",
        )
    })
}

impl QdiscConfig for ExternalConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        provider(path)?.validate(self, path)
    }

    fn build(&self, link: &LinkInfo, rng: Rng) -> Box<dyn QueueDisc> {
        let provider = PROVIDER.get().expect("validate() checked that a provider is installed");
        provider.build(self, link, rng)
    }
}

#[cfg(test)]
mod tests {
    use crate::qdisc::{DropReason, ReasonName};

    #[test]
    fn a_named_reason_is_a_built_in_one_by_its_name_or_its_own_ordered_by_name() {
        assert_eq!(ReasonName::reason("overflow"), Ok(DropReason::Overflow));
        let (zeta, alpha) = (
            ReasonName::reason("zeta_excess").unwrap(),
            ReasonName::reason("alpha").unwrap(),
        );
        assert_eq!(ReasonName::reason("zeta_excess"), Ok(zeta), "interned once");
        assert_eq!((zeta.as_str(), alpha.as_str()), ("zeta_excess", "alpha"));
        // Named later, ordered first: the drops table's order does not depend on which came first.
        assert!(alpha < zeta);
        for bad in ["", "Excess", "9lives", "too much", &"x".repeat(41)] {
            assert!(
                ReasonName::reason(bad)
                    .unwrap_err()
                    .contains("a drop reason is 1 to 40"),
                "{bad:?}"
            );
        }
    }
}
