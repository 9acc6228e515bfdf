//! TCP (placeholder until the TCP agents land): options schema only.

use super::Agent;
use crate::scenario::ScenarioError;
use crate::sim::rng::Rng;
use crate::sim::time::Time;
use serde::Deserialize;

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TcpOptions {
    #[serde(default)]
    pub trace: bool,
}

impl TcpOptions {
    pub fn is_default(&self) -> bool {
        *self == TcpOptions::default()
    }
    pub fn validate(&self, _path: &str) -> Result<(), ScenarioError> {
        Ok(())
    }
}

pub fn build(_opts: &TcpOptions, _size: u32, _stop: Time, _rng: Rng) -> (Box<dyn Agent>, Box<dyn Agent>) {
    unimplemented!("TCP agents are not written yet")
}
