//! What every experiment shares: run options, errors, the progress observer, the Gaussian-kinetics samplers built from (h, A), parallel chains and number formatting.

use crate::export::{self, ChainWriter, DrawsOptions};
use indicatif::{ProgressBar, ProgressStyle};
use rand_pcg::Pcg64;
use rayon::prelude::*;
use sgmcmc::Kinetic;
use sgmcmc::prelude::*;
use std::fmt;
use std::io::IsTerminal;
use std::ops::ControlFlow;
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
    /// Write every chain's draws there ([`crate::export`]).
    pub draws: Option<DrawsOptions>,
}

impl RunOptions {
    /// The options of a command-line run (with a progress bar).
    pub fn new(seed: u64, chains: usize, out: impl Into<PathBuf>, quick: bool) -> Self {
        RunOptions {
            seed,
            chains,
            out: out.into(),
            quick,
            progress: true,
            draws: None,
        }
    }

    /// Quick, silent options writing into `out` (for tests).
    pub fn quick(out: impl Into<PathBuf>) -> Self {
        RunOptions {
            progress: false,
            ..RunOptions::new(1, 2, out, true)
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
                "at least one chain (--chains, --runs) is needed".into(),
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
    /// Runs `self.chains` chains of every configuration in parallel (rayon), sharing one
    /// progress bar of `steps` steps per chain labelled `label`; `run(k, &configs[k], c, pb)` runs
    /// chain c of configuration k. Returns each configuration's chains, in order. With
    /// [`RunOptions::draws`] set, each chain writes its draws ([`crate::export`]), named after
    /// `label`, k and c, with the configuration's `Debug` form in the file's comments.
    pub fn par_chains<C, R>(
        &self,
        configs: &[C],
        steps: usize,
        label: &str,
        run: impl Fn(usize, &C, usize, &ProgressBar) -> R + Sync,
    ) -> Vec<Vec<R>>
    where
        C: Sync + fmt::Debug,
        R: Send,
    {
        let chains = self.chains;
        let tasks: Vec<(usize, usize)> = (0..configs.len())
            .flat_map(|k| (0..chains).map(move |c| (k, c)))
            .collect();
        let pb = self.progress_bar((tasks.len() * steps) as u64, label);
        let outs: Vec<R> = tasks
            .par_iter()
            .map(|&(k, c)| {
                let configuration = (k, format!("{:?}", configs[k]));
                export::with_chain(self.draws.as_ref(), label, configuration, c, || {
                    run(k, &configs[k], c, &pb)
                })
            })
            .collect();
        pb.finish_and_clear();
        let mut outs = outs.into_iter();
        configs
            .iter()
            .map(|_| outs.by_ref().take(chains).collect())
            .collect()
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

/// Why a chain built by [`run_dynamics`] did not finish.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SamplerError {
    /// The settings or buffers were rejected when the sampler was built.
    Build(sgmcmc::Error),
    /// The sampler stopped (the error says after how many steps).
    Run(RunError),
}

impl SamplerError {
    /// The error as an [`ExperimentError`] naming the configuration `what`.
    pub fn named(self, what: impl Into<String>) -> ExperimentError {
        match self {
            SamplerError::Build(e) => ExperimentError::Invalid(format!("{}: {e}", what.into())),
            SamplerError::Run(e) => ExperimentError::Step(what.into(), e.error),
        }
    }
}

impl fmt::Display for SamplerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SamplerError::Build(e) => write!(f, "invalid settings: {e}"),
            SamplerError::Run(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for SamplerError {}

impl From<sgmcmc::Error> for SamplerError {
    fn from(e: sgmcmc::Error) -> Self {
        SamplerError::Build(e)
    }
}
impl From<RunError> for SamplerError {
    fn from(e: RunError) -> Self {
        SamplerError::Run(e)
    }
}

/// One chain to run: its length, its seed and the progress bar it ticks.
#[derive(Clone, Copy, Debug)]
pub struct Job<'a> {
    /// Steps.
    pub steps: usize,
    /// Seed ([`RunOptions::chain_seed`]).
    pub seed: u64,
    /// The shared progress bar.
    pub pb: &'a ProgressBar,
}

/// Steps between two ticks of a [`Progress`] bar.
pub const TICK: u64 = 4096;

/// A [`Sampler::run`] observer that hands every step to `inner` and ticks a shared progress bar
/// every [`TICK`] steps (the remaining steps when dropped).
pub struct Progress<'a, O: ?Sized> {
    pb: &'a ProgressBar,
    untold: u64,
    inner: &'a mut O,
    /// The chain's draws file, if `--draws` asked for one ([`crate::export`]).
    draws: Option<ChainWriter>,
}

impl<'a, O: ?Sized> Progress<'a, O> {
    /// Observes with `inner`, counting steps on `pb`.
    pub fn new(pb: &'a ProgressBar, inner: &'a mut O) -> Self {
        Progress {
            pb,
            untold: 0,
            inner,
            draws: ChainWriter::open(),
        }
    }
}

impl<S, O> Observer<S, f64> for Progress<'_, O>
where
    S: ChainState<f64> + ?Sized,
    O: Observer<S, f64> + ?Sized,
{
    type Stop = O::Stop;
    fn observe(
        &mut self,
        step: u64,
        sampler: &mut S,
        stats: &StepStats<f64>,
    ) -> ControlFlow<O::Stop> {
        if let Some(w) = &mut self.draws {
            w.observe(sampler.position(), stats);
        }
        let flow = self.inner.observe(step, sampler, stats);
        self.untold += 1;
        if self.untold == TICK {
            self.pb.inc(TICK);
            self.untold = 0;
        }
        flow
    }
}

impl<O: ?Sized> Drop for Progress<'_, O> {
    fn drop(&mut self) {
        self.pb.inc(self.untold);
    }
}

/// The samplers with Gaussian kinetics that the experiments build from a step h and a noise
/// term A ([`run_dynamics`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dynamics {
    /// SGHMC with friction A (Chen, Fox & Guestrin 2014; Chen 2016).
    Sghmc,
    /// SGNHT with diffusion A (ξ₀ = A; Ding et al. 2014, Alg. 1).
    Sgnht,
    /// mSGNHT (one thermostat per coordinate, Li et al. 2016; ξᵢ₀ = A); not in Ding et al. 2014's
    /// tables.
    MSgnht,
}

/// The settings [`run_dynamics`] builds a sampler from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DynamicsSettings {
    /// Step size h.
    pub h: f64,
    /// SGHMC's friction, or SGNHT's and mSGNHT's diffusion (and initial thermostat) A.
    pub a: f64,
    /// SGHMC's gradient-noise estimate B̂ (ignored by the thermostats).
    pub noise_estimate: f64,
    /// Euler or splitting.
    pub integrator: Integrator,
}

impl DynamicsSettings {
    /// Step h, noise term A, no noise estimate, and `integrator`.
    pub fn new(h: f64, a: f64, integrator: Integrator) -> Self {
        DynamicsSettings {
            h,
            a,
            noise_estimate: 0.0,
            integrator,
        }
    }
}

/// An observer of all three [`Dynamics`]' samplers (any observer generic over the sampler).
pub trait DynamicsObserver:
    for<'s> Observer<Sghmc<'s, f64>, f64>
    + for<'s> Observer<Sgnht<'s, f64>, f64>
    + for<'s> Observer<MSgnht<'s, f64>, f64>
{
}

impl<O> DynamicsObserver for O where
    O: for<'s> Observer<Sghmc<'s, f64>, f64>
        + for<'s> Observer<Sgnht<'s, f64>, f64>
        + for<'s> Observer<MSgnht<'s, f64>, f64>
        + ?Sized
{
}

/// A chain's state before its first step: θ₀, p₀ and the sampler's random numbers.
#[derive(Clone, Debug)]
pub struct Start {
    /// θ₀ (the final θ after a run).
    pub theta: Vec<f64>,
    /// p₀ (the final p after a run).
    pub p: Vec<f64>,
    /// The sampler's random numbers.
    pub rng: Pcg64,
}

impl Start {
    /// θ₀ = `theta` and p₀ ~ N(0, I), the first draws of `Pcg64::new(seed, stream)`.
    pub fn new(theta: &[f64], seed: u64, stream: u128) -> Self {
        let mut rng = Pcg64::new(seed as u128, stream);
        let mut p = vec![0.0; theta.len()];
        sgmcmc::rng::fill_standard_normal(&mut rng, &mut p);
        Start {
            theta: theta.to_vec(),
            p,
            rng,
        }
    }
}

/// Builds `dynamics` with `settings` on `start`'s θ and p (identity mass) and runs it for
/// `steps` steps on `model` ([`Sampler::run`]), handing every step to `observer`. The
/// thermostats start where the papers start them: SGNHT at ξ₀ = A (Ding et al. 2014, Alg. 1),
/// mSGNHT at ξᵢ₀ = A (Li et al. 2016).
pub fn run_dynamics<G, O>(
    (dynamics, settings): (Dynamics, DynamicsSettings),
    start: &mut Start,
    model: &mut G,
    steps: usize,
    observer: &mut O,
) -> Result<(), SamplerError>
where
    G: Gradient<f64> + ?Sized,
    O: DynamicsObserver + ?Sized,
{
    let s = settings;
    let Start { theta, p, rng } = start;
    let steps = steps as u64;
    // mSGNHT's 3n; SGHMC and SGNHT take the first 2n.
    let n = theta.len();
    let mut work = vec![0.0; MSgnht::<f64>::workspace_len(n)];
    let work2 = Sgnht::<f64>::workspace_len(n);
    let thermostat = SgnhtParams::new(s.h)
        .with_diffusion(s.a)
        .with_integrator(s.integrator);
    match dynamics {
        Dynamics::Sghmc => {
            let params = SghmcParams::new(s.h)
                .with_friction(s.a)
                .with_noise_estimate(s.noise_estimate)
                .with_integrator(s.integrator);
            // (An observer that stops the run just ends it here.)
            Sghmc::new(params, theta, p, &mut work[..work2])?
                .run(model, rng, steps, observer)
                .map(|_| ())?;
        }
        Dynamics::Sgnht => {
            Sgnht::new(thermostat, theta, p, &mut [0.0], &mut work[..work2])?
                .run(model, rng, steps, observer)
                .map(|_| ())?;
        }
        Dynamics::MSgnht => {
            let mut xi = vec![thermostat.initial_thermostat(); theta.len()];
            MSgnht::resume(thermostat, theta, p, &mut xi, &mut work)?
                .run(model, rng, steps, observer)
                .map(|_| ())?;
        }
    }
    Ok(())
}

/// [`run_dynamics`] for `job`: runs `job.steps` steps with `observer` (and `job.pb` ticking) and
/// returns the observer, with what it recorded.
pub fn run_observed<G, O>(
    sampler: (Dynamics, DynamicsSettings),
    start: &mut Start,
    model: &mut G,
    job: Job<'_>,
    mut observer: O,
) -> Result<O, SamplerError>
where
    G: Gradient<f64> + ?Sized,
    O: DynamicsObserver,
{
    let mut progress = Progress::new(job.pb, &mut observer);
    run_dynamics(sampler, start, model, job.steps, &mut progress)?;
    drop(progress);
    Ok(observer)
}

/// SGMGT's parameters (Zhang et al. 2017, Alg. 1) with kinetic energy `kinetic`, γ = 1, the
/// diffusions (σ_p, σ_θ, σ_ξ) and resampling periods (T_p, T_ξ; 0 = never), as `multi-well`
/// and `blr` tune them.
pub fn sgmgt_params<K: Kinetic<f64>>(
    (h, kinetic, integrator): (f64, K, Integrator),
    (sigma_p, sigma_theta, sigma_xi): (f64, f64, f64),
    (resample_p, resample_xi): (u32, u32),
) -> SgmgtParams<f64, K> {
    SgmgtParams::new(h)
        .with_kinetic(kinetic)
        .with_sigma_p(sigma_p)
        .with_gamma(1.0)
        .with_sigma_theta(sigma_theta)
        .with_sigma_xi(sigma_xi)
        .with_resampling_steps(resample_p, resample_xi)
        .with_integrator(integrator)
}

/// Runs `opts.chains` chains of `steps` steps of every method at every (h, A) of a grid (methods
/// outer, settings inner; configuration k = method index × settings + setting index seeds its
/// chains), each by `run(method, settings, job)`, as [`RunOptions::par_chains`] does. Returns each
/// configuration's chains, or the first error, named by its method and (h, A).
pub fn method_grid<O: Send>(
    opts: &RunOptions,
    (methods, settings, integrator): (&[Dynamics], &[(f64, f64)], Integrator),
    (steps, label): (usize, &str),
    run: impl Fn(Dynamics, DynamicsSettings, Job<'_>) -> Result<O, SamplerError> + Sync,
) -> Result<Vec<Vec<O>>, ExperimentError> {
    let configs: Vec<(Dynamics, (f64, f64))> = methods
        .iter()
        .flat_map(|&m| settings.iter().map(move |&s| (m, s)))
        .collect();
    let outs = opts.par_chains(&configs, steps, label, |k, &(m, (h, a)), c, pb| {
        let job = Job {
            steps,
            seed: opts.chain_seed(k, c),
            pb,
        };
        run(m, DynamicsSettings::new(h, a, integrator), job)
            .map_err(|e| e.named(format!("{m:?} {:?}", (h, a))))
    });
    all_ok(outs)
}

/// Every configuration's chains, or the first error (configurations and chains in order).
pub fn all_ok<T, E>(groups: Vec<Vec<Result<T, E>>>) -> Result<Vec<Vec<T>>, E> {
    groups
        .into_iter()
        .map(|chains| chains.into_iter().collect())
        .collect()
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

/// Mean and sample sd (divisor n − 1; 0 for one value, NaN for none) of a list.
pub fn mean_sd(x: &[f64]) -> (f64, f64) {
    if x.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    let v = x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    (m, v.sqrt())
}
