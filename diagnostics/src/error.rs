//! The error type shared by the diagnostics: why an estimate could not be computed from the input.
//!
//! Every diagnostic validates its input and returns [`DiagnosticError`] instead of panicking or
//! silently producing `NaN`.

use std::fmt;

/// Why a diagnostic could not be computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiagnosticError {
    /// Fewer samples (per chain, per histogram, …) than the estimator needs.
    TooFewSamples {
        /// The minimum the estimator needs.
        needed: usize,
        /// What it was given.
        got: usize,
    },
    /// Fewer chains than the estimator needs.
    TooFewChains {
        /// The minimum the estimator needs.
        needed: usize,
        /// What it was given.
        got: usize,
    },
    /// An input value was NaN or infinite.
    NonFinite,
    /// Two inputs that must have the same length (chains of one run, truths and dimensions, …)
    /// did not.
    MismatchedLengths {
        /// The length the first input fixed.
        expected: usize,
        /// The offending length.
        got: usize,
    },
    /// A histogram had no sample inside its range.
    EmptyHistogram,
    /// A parameter was out of its domain (the message says which).
    InvalidArgument(&'static str),
    /// The reference density was negative or not finite at a quadrature node, or had no mass
    /// over the histogram's range.
    InvalidDensity(&'static str),
}

impl fmt::Display for DiagnosticError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DiagnosticError::TooFewSamples { needed, got } => {
                write!(f, "too few samples: needed at least {needed}, got {got}")
            }
            DiagnosticError::TooFewChains { needed, got } => {
                write!(f, "too few chains: needed at least {needed}, got {got}")
            }
            DiagnosticError::NonFinite => write!(f, "an input value is NaN or infinite"),
            DiagnosticError::MismatchedLengths { expected, got } => {
                write!(f, "mismatched lengths: expected {expected}, got {got}")
            }
            DiagnosticError::EmptyHistogram => write!(f, "the histogram has no sample in range"),
            DiagnosticError::InvalidArgument(what) => write!(f, "invalid argument: {what}"),
            DiagnosticError::InvalidDensity(what) => write!(f, "invalid reference density: {what}"),
        }
    }
}

impl std::error::Error for DiagnosticError {}
