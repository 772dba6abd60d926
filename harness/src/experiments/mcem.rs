//! What the two MCEM experiments of Roychowdhury & Parthasarathy 2017 share: the eight samplers of its Tables 1–3, one "iteration" each, tuning and per-run summaries.
//!
//! Roychowdhury & Parthasarathy 2017 §4.1: "An 'iteration' here refers to a complete E step, with
//! the full quota of leapfrog jumps." So one iteration of every method is L leapfrog-type steps and
//! then one recorded θ:
//!
//! * HMC: one proposal of L leapfrog steps with Metropolis–Hastings (Roychowdhury & Parthasarathy
//!   2017 Alg. 1 without the M-step), full-data gradients and energy;
//! * SGHMC: a fresh p ~ N(0, I), then L Euler steps of SGHMC with friction A and B̂ = 0
//!   (Roychowdhury & Parthasarathy 2017 Alg. 3, which redraws p at every iteration);
//! * SGNHT: L Euler steps of SGNHT with diffusion A, p and ξ carried over (Roychowdhury &
//!   Parthasarathy 2017 Alg. 2);
//! * SG-NPHMC: one sample of Roychowdhury & Parthasarathy 2017 Alg. 4 (p, q redrawn, s = 1, L
//!   generalized-leapfrog steps), with noise estimates A = B = the tuned noise value and thermostat
//!   mass Q = [`THERMOSTAT_MASS`];
//! * the -EM variants: one `step` of the core's [`Mcem`] wrapper around the same sampler built
//!   with a diagonal mass from M = I, which is one E-step (Alg. 1, 3: p redrawn; Alg. 2: not;
//!   SG-NPHMC-EM: the core's default redraws p, q as Alg. 4 does, the extra row
//!   [`Method::SgNphmcEmPrinted`] is Alg. 5 as printed, without) plus an M-step every S_count
//!   E-steps ([`em_params`] has the settings).
//!
//! The stochastic samplers see minibatch gradients (and, for SG-NPHMC, the minibatch value Ũ on
//! the same minibatch as the gradient it follows); HMC sees the full data.

use super::common::{ExperimentError, RunOptions, sig};
use crate::diagnostics::DrawCollector;
use crate::export::{self, ChainWriter};
use crate::models::gaussian_mean::MinibatchSampler;
use crate::models::logistic_regression::sigmoid;
use crate::models::{LogisticRegression, NormalWishart};
use crate::plot::{Chart, Scale, Series, line_chart};
use crate::report::Table;
use rand_core::Rng;
use rand_pcg::Pcg64;
use sgmcmc::adapt::{Mcem, McemParams, NphmcEStep, SampleSize};
use sgmcmc::kinetic::MassShape;
use sgmcmc::prelude::*;
use std::fmt;
use std::path::Path;
use std::time::Instant;

/// Thermostat mass Q of SG-NPHMC (our choice: the paper gives none; Q = 1 matches the unit
/// scale of the momenta drawn from N(0, I)).
pub const THERMOSTAT_MASS: f64 = 1.0;

/// Timing chains per method and data set; the fastest counts ([`time_method`]).
pub const TIMING_REPEATS: usize = 3;

/// A posterior whose potential is a sum over data rows, evaluated on all rows or on a minibatch.
///
/// `batch` = `None` means all rows, unscaled; `Some(rows)` a minibatch whose data sum is scaled
/// by N/|B| (Ding et al. 2014, eq. 2). The gradient and the value are separate calls, so a
/// gradient step does not pay for the value (HMC needs the value once per proposal, SG-NPHMC once
/// per step, the other samplers never).
pub trait BatchedPosterior: Sync {
    /// Dimension of θ.
    fn dim(&self) -> usize;
    /// Data rows N.
    fn rows(&self) -> usize;
    /// Writes ∇U(θ) on `batch` into `grad`.
    fn gradient(&self, theta: &[f64], batch: Option<&[usize]>, grad: &mut [f64]);
    /// U(θ) on `batch`.
    fn energy(&self, theta: &[f64], batch: Option<&[usize]>) -> f64;
}

impl BatchedPosterior for NormalWishart {
    fn dim(&self) -> usize {
        2
    }
    fn rows(&self) -> usize {
        self.x.len()
    }
    fn gradient(&self, theta: &[f64], batch: Option<&[usize]>, grad: &mut [f64]) {
        self.potential(theta, batch, Some(grad));
    }
    fn energy(&self, theta: &[f64], batch: Option<&[usize]>) -> f64 {
        self.potential(theta, batch, None)
    }
}

impl BatchedPosterior for LogisticRegression {
    fn dim(&self) -> usize {
        LogisticRegression::dim(self)
    }
    fn rows(&self) -> usize {
        self.len()
    }
    /// ∇U(w) = scale · Σᵢ (σ(wᵀxᵢ) − yᵢ) xᵢ + w/σ₀², as in [`LogisticRegression::batch`] but
    /// without the softplus of the value (one `exp` per row instead of three transcendentals).
    fn gradient(&self, theta: &[f64], batch: Option<&[usize]>, grad: &mut [f64]) {
        grad.fill(0.0);
        let mut add_row = |i: usize| {
            let x = self.data.row(i);
            let z: f64 = theta.iter().zip(x).map(|(w, x)| w * x).sum();
            let r = sigmoid(z) - self.data.y[i];
            for (g, xj) in grad.iter_mut().zip(x) {
                *g += r * xj;
            }
        };
        let scale = match batch {
            None => {
                (0..self.len()).for_each(&mut add_row);
                1.0
            }
            Some(rows) => {
                rows.iter().for_each(|&i| add_row(i));
                self.len() as f64 / rows.len() as f64
            }
        };
        let inv = 1.0 / self.prior_variance;
        for (g, w) in grad.iter_mut().zip(theta) {
            *g = scale * *g + inv * w;
        }
    }
    fn energy(&self, theta: &[f64], batch: Option<&[usize]>) -> f64 {
        match batch {
            None => self.batch(theta, 0..self.len(), 1.0, None),
            Some(rows) => self.batch(
                theta,
                rows.iter().copied(),
                self.len() as f64 / rows.len() as f64,
                None,
            ),
        }
    }
}

/// The full-data potential as a sampler model (gradient and energy).
pub struct FullData<'a, P: ?Sized>(pub &'a P);

impl<P: BatchedPosterior + ?Sized> Gradient<f64> for FullData<'_, P> {
    fn gradient(&mut self, theta: &[f64], grad: &mut [f64]) {
        self.0.gradient(theta, None, grad);
    }
}

impl<P: BatchedPosterior + ?Sized> Energy<f64> for FullData<'_, P> {
    fn energy(&mut self, theta: &[f64]) -> f64 {
        self.0.energy(theta, None)
    }
}

/// Minibatch estimates: every gradient call draws a fresh minibatch (without replacement); an
/// energy call evaluates Ũ on the minibatch of the last gradient call, so SG-NPHMC's Ũ and ∇Ũ at
/// one θ come from the same rows.
pub struct Minibatches<'a, P: ?Sized> {
    posterior: &'a P,
    sampler: MinibatchSampler,
    rows: Vec<usize>,
}

impl<'a, P: BatchedPosterior + ?Sized> Minibatches<'a, P> {
    /// Minibatches of `batch` rows drawn with their own RNG seeded by `seed`.
    pub fn new(posterior: &'a P, batch: usize, seed: u64) -> Self {
        let mut sampler = MinibatchSampler::new(posterior.rows(), batch, seed);
        let rows = sampler.draw().to_vec();
        Minibatches {
            posterior,
            sampler,
            rows,
        }
    }
}

impl<P: BatchedPosterior + ?Sized> Gradient<f64> for Minibatches<'_, P> {
    fn gradient(&mut self, theta: &[f64], grad: &mut [f64]) {
        self.rows.copy_from_slice(self.sampler.draw());
        self.posterior.gradient(theta, Some(&self.rows), grad);
    }
}

impl<P: BatchedPosterior + ?Sized> Energy<f64> for Minibatches<'_, P> {
    fn energy(&mut self, theta: &[f64]) -> f64 {
        self.posterior.energy(theta, Some(&self.rows))
    }
}

/// The rows of Roychowdhury & Parthasarathy 2017 Tables 1–3 (without the Riemannian RHMC and
/// SGR-NPHMC), in the paper's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// HMC, identity mass.
    Hmc,
    /// HMC-EM (Roychowdhury & Parthasarathy 2017 Alg. 1).
    HmcEm,
    /// SGHMC, identity mass.
    Sghmc,
    /// SGHMC-EM (Roychowdhury & Parthasarathy 2017 Alg. 3).
    SghmcEm,
    /// SG-NPHMC (Roychowdhury & Parthasarathy 2017 Alg. 4), identity mass.
    SgNphmc,
    /// SG-NPHMC-EM with the core's default E-step: one Alg. 4 block (p, q redrawn, s = 1) per
    /// E-step, which keeps θ's target (the core departs from the printed Alg. 5 here).
    SgNphmcEm,
    /// SGNHT, identity mass.
    Sgnht,
    /// SGNHT-EM (Roychowdhury & Parthasarathy 2017 Alg. 2).
    SgnhtEm,
    /// SG-NPHMC-EM with the E-step of Roychowdhury & Parthasarathy 2017 Alg. 5 as printed (no
    /// redraw of p, q, s): an extra row, listed last so the other rows keep their seeds.
    SgNphmcEmPrinted,
}

impl Method {
    /// The eight of Roychowdhury & Parthasarathy 2017's tables, in their order, then the
    /// printed-Alg. 5 variant.
    pub const ALL: [Method; 9] = [
        Method::Hmc,
        Method::HmcEm,
        Method::Sghmc,
        Method::SghmcEm,
        Method::SgNphmc,
        Method::SgNphmcEm,
        Method::Sgnht,
        Method::SgnhtEm,
        Method::SgNphmcEmPrinted,
    ];

    /// The paper's name.
    pub fn label(self) -> &'static str {
        match self {
            Method::Hmc => "HMC",
            Method::HmcEm => "HMC-EM",
            Method::Sghmc => "SGHMC",
            Method::SghmcEm => "SGHMC-EM",
            Method::SgNphmc => "SG-NPHMC",
            Method::SgNphmcEm => "SG-NPHMC-EM",
            Method::Sgnht => "SGNHT",
            Method::SgnhtEm => "SGNHT-EM",
            Method::SgNphmcEmPrinted => "SG-NPHMC-EM (Alg. 5 as printed)",
        }
    }

    /// The sampler without MCEM (itself for the base samplers).
    pub fn base(self) -> Method {
        match self {
            Method::HmcEm => Method::Hmc,
            Method::SghmcEm => Method::Sghmc,
            Method::SgNphmcEm | Method::SgNphmcEmPrinted => Method::SgNphmc,
            Method::SgnhtEm => Method::Sgnht,
            m => m,
        }
    }

    /// An MCEM variant?
    pub fn is_em(self) -> bool {
        self.base() != self
    }

    /// Minibatch gradients (everything but HMC and HMC-EM)?
    pub fn is_stochastic(self) -> bool {
        self.base() != Method::Hmc
    }
}

/// A method's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    /// Step ε (h).
    pub step: f64,
    /// The noise term: SGHMC's friction A (Roychowdhury & Parthasarathy 2017's C), SGNHT's
    /// diffusion A, SG-NPHMC's A = B; unused by HMC.
    pub noise: f64,
    /// Leapfrog-type steps per iteration (Roychowdhury & Parthasarathy 2017's LP_S).
    pub leapfrog: u32,
    /// Minibatch size (stochastic methods).
    pub batch: usize,
    /// E-step samples per M-step (Roychowdhury & Parthasarathy 2017's S_count; -EM methods).
    pub s_count: usize,
}

/// Why a chain did not run.
#[derive(Clone, Debug, PartialEq)]
pub enum ChainError {
    /// The method is not available in the core.
    Unavailable(&'static str),
    /// Invalid settings (the core's message).
    Invalid(String),
    /// The sampler stopped at this iteration.
    Step(usize, StepError),
}

impl From<sgmcmc::Error> for ChainError {
    fn from(e: sgmcmc::Error) -> Self {
        ChainError::Invalid(e.to_string())
    }
}

impl From<LayoutError> for ChainError {
    fn from(e: LayoutError) -> Self {
        ChainError::Invalid(e.to_string())
    }
}

impl fmt::Display for ChainError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChainError::Unavailable(why) => write!(f, "not run: {why}"),
            ChainError::Invalid(why) => write!(f, "invalid settings: {why}"),
            ChainError::Step(t, e) => write!(f, "stopped at iteration {t}: {e}"),
        }
    }
}

/// The recorded part of one chain.
#[derive(Clone, Debug)]
pub struct Chain {
    /// Dimension of a recorded sample.
    pub dim: usize,
    /// Post-burn-in samples (after `report`), row-major: iteration × dim.
    pub samples: Vec<f64>,
    /// Wall-clock seconds of the post-burn-in iterations (sampling and recording).
    pub seconds: f64,
    /// HMC: mean Metropolis–Hastings acceptance probability after burn-in.
    pub acceptance: Option<f64>,
    /// -EM methods: the learned diagonal M⁻¹ at the end of the chain.
    pub inverse_mass: Option<Vec<f64>>,
    /// -EM methods: M-steps taken.
    pub m_steps: u64,
}

impl Chain {
    /// Milliseconds per iteration after burn-in.
    pub fn ms_per_iteration(&self) -> f64 {
        1e3 * self.seconds / (self.samples.len() / self.dim).max(1) as f64
    }

    /// Sample mean and sd (divisor n − 1) of coordinate `j`.
    pub fn mean_sd(&self, j: usize) -> (f64, f64) {
        let xs: Vec<f64> = self
            .samples
            .iter()
            .skip(j)
            .step_by(self.dim)
            .copied()
            .collect();
        let n = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / n;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
        (mean, var.sqrt())
    }

    /// √(mean over samples of (θ_sj − value)²): the RMSE of the samples about a fixed value.
    pub fn rmse_about(&self, j: usize, value: f64) -> f64 {
        let xs = self.samples.iter().skip(j).step_by(self.dim);
        let n = (self.samples.len() / self.dim) as f64;
        (xs.map(|x| (x - value).powi(2)).sum::<f64>() / n).sqrt()
    }

    /// Coordinate `j` of every sample.
    pub fn coordinate(&self, j: usize) -> Vec<f64> {
        self.samples
            .iter()
            .skip(j)
            .step_by(self.dim)
            .copied()
            .collect()
    }
}

/// How one chain is run: start, lengths, seed and the map from θ to the reported quantities.
#[derive(Clone, Copy)]
pub struct ChainPlan<'a> {
    /// Initial θ.
    pub init: &'a [f64],
    /// Iterations discarded.
    pub burn_in: usize,
    /// Iterations recorded.
    pub kept: usize,
    /// Seed of the sampler's and the minibatches' RNGs.
    pub seed: u64,
    /// Maps a copy of θ to the reported quantities in place (e.g. log τ → τ).
    pub report: fn(&mut [f64]),
}

/// The identity map of [`ChainPlan::report`].
pub fn as_is(_: &mut [f64]) {}

/// Roychowdhury & Parthasarathy 2017's "iteration" of SGHMC or SGNHT as one step: `steps` steps of
/// the inner sampler, SGHMC's after a fresh p ~ N(0, I) (Roychowdhury & Parthasarathy 2017, Alg. 3;
/// SGNHT's Alg. 2 carries p and ξ over). Its statistics are the last inner step's.
struct Iteration<S> {
    inner: S,
    steps: u32,
    redraw_momentum: bool,
}

impl<S: ChainState<f64>> ChainState<f64> for Iteration<S> {
    fn position(&self) -> &[f64] {
        self.inner.position()
    }
    fn momentum(&self) -> &[f64] {
        self.inner.momentum()
    }
    fn phase_mut(&mut self) -> (&mut [f64], &mut [f64]) {
        self.inner.phase_mut()
    }
    fn resample_momentum<R: Rng + ?Sized>(&mut self, rng: &mut R) {
        self.inner.resample_momentum(rng);
    }
}

impl<S: Sampler<f64, M>, M: ?Sized> Sampler<f64, M> for Iteration<S> {
    fn step<R: Rng + ?Sized>(
        &mut self,
        model: &mut M,
        rng: &mut R,
    ) -> Result<StepStats<f64>, StepError> {
        if self.redraw_momentum {
            self.inner.resample_momentum(rng);
        }
        let mut last = StepStats {
            step_size: f64::NAN,
            kinetic_temperature: None,
            thermostat: None,
            acceptance: None,
            accepted: None,
        };
        self.inner
            .run_with(model, rng, self.steps.into(), |_, _, st| last = *st)
            .map_err(|e| e.error)?;
        Ok(last)
    }
}

/// Runs `plan.burn_in` iterations of `sampler` (one step each), then `plan.kept` more, recording
/// θ (through `plan.report`) and the HMC acceptance after each.
fn record<S: Sampler<f64, M>, M: ?Sized>(
    sampler: &mut S,
    model: &mut M,
    rng: &mut Pcg64,
    plan: &ChainPlan<'_>,
) -> Result<Chain, ChainError> {
    let stopped =
        |before: usize| move |e: RunError| ChainError::Step(before + e.completed as usize, e.error);
    sampler
        .run(model, rng, plan.burn_in as u64, &mut ())
        .map_err(stopped(0))?;
    let mut draws = DrawCollector::new(plan.init.len())
        .map(plan.report)
        .with_capacity(plan.kept);
    let (mut acc_sum, mut acc_n) = (0.0, 0usize);
    // The recorded iterations' θ, if `--draws` asked for them (crate::export).
    let mut writer = ChainWriter::open();
    let start = Instant::now();
    sampler
        .run_with(model, rng, plan.kept as u64, |t, s, st| {
            if let Some(w) = &mut writer {
                w.observe(s.position(), st);
            }
            if let Some(a) = st.acceptance {
                acc_sum += a;
                acc_n += 1;
            }
            draws.observe(t, s, st);
        })
        .map_err(stopped(plan.burn_in))?;
    let seconds = start.elapsed().as_secs_f64();
    Ok(Chain {
        dim: draws.dims(),
        samples: draws.into_flat(),
        seconds,
        acceptance: (acc_n > 0).then(|| acc_sum / acc_n as f64),
        inverse_mass: None,
        m_steps: 0,
    })
}

/// The SGHMC settings of a method: friction A = the noise term, Euler (Roychowdhury &
/// Parthasarathy 2017, Alg. 3).
fn sghmc_params(settings: &Settings) -> SghmcParams<f64> {
    SghmcParams::new(settings.step)
        .with_friction(settings.noise)
        .with_integrator(Integrator::Euler)
}

/// The SGNHT settings of a method: diffusion A = the noise term, Euler (Alg. 2).
fn sgnht_params(settings: &Settings) -> SgnhtParams<f64> {
    SgnhtParams::new(settings.step)
        .with_diffusion(settings.noise)
        .with_integrator(Integrator::Euler)
}

/// The SG-NPHMC settings of a method: A = B = the noise term, Q = [`THERMOSTAT_MASS`] (Alg. 4).
fn sg_nphmc_params(settings: &Settings) -> SgNphmcParams<f64> {
    SgNphmcParams::new(settings.step)
        .with_thermostat_mass(THERMOSTAT_MASS)
        .with_energy_noise(settings.noise)
        .with_gradient_noise(settings.noise)
        .with_leapfrog_steps(settings.leapfrog)
}

/// Runs one chain of `method` with `settings` on `posterior`.
pub fn run_chain<P: BatchedPosterior>(
    posterior: &P,
    method: Method,
    settings: &Settings,
    plan: &ChainPlan<'_>,
) -> Result<Chain, ChainError> {
    let d = posterior.dim();
    let mut rng = Pcg64::new(plan.seed as u128, 0xe5);
    let mut theta = plan.init.to_vec();
    let mut p = vec![0.0; d];
    sgmcmc::rng::fill_standard_normal(&mut rng, &mut p);
    if method.is_em() {
        return run_em_chain(
            posterior, method, settings, plan, &mut rng, &mut theta, &mut p,
        );
    }
    let (rng, theta, p) = (&mut rng, &mut theta, &mut p);
    let mut work = vec![0.0; Hmc::<f64>::workspace_len(d)];
    let sg_work = &mut work[..Sghmc::<f64>::workspace_len(d)];
    let minibatches = || Minibatches::new(posterior, settings.batch, plan.seed ^ 0x5eed_ba7c);
    let l = settings.leapfrog;
    match method {
        Method::Hmc => {
            let params = HmcParams::new(settings.step).with_leapfrog_steps(l);
            let mut smp = Hmc::new(params, theta, p, &mut work)?;
            record(&mut smp, &mut FullData(posterior), rng, plan)
        }
        Method::Sghmc => {
            let inner = Sghmc::new(sghmc_params(settings), theta, p, sg_work)?;
            let mut smp = Iteration {
                inner,
                steps: l,
                redraw_momentum: true,
            };
            record(&mut smp, &mut minibatches(), rng, plan)
        }
        Method::Sgnht => {
            let params = sgnht_params(settings);
            let mut xi = [0.0]; // ξ₀ = A, set by `new`
            let inner = Sgnht::new(params, theta, p, &mut xi, sg_work)?;
            let mut smp = Iteration {
                inner,
                steps: l,
                redraw_momentum: false,
            };
            record(&mut smp, &mut minibatches(), rng, plan)
        }
        // SG-NPHMC (the -EM methods returned above).
        _ => {
            let mut smp = SgNphmc::new(sg_nphmc_params(settings), theta, p, &mut work)?;
            record(&mut smp, &mut minibatches(), rng, plan)
        }
    }
}

/// The MCEM settings of the -EM rows: LP_S = L, the core's default M-step (κ_k = k^−0.75,
/// shrinkage 0.05, eigenvalue bounds \[10⁻⁴, 10⁴\], [`McemParams::new`]) and an adaptive S_count
/// (Roychowdhury & Parthasarathy 2017, §3.2) starting at `settings.s_count`, with the core's
/// default level α = 0.25 and S_I = 10 (§6.3); diagonal M. SG-NPHMC-EM's E-step is the core's
/// default (an Alg. 4 block) unless `method` is [`Method::SgNphmcEmPrinted`].
pub fn em_params(method: Method, settings: &Settings) -> Result<McemParams<f64>, ChainError> {
    let size = SampleSize::adaptive(
        settings.s_count as u64,
        SampleSize::<f64>::DEFAULT_LEVEL,
        10,
    )
    .map_err(|e| ChainError::Invalid(e.to_string()))?;
    let params = McemParams::new(settings.leapfrog).with_sample_size(size);
    params
        .validate()
        .map_err(|e| ChainError::Invalid(e.to_string()))?;
    Ok(if method == Method::SgNphmcEmPrinted {
        params.with_nphmc_e_step(NphmcEStep::Printed)
    } else {
        params
    })
}

/// One chain of an -EM method: the base sampler with a diagonal mass from M = I, wrapped in the
/// core's [`Mcem`]; one wrapper step is one iteration (one E-step).
fn run_em_chain<P: BatchedPosterior>(
    posterior: &P,
    method: Method,
    settings: &Settings,
    plan: &ChainPlan<'_>,
    rng: &mut Pcg64,
    theta: &mut [f64],
    p: &mut [f64],
) -> Result<Chain, ChainError> {
    let d = theta.len();
    let mut work = vec![0.0; Hmc::<f64>::workspace_len(d)];
    let mut inv_mass = vec![1.0; d];
    let mass =
        MassBuffer::diagonal(&mut inv_mass).map_err(|e| ChainError::Invalid(e.to_string()))?;
    let mut em_work = vec![0.0; Mcem::<f64, Hmc<'_, f64>>::workspace_len(d, MassShape::Diagonal)];
    let params = em_params(method, settings)?;
    let minibatches = || Minibatches::new(posterior, settings.batch, plan.seed ^ 0x5eed_ba7c);
    let sg = Sghmc::<f64>::workspace_len(d);
    macro_rules! drive_em {
        ($sampler:expr, $model:expr) => {{
            let mut smp = $sampler;
            smp.set_mass(mass)?;
            let mut em = Mcem::new(smp, params, &mut em_work)?;
            let mut chain = record(&mut em, $model, rng, plan)?;
            chain.inverse_mass = Some(em.inverse_mass().to_vec());
            chain.m_steps = em.m_steps();
            Ok(chain)
        }};
    }
    match method {
        Method::HmcEm => {
            let params = HmcParams::new(settings.step).with_leapfrog_steps(settings.leapfrog);
            drive_em!(
                Hmc::new(params, theta, p, &mut work)?,
                &mut FullData(posterior)
            )
        }
        Method::SghmcEm => drive_em!(
            Sghmc::new(sghmc_params(settings), theta, p, &mut work[..sg])?,
            &mut minibatches()
        ),
        Method::SgnhtEm => {
            let params = sgnht_params(settings);
            let mut xi = [0.0]; // ξ₀ = A, set by `new`
            drive_em!(
                Sgnht::new(params, theta, p, &mut xi, &mut work[..sg])?,
                &mut minibatches()
            )
        }
        Method::SgNphmcEm | Method::SgNphmcEmPrinted => drive_em!(
            SgNphmc::new(sg_nphmc_params(settings), theta, p, &mut work)?,
            &mut minibatches()
        ),
        _ => Err(ChainError::Invalid(format!(
            "{} is not an -EM method",
            method.label()
        ))),
    }
}

/// Tuning score of a chain against exact (or reference) posterior means and sds: the mean over
/// coordinates of √((m − m*)² + (s − s*)²)/s*, the 2-Wasserstein distance between Gaussian fits
/// of the sampled and the exact marginal in units of the exact sd. It punishes bias and
/// mis-dispersion alike (unlike an RMSE about the truth, which rewards under-dispersion).
pub fn tuning_score(chain: &Chain, exact_mean: &[f64], exact_sd: &[f64]) -> f64 {
    let d = exact_mean.len();
    (0..d)
        .map(|j| {
            let (m, s) = chain.mean_sd(j);
            ((m - exact_mean[j]).powi(2) + (s - exact_sd[j]).powi(2)).sqrt() / exact_sd[j]
        })
        .sum::<f64>()
        / d as f64
}

pub use super::common::mean_sd;

/// One method's chains and numbers.
#[derive(Clone, Debug)]
pub struct MethodRow {
    /// Method.
    pub method: Method,
    /// Settings used.
    pub settings: Settings,
    /// The chains (empty if the method did not run).
    pub chains: Vec<Chain>,
    /// Why chains are missing, if they are.
    pub error: Option<String>,
    /// Milliseconds per iteration of the timing chain.
    pub ms_per_iteration: Option<f64>,
}

impl MethodRow {
    /// √(mean over samples of (θ_sj − value)²), one per chain.
    pub fn rmse_about(&self, j: usize, value: f64) -> Vec<f64> {
        self.chains.iter().map(|c| c.rmse_about(j, value)).collect()
    }

    /// √(mean over chains of (sample mean − exact mean)²) of coordinate `j`.
    pub fn mean_error(&self, j: usize, exact_mean: f64) -> f64 {
        let sq: Vec<f64> = self
            .chains
            .iter()
            .map(|c| (c.mean_sd(j).0 - exact_mean).powi(2))
            .collect();
        mean_sd(&sq).0.sqrt()
    }

    /// Sample sd / exact sd of coordinate `j`, one per chain.
    pub fn sd_ratio(&self, j: usize, exact_sd: f64) -> Vec<f64> {
        self.chains
            .iter()
            .map(|c| c.mean_sd(j).1 / exact_sd)
            .collect()
    }

    /// -EM methods: the learned diagonal M⁻¹ at the end of the chains (mean over chains) and the
    /// mean number of M-steps, as "(m₁, m₂, …) after k M-steps"; "–" otherwise.
    pub fn learned_inverse_mass(&self) -> String {
        let masses: Vec<&Vec<f64>> = self
            .chains
            .iter()
            .filter_map(|c| c.inverse_mass.as_ref())
            .collect();
        if masses.is_empty() {
            return "–".into();
        }
        let d = masses[0].len();
        let mean: Vec<String> = (0..d)
            .map(|j| {
                sig(
                    masses.iter().map(|m| m[j]).sum::<f64>() / masses.len() as f64,
                    3,
                )
            })
            .collect();
        let steps =
            self.chains.iter().map(|c| c.m_steps as f64).sum::<f64>() / self.chains.len() as f64;
        format!("({}) after {} M-steps", mean.join(", "), sig(steps, 3))
    }

    /// Mean HMC acceptance over chains, if any.
    pub fn acceptance(&self) -> Option<f64> {
        let acc: Vec<f64> = self.chains.iter().filter_map(|c| c.acceptance).collect();
        (!acc.is_empty()).then(|| mean_sd(&acc).0)
    }
}

/// One tuning candidate's result.
#[derive(Clone, Debug)]
pub struct TuningRow {
    /// Method.
    pub method: Method,
    /// Candidate.
    pub settings: Settings,
    /// Its score, or why it failed.
    pub score: Result<f64, String>,
}

/// Chains per tuning candidate; the candidate's score is their mean.
pub const TUNING_CHAINS: usize = 2;
/// A tuning chain records this fraction of a reported chain's iterations (after the full
/// burn-in), which is enough to rank candidates and keeps the full runs within minutes.
pub const TUNING_KEPT_FRACTION: usize = 5;

/// Runs [`TUNING_CHAINS`] chains per (method, candidate), in parallel, chain c of the k-th
/// candidate seeded by `seed_of(k, c)`, each with `plan`'s burn-in and 1/[`TUNING_KEPT_FRACTION`]
/// of its recorded iterations, and scores each candidate by the mean of its chains'
/// [`tuning_score`]s against the exact means and sds (in the reported coordinates); a candidate
/// with a failed chain fails.
pub fn tune<'a, P: BatchedPosterior>(
    posterior: &P,
    candidates: &[(Method, Settings)],
    plan: impl Fn(u64) -> ChainPlan<'a> + Sync,
    seed_of: impl Fn(usize, usize) -> u64 + Sync,
    exact_mean: &[f64],
    exact_sd: &[f64],
) -> Vec<TuningRow> {
    use rayon::prelude::*;
    let jobs: Vec<(usize, usize)> = (0..candidates.len())
        .flat_map(|k| (0..TUNING_CHAINS).map(move |c| (k, c)))
        .collect();
    let scores: Vec<Result<f64, String>> = jobs
        .par_iter()
        .map(|&(k, c)| {
            let (method, settings) = candidates[k];
            let full = plan(seed_of(k, c));
            let short = ChainPlan {
                kept: (full.kept / TUNING_KEPT_FRACTION).max(2),
                ..full
            };
            run_chain(posterior, method, &settings, &short)
                .map_err(|e| e.to_string())
                .and_then(|chain| {
                    let s = tuning_score(&chain, exact_mean, exact_sd);
                    if s.is_finite() {
                        Ok(s)
                    } else {
                        Err("non-finite samples".into())
                    }
                })
        })
        .collect();
    candidates
        .iter()
        .zip(scores.chunks(TUNING_CHAINS))
        .map(|(&(method, settings), chunk)| TuningRow {
            method,
            settings,
            score: chunk
                .iter()
                .cloned()
                .collect::<Result<Vec<f64>, String>>()
                .map(|v| mean_sd(&v).0),
        })
        .collect()
}

/// The best-scoring candidate of `method` (`None` if every candidate failed).
pub fn best(tuning: &[TuningRow], method: Method) -> Option<Settings> {
    tuning
        .iter()
        .filter(|t| t.method == method)
        .filter_map(|t| t.score.as_ref().ok().map(|s| (t.settings, *s)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(s, _)| s)
}

/// Every tuning candidate and its score, as a table.
pub fn tuning_table(tuning: &[TuningRow]) -> Table {
    let mut t = Table::new([
        "method",
        "step",
        "noise",
        "score (W2 of the marginals / sd)",
    ]);
    for row in tuning {
        t.row([
            row.method.label().to_string(),
            format!("{}", row.settings.step),
            format!("{}", row.settings.noise),
            match &row.score {
                Ok(s) => sig(*s, 3),
                Err(e) => e.clone(),
            },
        ]);
    }
    t
}

/// "mean ± sd" of a list, or "–" for none.
pub fn cell(xs: &[f64]) -> String {
    if xs.is_empty() {
        return "–".into();
    }
    let (m, s) = mean_sd(xs);
    format!("{} ± {}", sig(m, 3), sig(s, 2))
}

/// A histogram of `xs` on `bins` equal cells over [lo, hi] as a density curve.
pub fn histogram_curve(xs: &[f64], lo: f64, hi: f64, bins: usize) -> Vec<(f64, f64)> {
    let w = (hi - lo) / bins as f64;
    let mut counts = vec![0usize; bins];
    for &x in xs {
        if x >= lo && x < hi {
            counts[(((x - lo) / w) as usize).min(bins - 1)] += 1;
        }
    }
    let n = xs.len().max(1) as f64;
    counts
        .iter()
        .enumerate()
        .map(|(i, &c)| (lo + (i as f64 + 0.5) * w, c as f64 / (n * w)))
        .collect()
}

/// A method's curve: one colour per base sampler, the -EM variant dashed in its base's colour.
pub fn method_series(method: Method, points: Vec<(f64, f64)>) -> Series {
    let color = match method {
        Method::SgNphmcEmPrinted => 5,
        m => match m.base() {
            Method::Hmc => 1,
            Method::Sghmc => 2,
            Method::SgNphmc => 3,
            _ => 4,
        },
    };
    Series {
        dashed: method.is_em(),
        ..Series::new(method.label(), points, color)
    }
}

/// Runs `opts.chains` chains of every method of [`Method::ALL`] in parallel (chain r of method m
/// seeded by `opts.chain_seed(m, r)`), then the timing chains of each method on this thread, one
/// after the other, of `timed` recorded iterations after `timed / 4` burn-in (so no two chains
/// share the 2 cores while being timed).
pub fn run_methods<'a, P: BatchedPosterior>(
    (label, posterior): (&str, &P),
    settings_of: impl Fn(Method) -> Settings + Sync,
    plan: impl Fn(u64) -> ChainPlan<'a> + Sync,
    opts: &RunOptions,
    timed: usize,
) -> Vec<MethodRow> {
    use rayon::prelude::*;
    let jobs: Vec<(usize, usize)> = (0..Method::ALL.len())
        .flat_map(|m| (0..opts.chains).map(move |r| (m, r)))
        .collect();
    let pb = opts.progress_bar(jobs.len() as u64, "chains");
    let outs: Vec<Result<Chain, ChainError>> = jobs
        .par_iter()
        .map(|&(m, r)| {
            let method = Method::ALL[m];
            let settings = settings_of(method);
            let configuration = (m, format!("{}, {settings:?}", method.label()));
            let out = export::with_chain(opts.draws.as_ref(), label, configuration, r, || {
                run_chain(posterior, method, &settings, &plan(opts.chain_seed(m, r)))
            });
            pb.inc(1);
            out
        })
        .collect();
    pb.finish_and_clear();
    let mut outs = outs.into_iter();
    let mut rows = Vec::new();
    for (m, method) in Method::ALL.into_iter().enumerate() {
        let settings = settings_of(method);
        let mut chains = Vec::new();
        let mut error = None;
        for out in outs.by_ref().take(opts.chains) {
            match out {
                Ok(c) => chains.push(c),
                Err(e) => error = Some(e.to_string()),
            }
        }
        let ms_per_iteration = time_method(
            posterior,
            method,
            &settings,
            &plan(opts.chain_seed(200 + m, 0)),
            timed,
        )
        .ok();
        rows.push(MethodRow {
            method,
            settings,
            chains,
            error,
            ms_per_iteration,
        });
    }
    rows
}

/// Tunes every method of [`Method::ALL`] over its `candidates` ([`tune`], candidate k's chains
/// seeded by configurations 100 + k, disjoint from the reported runs'), then runs every method
/// with its best candidate (the first candidate if all failed) by [`run_methods`].
pub fn tune_and_run<'a, P: BatchedPosterior>(
    (label, posterior): (&str, &P),
    candidates: impl Fn(Method) -> Vec<Settings> + Sync,
    plan: impl Fn(u64) -> ChainPlan<'a> + Sync,
    opts: &RunOptions,
    (exact_mean, exact_sd): (&[f64], &[f64]),
    timed: usize,
) -> (Vec<TuningRow>, Vec<MethodRow>) {
    let grid: Vec<(Method, Settings)> = Method::ALL
        .into_iter()
        .flat_map(|m| candidates(m).into_iter().map(move |s| (m, s)))
        .collect();
    let tuning = tune(
        posterior,
        &grid,
        &plan,
        |k, c| opts.chain_seed(100 + k, c),
        exact_mean,
        exact_sd,
    );
    let settings_of =
        |method: Method| best(&tuning, method).unwrap_or_else(|| candidates(method)[0]);
    let rows = run_methods((label, posterior), settings_of, &plan, opts, timed);
    (tuning, rows)
}

/// A row's settings as a table cell: "ε = …" for HMC and HMC-EM, "h = …, A = …" otherwise.
pub fn settings_cell(row: &MethodRow) -> String {
    if row.method.base() == Method::Hmc {
        format!("ε = {}", row.settings.step)
    } else {
        format!("h = {}, A = {}", row.settings.step, row.settings.noise)
    }
}

/// The columns both MCEM tables share, for coordinates 0 and 1: the paper's RMSE beside ours
/// about `about` (mean ± sd over runs; why the method did not run in its place), then the error
/// of the posterior mean against `mean` and the sd ratio to `sd`, each for both coordinates.
pub fn accuracy_cells(
    row: &MethodRow,
    paper: [f64; 2],
    about: [f64; 2],
    mean: [f64; 2],
    sd: [f64; 2],
) -> [String; 8] {
    let ran = !row.chains.is_empty();
    let mean_error = |j: usize| {
        if ran {
            sig(row.mean_error(j, mean[j]), 2)
        } else {
            "–".into()
        }
    };
    [
        format!("{}", paper[0]),
        if ran {
            cell(&row.rmse_about(0, about[0]))
        } else {
            row.error.clone().unwrap_or_default()
        },
        format!("{}", paper[1]),
        cell(&row.rmse_about(1, about[1])),
        mean_error(0),
        mean_error(1),
        cell(&row.sd_ratio(0, sd[0])),
        cell(&row.sd_ratio(1, sd[1])),
    ]
}

/// Writes `path`: the density of coordinate `j` of every method's pooled samples (a 48-bin
/// histogram on `range`) against the `exact` curve.
pub fn plot_marginal(
    path: &Path,
    rows: &[MethodRow],
    j: usize,
    range: (f64, f64),
    exact: Series,
    (title, x_label): (&str, &str),
) -> Result<(), ExperimentError> {
    let (lo, hi) = range;
    let mut series: Vec<Series> = rows
        .iter()
        .filter(|row| !row.chains.is_empty())
        .map(|row| {
            let xs: Vec<f64> = row.chains.iter().flat_map(|c| c.coordinate(j)).collect();
            method_series(row.method, histogram_curve(&xs, lo, hi, 48))
        })
        .collect();
    series.push(exact);
    line_chart(
        path,
        &Chart {
            title,
            x_label,
            y_label: "density",
            x_scale: Scale::Linear,
            y_scale: Scale::Linear,
        },
        &series,
    )?;
    Ok(())
}

/// The tuning candidates as the CLI prints them, under a heading.
pub fn tuning_report(tuning: &[TuningRow]) -> String {
    format!(
        "Tuning candidates (mean score of {TUNING_CHAINS} chains each):\n{}",
        tuning_table(tuning)
    )
}

/// Milliseconds per iteration of `method`: the fastest of [`TIMING_REPEATS`] chains of `timed`
/// recorded iterations after `timed / 4` burn-in (from `plan`'s start and seed), run on the
/// calling thread. The minimum is the least disturbed by other processes on a shared machine.
pub fn time_method<P: BatchedPosterior>(
    posterior: &P,
    method: Method,
    settings: &Settings,
    plan: &ChainPlan<'_>,
    timed: usize,
) -> Result<f64, ChainError> {
    let plan = ChainPlan {
        burn_in: timed / 4,
        kept: timed,
        ..*plan
    };
    let mut best = f64::INFINITY;
    for _ in 0..TIMING_REPEATS {
        best = best.min(run_chain(posterior, method, settings, &plan)?.ms_per_iteration());
    }
    Ok(best)
}

/// Reading 2 of the paper's RMSE on one data set, |post-burn-in mean − truth| of coordinate `j`,
/// as "mean ± sd" over the row's chains.
pub fn reading2_cell(row: &MethodRow, j: usize, truth: f64) -> String {
    let errors: Vec<f64> = row
        .chains
        .iter()
        .map(|c| (c.mean_sd(j).0 - truth).abs())
        .collect();
    cell(&errors)
}

/// The exact (or quadrature) posterior mean and sd of one simulated data set.
#[derive(Clone, Debug)]
pub struct ExactSet {
    /// Posterior mean per coordinate.
    pub mean: Vec<f64>,
    /// Posterior sd per coordinate.
    pub sd: Vec<f64>,
}

/// One chain of a method on one simulated data set: what both readings of the paper's RMSE need.
#[derive(Clone, Debug)]
pub struct DataSetRun {
    /// Index of the data set (into the experiment's list of [`ExactSet`]s).
    pub data_set: usize,
    /// Post-burn-in sample mean per coordinate.
    pub mean: Vec<f64>,
    /// √(mean over samples of (θ_sj − truth_j)²) per coordinate: reading 1 about the truth.
    pub rmse_truth: Vec<f64>,
    /// √(mean over samples of (θ_sj − exact mean_j)²) per coordinate: reading 1 about the data
    /// set's own posterior mean.
    pub rmse_exact: Vec<f64>,
}

/// A method's chains on several simulated data sets at one setting.
#[derive(Clone, Debug)]
pub struct SpreadRow {
    /// Method.
    pub method: Method,
    /// Settings used (the method's tuned setting on the experiment's main data set).
    pub settings: Settings,
    /// One run per data set that finished.
    pub runs: Vec<DataSetRun>,
    /// Why the other runs did not finish.
    pub failures: Vec<String>,
}

impl SpreadRow {
    /// Reading 2 per run: |post-burn-in mean − truth| of coordinate `j`.
    pub fn mean_error_truth(&self, j: usize, truth: f64) -> Vec<f64> {
        self.runs
            .iter()
            .map(|r| (r.mean[j] - truth).abs())
            .collect()
    }

    /// Monte Carlo error per run: |post-burn-in mean − the data set's exact mean| of `j`.
    pub fn mean_error_exact(&self, j: usize, exact: &[ExactSet]) -> Vec<f64> {
        self.runs
            .iter()
            .map(|r| (r.mean[j] - exact[r.data_set].mean[j]).abs())
            .collect()
    }
}

/// Runs one chain of every method of [`Method::ALL`] on every data set of `posteriors` (in
/// parallel; the chain of method m on data set d seeded by `opts.chain_seed(400 + m, d)`, disjoint
/// from the tuning and main runs), each at `settings_of(method)`, and records its mean and both
/// RMSEs (about `truth` and about the data set's `exact` mean, `exact[d]` belonging to
/// `posteriors[d]`).
pub fn run_on_data_sets<'a, P: BatchedPosterior>(
    posteriors: &[P],
    exact: &[ExactSet],
    truth: &[f64],
    settings_of: impl Fn(Method) -> Settings + Sync,
    plan: impl Fn(u64) -> ChainPlan<'a> + Sync,
    opts: &RunOptions,
) -> Vec<SpreadRow> {
    use rayon::prelude::*;
    let jobs: Vec<(usize, usize)> = (0..Method::ALL.len())
        .flat_map(|m| (0..posteriors.len()).map(move |d| (m, d)))
        .collect();
    let outs: Vec<Result<DataSetRun, String>> = jobs
        .par_iter()
        .map(|&(m, d)| {
            let method = Method::ALL[m];
            let chain = run_chain(
                &posteriors[d],
                method,
                &settings_of(method),
                &plan(opts.chain_seed(400 + m, d)),
            )
            .map_err(|e| format!("data set {d}: {e}"))?;
            let dim = chain.dim;
            let mean: Vec<f64> = (0..dim).map(|j| chain.mean_sd(j).0).collect();
            if mean.iter().any(|x| !x.is_finite()) {
                return Err(format!("data set {d}: non-finite samples"));
            }
            Ok(DataSetRun {
                data_set: d,
                rmse_truth: (0..dim).map(|j| chain.rmse_about(j, truth[j])).collect(),
                rmse_exact: (0..dim)
                    .map(|j| chain.rmse_about(j, exact[d].mean[j]))
                    .collect(),
                mean,
            })
        })
        .collect();
    let mut outs = outs.into_iter();
    Method::ALL
        .into_iter()
        .map(|method| {
            let mut row = SpreadRow {
                method,
                settings: settings_of(method),
                runs: Vec::new(),
                failures: Vec::new(),
            };
            for out in outs.by_ref().take(posteriors.len()) {
                match out {
                    Ok(run) => row.runs.push(run),
                    Err(e) => row.failures.push(e),
                }
            }
            row
        })
        .collect()
}

/// Quantile `q` (Hyndman–Fan 7) of finite values; NaN for none.
pub fn quantile_of(xs: &[f64], q: f64) -> f64 {
    crate::diagnostics::quantile(xs, q).unwrap_or(f64::NAN)
}

/// √(mean of x²); NaN for none.
pub fn root_mean_square(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    (xs.iter().map(|x| x * x).sum::<f64>() / xs.len() as f64).sqrt()
}

/// "median [q–(1−q) quantiles]" of `xs` (q = 0: the range), or "–" for none.
pub fn spread_cell(xs: &[f64], q: f64) -> String {
    if xs.is_empty() {
        return "–".into();
    }
    format!(
        "{} [{}–{}]",
        sig(quantile_of(xs, 0.5), 2),
        sig(quantile_of(xs, q), 2),
        sig(quantile_of(xs, 1.0 - q), 2)
    )
}

/// Fraction of `xs` at or below `x` (the empirical distribution function), in percent.
pub fn percentile_rank(xs: &[f64], x: f64) -> f64 {
    100.0 * xs.iter().filter(|&&v| v <= x).count() as f64 / xs.len().max(1) as f64
}

/// Quantile level of the exact rows' interval in [`spread_table`] (5–95 %).
pub const EXACT_SPREAD_Q: f64 = 0.05;

/// The two readings of the paper's RMSE over simulated data sets, for coordinates `names`:
/// exact-posterior rows (over all `exact` sets with their 5–95 % interval, and over the first
/// `runs` sets, the ones the samplers ran on, with their range), then one row per method (median
/// and range over its data sets). Reading 1 is the sample RMSE about the truth
/// (`about_truth`) or about the data set's exact mean; an exact sampler's reading 1 is
/// √(sd² + (mean − about)²) with its sample sd. Reading 2 is |post-burn-in mean − truth|, with its
/// root mean square over data sets beside it; "MC error" is |post-burn-in mean − exact mean|.
pub fn spread_table(
    names: [&str; 2],
    exact: &[ExactSet],
    runs: usize,
    rows: &[SpreadRow],
    truth: [f64; 2],
    about_truth: bool,
) -> Table {
    let about = if about_truth { "truth" } else { "exact mean" };
    let mut t = Table::new([
        "method".to_string(),
        "setting".into(),
        "data sets".into(),
        format!("reading 1 (RMSE about {about}) {}", names[0]),
        format!("reading 1 {}", names[1]),
        format!("reading 2 |mean − truth| {}", names[0]),
        format!("reading 2 {}", names[1]),
        format!("reading 2 RMS over data sets ({}, {})", names[0], names[1]),
        format!("MC error |mean − exact| ({}, {})", names[0], names[1]),
    ]);
    let exact_rows = |sets: &[ExactSet], label: &str, q: f64| -> Vec<String> {
        let r1 = |j: usize| -> Vec<f64> {
            sets.iter()
                .map(|e| {
                    let centre = if about_truth { truth[j] } else { e.mean[j] };
                    (e.sd[j].powi(2) + (e.mean[j] - centre).powi(2)).sqrt()
                })
                .collect()
        };
        let r2 =
            |j: usize| -> Vec<f64> { sets.iter().map(|e| (e.mean[j] - truth[j]).abs()).collect() };
        vec![
            label.to_string(),
            "–".into(),
            format!("{}", sets.len()),
            spread_cell(&r1(0), q),
            spread_cell(&r1(1), q),
            spread_cell(&r2(0), q),
            spread_cell(&r2(1), q),
            format!(
                "{}, {}",
                sig(root_mean_square(&r2(0)), 2),
                sig(root_mean_square(&r2(1)), 2)
            ),
            "0".into(),
        ]
    };
    t.row(exact_rows(
        exact,
        "exact posterior (5–95 %)",
        EXACT_SPREAD_Q,
    ));
    t.row(exact_rows(
        &exact[..runs.min(exact.len())],
        "exact posterior, samplers' data sets (range)",
        0.0,
    ));
    for row in rows {
        let r1 = |j: usize| -> Vec<f64> {
            row.runs
                .iter()
                .map(|r| {
                    if about_truth {
                        r.rmse_truth[j]
                    } else {
                        r.rmse_exact[j]
                    }
                })
                .collect()
        };
        let (e0, e1) = (
            row.mean_error_truth(0, truth[0]),
            row.mean_error_truth(1, truth[1]),
        );
        let setting = if row.method.base() == Method::Hmc {
            format!("ε = {}", row.settings.step)
        } else {
            format!("h = {}, A = {}", row.settings.step, row.settings.noise)
        };
        let mut data_sets = format!("{}", row.runs.len());
        if !row.failures.is_empty() {
            data_sets.push_str(&format!(" ({} failed)", row.failures.len()));
        }
        t.row([
            row.method.label().to_string(),
            setting,
            data_sets,
            spread_cell(&r1(0), 0.0),
            spread_cell(&r1(1), 0.0),
            spread_cell(&e0, 0.0),
            spread_cell(&e1, 0.0),
            format!(
                "{}, {}",
                sig(root_mean_square(&e0), 2),
                sig(root_mean_square(&e1), 2)
            ),
            format!(
                "{}, {}",
                sig(quantile_of(&row.mean_error_exact(0, exact), 0.5), 2),
                sig(quantile_of(&row.mean_error_exact(1, exact), 0.5), 2)
            ),
        ]);
    }
    t
}

/// The paper's printed values against the exact posterior's spread over data sets: for each
/// method and coordinate, the printed value and the percentage of data sets on which an exact
/// sampler scores at most that under reading 2 (|mean − truth|) and reading 1 (as in
/// [`spread_table`]). 100 % under both readings: no correct sampler on any of the data sets
/// scores that high; 0 %: none scores that low.
pub fn paper_percentile_table(
    names: [&str; 2],
    exact: &[ExactSet],
    paper: &[(Method, [f64; 2])],
    truth: [f64; 2],
    about_truth: bool,
) -> Table {
    let mut t = Table::new([
        "method".to_string(),
        format!("paper {}", names[0]),
        format!("percentile, reading 2 {}", names[0]),
        format!("percentile, reading 1 {}", names[0]),
        format!("paper {}", names[1]),
        format!("percentile, reading 2 {}", names[1]),
        format!("percentile, reading 1 {}", names[1]),
    ]);
    let r1 = |j: usize| -> Vec<f64> {
        exact
            .iter()
            .map(|e| {
                let centre = if about_truth { truth[j] } else { e.mean[j] };
                (e.sd[j].powi(2) + (e.mean[j] - centre).powi(2)).sqrt()
            })
            .collect()
    };
    let r2 =
        |j: usize| -> Vec<f64> { exact.iter().map(|e| (e.mean[j] - truth[j]).abs()).collect() };
    let (a0, a1, b0, b1) = (r1(0), r1(1), r2(0), r2(1));
    for (method, values) in paper {
        t.row([
            method.label().to_string(),
            format!("{}", values[0]),
            format!("{:.0} %", percentile_rank(&b0, values[0])),
            format!("{:.0} %", percentile_rank(&a0, values[0])),
            format!("{}", values[1]),
            format!("{:.0} %", percentile_rank(&b1, values[1])),
            format!("{:.0} %", percentile_rank(&a1, values[1])),
        ]);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::mixture_logistic::synthetic_2d;

    /// The gradient-only path of the logistic regression equals the model's own batched one, on
    /// all rows and on a minibatch.
    #[test]
    fn logistic_gradient_matches_the_model() {
        let m = synthetic_2d(300, 1);
        let w = [0.7, -1.2];
        let rows: Vec<usize> = (0..300).step_by(7).collect();
        for batch in [None, Some(rows.as_slice())] {
            let (mut a, mut b) = ([0.0; 2], [0.0; 2]);
            BatchedPosterior::gradient(&m, &w, batch, &mut a);
            let u = match batch {
                None => m.batch(&w, 0..300, 1.0, Some(&mut b)),
                Some(r) => m.batch(&w, r.iter().copied(), 300.0 / r.len() as f64, Some(&mut b)),
            };
            assert!((BatchedPosterior::energy(&m, &w, batch) - u).abs() < 1e-9 * u.abs());
            for j in 0..2 {
                assert!(
                    (a[j] - b[j]).abs() < 1e-9 * (1.0 + b[j].abs()),
                    "{a:?} {b:?}"
                );
            }
        }
    }
}
