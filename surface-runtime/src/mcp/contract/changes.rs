//! What changed between a manifest and the live face, and why a check failed.

use std::fmt;

/// What changed between a manifest and the live face.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Changes {
    /// Changes that can break an agent or a prompt written against the manifest.
    pub breaking: Vec<String>,
    /// Changes nothing written against the manifest can notice going wrong.
    pub additive: Vec<String>,
}

impl Changes {
    /// Whether nothing changed at all.
    pub fn is_empty(&self) -> bool {
        self.breaking.is_empty() && self.additive.is_empty()
    }
}

impl fmt::Display for Changes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in &self.breaking {
            writeln!(f, "breaking: {b}")?;
        }
        for a in &self.additive {
            writeln!(f, "additive: {a}")?;
        }
        Ok(())
    }
}

/// Why a contract check failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ContractError {
    /// The manifest could not be read or parsed.
    Manifest(String),
    /// The live face breaks the manifest; every change is listed (additive ones too).
    Breaking(Changes),
}

impl fmt::Display for ContractError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ContractError::Manifest(why) => write!(f, "surface-contract: {why}"),
            ContractError::Breaking(changes) => write!(
                f,
                "surface-contract: the live face breaks the manifest ({} breaking change(s)); restore what agents rely on, or write a new manifest on purpose:\n{changes}",
                changes.breaking.len()
            ),
        }
    }
}

impl std::error::Error for ContractError {}
