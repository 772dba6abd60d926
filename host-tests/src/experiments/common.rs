//! What every experiment shares: run options, errors, the progress bar and the chain driver.

use indicatif::{ProgressBar, ProgressStyle};
use rand_pcg::Pcg64;
use sgmcmc::{ChainState, Sampler, StepError, StepStats};
use std::fmt;
use std::io::IsTerminal;
use std::path::PathBuf;

/// Options every experiment subcommand takes.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Base seed; chain c of configuration k uses a seed derived from (seed, k, c).
    pub seed: u64,
    /// Independent chains per configuration, run in parallel (rayon).
    pub chains: usize,
    /// Output directory for CSV files and PNG figures (created if missing).
    pub out: PathBuf,
    /// CI-sized run (seconds) instead of the paper-sized one.
    pub quick: bool,
    /// Show a progress bar (only on a terminal, and never in quick mode).
    pub progress: bool,
}

impl RunOptions {
    /// Quick, silent options writing into `out` (for tests).
    pub fn quick(out: impl Into<PathBuf>) -> Self {
        RunOptions {
            seed: 1,
            chains: 2,
            out: out.into(),
            quick: true,
            progress: false,
        }
    }

    /// The seed of chain `chain` of configuration `config`.
    pub fn chain_seed(&self, config: usize, chain: usize) -> u64 {
        self.seed
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .wrapping_add((config as u64) << 20)
            .wrapping_add(chain as u64)
    }

    /// Checks the options and creates the output directory.
    pub fn prepare(&self) -> Result<(), ExperimentError> {
        if self.chains == 0 {
            return Err(ExperimentError::Invalid(
                "--chains must be at least 1".into(),
            ));
        }
        std::fs::create_dir_all(&self.out)
            .map_err(|e| ExperimentError::Io(format!("{}: {e}", self.out.display())))
    }

    /// A progress bar over `total` steps (hidden unless wanted and on a terminal).
    pub fn progress_bar(&self, total: u64, what: &str) -> ProgressBar {
        if !self.progress || self.quick || !std::io::stderr().is_terminal() {
            return ProgressBar::hidden();
        }
        let pb = ProgressBar::new(total);
        pb.set_style(
            ProgressStyle::with_template(
                "{msg} [{elapsed_precise}] {wide_bar} {percent}% (eta {eta})",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        pb.set_message(what.to_string());
        pb
    }
}

/// Why an experiment failed.
#[derive(Debug)]
pub enum ExperimentError {
    /// Bad options.
    Invalid(String),
    /// A sampler stopped (the configuration is named).
    Step(String, StepError),
    /// Writing output failed.
    Io(String),
}

impl fmt::Display for ExperimentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExperimentError::Invalid(s) => write!(f, "{s}"),
            ExperimentError::Step(what, e) => write!(f, "{what}: {e}"),
            ExperimentError::Io(s) => write!(f, "cannot write output: {s}"),
        }
    }
}

impl std::error::Error for ExperimentError {}

impl From<std::io::Error> for ExperimentError {
    fn from(e: std::io::Error) -> Self {
        ExperimentError::Io(e.to_string())
    }
}
impl From<csv::Error> for ExperimentError {
    fn from(e: csv::Error) -> Self {
        ExperimentError::Io(e.to_string())
    }
}
impl From<Box<dyn std::error::Error>> for ExperimentError {
    fn from(e: Box<dyn std::error::Error>) -> Self {
        ExperimentError::Io(e.to_string())
    }
}

/// Runs `steps` steps, calling `observe(t, sampler, stats)` after each (and `after` to let the
/// caller adjust the state, e.g. reflect at a boundary), ticking `pb` every 4096 steps.
pub fn drive<S, G>(
    sampler: &mut S,
    grad: &mut G,
    rng: &mut Pcg64,
    steps: usize,
    pb: &ProgressBar,
    mut observe: impl FnMut(usize, &mut S, &StepStats<f64>),
) -> Result<(), StepError>
where
    S: Sampler<f64, G> + ChainState<f64>,
    G: ?Sized,
{
    for t in 0..steps {
        let stats = sampler.step(grad, rng)?;
        observe(t, sampler, &stats);
        if t % 4096 == 4095 {
            pb.inc(4096);
        }
    }
    pb.inc((steps % 4096) as u64);
    Ok(())
}

/// `n` evenly spaced points over [lo, hi].
pub fn grid(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| lo + (hi - lo) * i as f64 / (n - 1).max(1) as f64)
        .collect()
}

/// Formats a number with `sig` significant digits (for tables).
pub fn sig(x: f64, sig: usize) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    if x == 0.0 {
        return "0".into();
    }
    let mag = x.abs().log10().floor() as i32;
    let decimals = (sig as i32 - 1 - mag).max(0) as usize;
    format!("{x:.decimals$}")
}
