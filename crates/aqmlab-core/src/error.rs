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

/// Why a run failed: the scenario, or the simulator.
#[derive(Clone, Debug, PartialEq)]
pub enum Error {
    Scenario(ScenarioError),
    Internal(InternalError),
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
            Error::Internal(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Error {}
