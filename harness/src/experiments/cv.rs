//! `cv`: control-variate gradients (SGLD-, SGHMC-, SGNHT-CV; Baker, Fearnhead, Fox & Nemeth 2019) and SVRG-SGLD (Dubey et al. 2016) against the plain minibatch samplers on Bayesian logistic regression: gradient variance, posterior moments against full-batch HMC, cost, and test log-loss against passes through the data (issue 34).
//!
//! Data: Pima (8 weights, N = 426) and breast cancer (31, N = 455), the `blr` experiment's
//! training splits, and a synthetic set with N = 20 000 training rows and 10 weights
//! ([`crate::models::logistic_regression::synthetic`]); standardised features, an intercept,
//! prior N(0, 10 I).
//!
//! * **Reference**: `calibration`'s full-batch HMC ([`calibration::reference_draws`]: dense mass
//!   H⁻¹, 4 × 5000 draws), which also gives the posterior draws of the variance measurement and
//!   the reference test log-loss.
//! * **Centring value θ̂** ([`centre`]): Adam ([`sgmcmc::variance::Adam`]) from θ = 0 on the
//!   plain minibatch gradient at b = [`BATCH`] (Baker et al. find θ̂ with a stochastic optimiser),
//!   in the stages [`ADAM_STAGES`] of decreasing rate, θ̂ the average of the last stage's
//!   iterates. Its cost in passes and its Mahalanobis distance from the mode,
//!   √((θ̂ − ŵ)ᵀH(θ̂ − ŵ)), are reported: a typical posterior draw is √d from ŵ in that norm, and
//!   the control variate's variance at a draw grows like E|θ − θ̂|²_H ≈ d + |θ̂ − ŵ|²_H.
//! * **Gradient variance** ([`variance_at`]) at [`VARIANCE_DRAWS`] reference draws: the exact
//!   covariance trace of the minibatch estimate (b rows without replacement,
//!   V = N(N − b)S/b, S the per-example covariance over the N rows) for the plain estimate
//!   (per-example terms gᵢ(θ)) and the control variate (gᵢ(θ) − gᵢ(θ̂)); beside it the
//!   Lipschitz bound of the CV's (σ′ ≤ ¼, so |gᵢ(θ) − gᵢ(θ̂)| ≤ |xᵢ|·|xᵢᵀ(θ − θ̂)|/4), and the
//!   empirical variance of [`VARIANCE_REPS`] draws of each estimator as the sampler sees it
//!   (`PairedMinibatches`, `ControlVariate`): the check that the code is the formula.
//! * **Chains** at b = 32: SGLD, SGHMC and SGNHT, each plain and with the control variate
//!   (SGLD-CV, SGHMC-CV, SGNHT-CV), and SVRG-SGLD (refresh every N/b steps). The momentum
//!   samplers run with `calibration`'s settings (splitting integrator, A = 1, ξ₀ = A,
//!   h = 0.2/ω_max) and again with A = 0.1/h (the SGD-with-momentum form's momentum 0.9,
//!   [`Kind::SghmcDamped`]): minibatch noise B = ½hV heats SGHMC's momentum to a temperature
//!   of about 1 + B/A, so at A = 1 even a small V matters once h is small (large N). SGLD runs
//!   at h = 0.1/ω_max² (the Euler–Maruyama variance bias along the stiffest direction,
//!   1/(1 − hλ_max/2) − 1, is 5 %: 2.6 % in sd). [`CHAINS`] chains per sampler, chain c of
//!   every sampler from the same N(ŵ, H⁻¹) draw and momentum and with the same seeds; the first
//!   fifth discarded, at most [`MAX_KEPT`] draws kept per chain. Reported: the worst weight's sd
//!   ratio and mean error against the reference ([`calibration::worst`]); the per-example
//!   gradients per step (b plain, 2b CV, 2b + b SVRG) and the one-off passes (Adam's and the
//!   full gradient at θ̂); the wall-clock ns per step, both as measured in the moment runs
//!   (which share the two cores) and alone ([`TIMING_STEPS`] steps, the least of three).
//! * **Figure** (Baker et al.'s passes-through-the-data comparison): every sampler from a cold
//!   start, θ = 0 (the optimiser's start), the CV samplers from θ̂ after paying Adam's passes and
//!   one full pass, SVRG from θ = 0 with its first full gradient there; all given the same budget
//!   of passes ([`Setup::figure_passes`]). At checkpoints 2^{1/4} apart, over the draws of the
//!   second half of the run so far (weighted by their thinning stride) pooled over the chains:
//!   the test log-loss of the posterior-predictive average p̄(x) = mean σ(θᵀx), and the moment
//!   error, max over the weights of |mean − reference mean|/reference sd and |sd/reference sd −
//!   1|, both against the passes spent (per-example gradients / N, one-off costs included).
//!   The moment error is what shows the posterior: a predictive log-loss barely moves when the
//!   posterior is too wide by a factor of a few, if the posterior is narrow (N large).

use super::calibration::{
    self, Posterior, Reference, WeightMoments, largest_eigenvalue, median_sd_ratio, worst,
};
use super::common::{ExperimentError, RunOptions, sig};
use crate::models::logistic_regression::{
    DataSet, Design, Laplace, LogisticRegression, PRIOR_VARIANCE, PairedMinibatches, data_dir,
    sigmoid, synthetic,
};
use crate::plot::{Chart, Scale, Series, line_chart};
use crate::report::Table;
use indicatif::ProgressBar;
use rand_pcg::Pcg64;
use sgmcmc::linalg::spd_inverse;
use sgmcmc::prelude::*;
use sgmcmc::rng::fill_standard_normal;
use sgmcmc::variance::{Adam, ControlVariate};
use std::time::Instant;

/// Minibatch rows b.
pub const BATCH: usize = 32;
/// Chains per sampler (moment runs).
pub const CHAINS: usize = 4;
/// Chains per sampler of the figure runs (more than the moment runs': a window of half a
/// short run is all a checkpoint has).
pub const FIGURE_CHAINS: usize = 8;
/// SGLD's step size in units of 1/λ_max = 1/ω_max².
pub const SGLD_FACTOR: f64 = 0.1;
/// Adam's stages (rate, steps) on b = 32 minibatches from θ = 0; θ̂ is the average of the last
/// stage's iterates. The same recipe on every data set: its cost in passes is b/N per step.
/// Chosen from a scan of recipes (seeds 0–3) for the distance |θ̂ − ŵ|_H it buys per pass:
/// 0.2–0.3 on Pima, 1.4–1.6 on breast cancer, 1.9–2.2 on the synthetic set, where 5000 steps
/// at 0.005 gave 0.7–1.4 for 8.8 passes; since the CV's variance goes as d + |θ̂ − ŵ|²_H, the
/// cheaper recipe costs at most 40 % (synthetic, d = 10) of variance.
pub const ADAM_STAGES: [(f64, usize); 2] = [(0.05, 500), (0.005, 1500)];
/// The momentum weight m = Ah of the second SGHMC and SGNHT ([`Kind::SghmcDamped`],
/// [`Kind::SgnhtDamped`]).
pub const DAMPED_MOMENTUM: f64 = 0.1;
/// Reference draws at which the gradient variance is measured (quick: a quarter).
pub const VARIANCE_DRAWS: usize = 40;
/// Draws of each estimator for its empirical variance (quick: a quarter).
pub const VARIANCE_REPS: usize = 2000;
/// At most this many draws kept per chain (thinned evenly).
pub const MAX_KEPT: usize = 10_000;
/// The target for the moments: every weight's mean within this many reference sds,
/// every sd within this fraction of the reference's (the figure's dashed line).
pub const MOMENT_TOLERANCE: f64 = 0.1;
/// A figure run is "at the posterior" once its moment error stays below this: twice the
/// target, since the window's own Monte Carlo error (eight chains, the second half of the
/// run) is still 0.05–0.1 at the end of the budget.
pub const REACHED: f64 = 0.2;
/// Steps of each sampler's timing runs (quick: a tenth), three in a row, alone.
pub const TIMING_STEPS: usize = 20_000;

/// A data set of the experiment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Data {
    /// Pima Indians diabetes (N = 426, 8 weights).
    Pima,
    /// Breast cancer Wisconsin (N = 455, 31 weights).
    BreastCancer,
    /// The synthetic logistic regression (N = 20 000, 10 weights).
    Synthetic,
}

impl Data {
    /// All three, in the order of the tables.
    pub const ALL: [Data; 3] = [Data::Pima, Data::BreastCancer, Data::Synthetic];

    /// A lowercase name for tables and file names.
    pub fn name(self) -> &'static str {
        match self {
            Data::Pima => "pima",
            Data::BreastCancer => "breast-cancer",
            Data::Synthetic => "synthetic",
        }
    }

    /// The training and held-out designs.
    pub fn load(self) -> Result<(Design, Design), ExperimentError> {
        let real = |ds: DataSet| {
            ds.load(&data_dir())
                .map_err(|e| ExperimentError::Io(e.to_string()))
        };
        match self {
            Data::Pima => real(DataSet::Pima),
            Data::BreastCancer => real(DataSet::BreastCancer),
            Data::Synthetic => Ok(synthetic()),
        }
    }
}

/// A posterior with its curvature and step sizes.
#[derive(Clone, Debug)]
pub struct Setup {
    /// The data set.
    pub data: Data,
    /// The posterior on the training rows.
    pub model: LogisticRegression,
    /// The held-out rows of the log-loss.
    pub test: Design,
    /// Its Laplace approximation.
    pub laplace: Laplace,
    /// The Hessian H of U at the mode (row-major).
    pub hessian: Vec<f64>,
    /// H⁻¹ (row-major).
    pub cov: Vec<f64>,
    /// ω_max and ω_min: square roots of H's extreme eigenvalues.
    pub omega: (f64, f64),
    /// The momentum samplers' step 0.2/ω_max (`calibration`'s).
    pub h: f64,
    /// SGLD's step [`SGLD_FACTOR`]/ω_max².
    pub h_sgld: f64,
}

impl Setup {
    /// Loads `data`, its Laplace approximation and curvature.
    pub fn load(data: Data) -> Result<Self, ExperimentError> {
        let (train, test) = data.load()?;
        let model = LogisticRegression::new(train, PRIOR_VARIANCE);
        let laplace = model.laplace().ok_or_else(|| {
            ExperimentError::Invalid(format!("{}: no Laplace approximation", data.name()))
        })?;
        let d = model.dim();
        let hessian = model.hessian(&laplace.mode);
        let mut cov = vec![0.0; d * d];
        spd_inverse(&hessian, d, &mut cov)
            .map_err(|e| ExperimentError::Invalid(format!("{}: Hessian: {e}", data.name())))?;
        let lambda_max = largest_eigenvalue(&hessian, d);
        let lambda_min = 1.0 / largest_eigenvalue(&cov, d);
        let omega = (lambda_max.sqrt(), lambda_min.sqrt());
        Ok(Setup {
            data,
            model,
            test,
            laplace,
            hessian,
            cov,
            omega,
            h: calibration::STEP_FACTOR / omega.0,
            h_sgld: SGLD_FACTOR / lambda_max,
        })
    }

    /// Weights d.
    pub fn dim(&self) -> usize {
        self.model.dim()
    }

    /// Training rows N.
    pub fn rows(&self) -> usize {
        self.model.len()
    }

    /// κ = ω_max/ω_min.
    pub fn kappa(&self) -> f64 {
        self.omega.0 / self.omega.1
    }

    /// What the reference HMC needs.
    pub fn posterior(&self) -> Posterior<'_> {
        Posterior {
            label: self.data.name(),
            model: &self.model,
            mode: &self.laplace.mode,
            cov: &self.cov,
        }
    }

    /// Steps per chain of the moment runs. The momentum samplers: `calibration`'s
    /// 2500 κ^1.5 within [40 000, 320 000]. SGLD relaxes along the flattest direction in
    /// 1/(hλ_min) = 10κ² steps at h = 0.1/λ_max: 4000 κ² steps (400 relaxation times) within
    /// [40 000, 2 000 000]. Quick: a fifth.
    pub fn steps(&self, kind: Kind, quick: bool) -> usize {
        let kappa = self.kappa();
        let steps = match kind {
            Kind::Sgld => ((4000.0 * kappa * kappa) as usize).clamp(40_000, 2_000_000),
            Kind::Sghmc | Kind::SghmcDamped | Kind::Sgnht | Kind::SgnhtDamped => {
                ((2500.0 * kappa.powf(1.5)) as usize).clamp(40_000, 320_000)
            }
        };
        if quick { steps / 5 } else { steps }
    }

    /// The figure's budget in passes: half the momentum samplers' moment-run steps at b rows
    /// each, and at least 100 passes (quick: of the quick steps, at least 10).
    pub fn figure_passes(&self, quick: bool) -> f64 {
        let steps = self.steps(Kind::Sghmc, quick) / 2;
        let passes = (steps * BATCH) as f64 / self.rows() as f64;
        passes.max(if quick { 10.0 } else { 100.0 })
    }

    /// √((a − b)ᵀH(a − b)): the distance in posterior sds (Laplace).
    pub fn mahalanobis(&self, a: &[f64], b: &[f64]) -> f64 {
        let d = self.dim();
        let delta: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
        let mut q = 0.0;
        for r in 0..d {
            for c in 0..d {
                q += delta[r] * self.hessian[r * d + c] * delta[c];
            }
        }
        q.max(0.0).sqrt()
    }
}

/// The sampler's dynamics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// SGLD at h = 0.1/ω_max².
    Sgld,
    /// SGHMC, friction A = 1, splitting, h = 0.2/ω_max.
    Sghmc,
    /// SGHMC with the friction A = 0.1/h, splitting, h = 0.2/ω_max: in Chen 2016's
    /// SGD-with-momentum form (learning rate h², momentum weight m = Ah) the usual momentum 0.9,
    /// m = 0.1. The minibatch noise B = ½hV heats SGHMC's momentum to a temperature of about
    /// 1 + B/A, so the larger A leaves less of it (at the price of overdamping the flat
    /// directions).
    SghmcDamped,
    /// SGNHT, diffusion A = 1, ξ₀ = 1, splitting, h = 0.2/ω_max.
    Sgnht,
    /// SGNHT with the diffusion A = ξ₀ = 0.1/h (as [`Kind::SghmcDamped`]), splitting,
    /// h = 0.2/ω_max.
    SgnhtDamped,
}

/// The gradient estimate a sampler runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Estimate {
    /// The plain minibatch estimate ∇Ũ_S(θ).
    Plain,
    /// The control variate ∇U(θ̂) + ∇Ũ_S(θ) − ∇Ũ_S(θ̂) around Adam's θ̂ (Baker et al. 2019).
    ControlVariate,
    /// SVRG: the control variate with θ̂ moved to the current θ every N/b steps (Dubey et al.
    /// 2016).
    Svrg,
}

/// One sampler of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// Dynamics.
    pub kind: Kind,
    /// Gradient estimate.
    pub estimate: Estimate,
}

impl Config {
    /// Its colour in the figures (one per dynamics and friction; SVRG its own) and whether
    /// it is dashed (the variance-reduced estimates).
    pub fn style(self) -> (usize, bool) {
        let colour = match (self.kind, self.estimate) {
            (_, Estimate::Svrg) => 6,
            (Kind::Sgld, _) => 1,
            (Kind::Sghmc, _) => 2,
            (Kind::SghmcDamped, _) => 3,
            (Kind::Sgnht, _) => 4,
            (Kind::SgnhtDamped, _) => 5,
        };
        (colour, self.estimate != Estimate::Plain)
    }

    /// Its name in tables and figures.
    pub fn name(self) -> &'static str {
        match (self.kind, self.estimate) {
            (Kind::Sgld, Estimate::Plain) => "SGLD",
            (Kind::Sgld, Estimate::ControlVariate) => "SGLD-CV",
            (Kind::Sgld, Estimate::Svrg) => "SVRG-SGLD",
            (Kind::Sghmc, Estimate::Plain) => "SGHMC",
            (Kind::Sghmc, Estimate::ControlVariate) => "SGHMC-CV",
            (Kind::Sghmc, Estimate::Svrg) => "SVRG-SGHMC",
            (Kind::SghmcDamped, Estimate::Plain) => "SGHMC (Ah = 0.1)",
            (Kind::SghmcDamped, Estimate::ControlVariate) => "SGHMC-CV (Ah = 0.1)",
            (Kind::SghmcDamped, Estimate::Svrg) => "SVRG-SGHMC (Ah = 0.1)",
            (Kind::Sgnht, Estimate::Plain) => "SGNHT",
            (Kind::Sgnht, Estimate::ControlVariate) => "SGNHT-CV",
            (Kind::Sgnht, Estimate::Svrg) => "SVRG-SGNHT",
            (Kind::SgnhtDamped, Estimate::Plain) => "SGNHT (Ah = 0.1)",
            (Kind::SgnhtDamped, Estimate::ControlVariate) => "SGNHT-CV (Ah = 0.1)",
            (Kind::SgnhtDamped, Estimate::Svrg) => "SVRG-SGNHT (Ah = 0.1)",
        }
    }
}

/// The samplers, plain beside control variate.
pub const CONFIGS: [Config; 11] = [
    Config {
        kind: Kind::Sgld,
        estimate: Estimate::Plain,
    },
    Config {
        kind: Kind::Sgld,
        estimate: Estimate::ControlVariate,
    },
    Config {
        kind: Kind::Sgld,
        estimate: Estimate::Svrg,
    },
    Config {
        kind: Kind::Sghmc,
        estimate: Estimate::Plain,
    },
    Config {
        kind: Kind::Sghmc,
        estimate: Estimate::ControlVariate,
    },
    Config {
        kind: Kind::SghmcDamped,
        estimate: Estimate::Plain,
    },
    Config {
        kind: Kind::SghmcDamped,
        estimate: Estimate::ControlVariate,
    },
    Config {
        kind: Kind::Sgnht,
        estimate: Estimate::Plain,
    },
    Config {
        kind: Kind::Sgnht,
        estimate: Estimate::ControlVariate,
    },
    Config {
        kind: Kind::SgnhtDamped,
        estimate: Estimate::Plain,
    },
    Config {
        kind: Kind::SgnhtDamped,
        estimate: Estimate::ControlVariate,
    },
];

/// Adam's centring value and its cost.
#[derive(Clone, Debug)]
pub struct Centre {
    /// θ̂.
    pub theta: Vec<f64>,
    /// Adam's steps.
    pub steps: usize,
    /// The per-example gradients they evaluated.
    pub per_example: u64,
    /// √((θ̂ − ŵ)ᵀH(θ̂ − ŵ)).
    pub distance: f64,
}

impl Centre {
    /// Adam's cost in passes through the N rows.
    pub fn passes(&self, rows: usize) -> f64 {
        self.per_example as f64 / rows as f64
    }
}

/// θ̂ by Adam on b = [`BATCH`] minibatches from θ = 0 ([`ADAM_STAGES`]; module docs).
pub fn centre(setup: &Setup, seed: u64) -> Result<Centre, ExperimentError> {
    centre_with(setup, seed, &ADAM_STAGES)
}

/// θ̂ by Adam on b = [`BATCH`] minibatches from θ = 0 in the stages (rate, steps) of `stages`
/// (at least one), θ̂ the average of the last stage's iterates.
pub fn centre_with(
    setup: &Setup,
    seed: u64,
    stages: &[(f64, usize)],
) -> Result<Centre, ExperimentError> {
    let d = setup.dim();
    let mut minibatches = PairedMinibatches::new(&setup.model, BATCH, seed);
    let mut theta = vec![0.0; d];
    let mut work = vec![0.0; Adam::<f64>::workspace_len(d)];
    let mut average = vec![0.0; d];
    let mut steps = 0;
    let last = stages.len().saturating_sub(1);
    let named = |e: RunError| ExperimentError::Step(format!("{} Adam", setup.data.name()), e.error);
    for (k, &(rate, stage_steps)) in stages.iter().enumerate() {
        let mut adam = Adam::new(rate, &mut theta, &mut work)
            .map_err(|e| ExperimentError::Invalid(format!("Adam: {e}")))?;
        if k < last {
            adam.run(&mut minibatches, stage_steps as u64)
                .map_err(named)?;
        } else {
            // Polyak–Ruppert averaging of the last stage: the iterates of a constant-rate
            // stochastic optimiser fluctuate about the mode; their average much less.
            for completed in 0..stage_steps {
                adam.step(&mut minibatches).map_err(|error| {
                    named(RunError {
                        completed: completed as u64,
                        error,
                    })
                })?;
                for (a, t) in average.iter_mut().zip(adam.position()) {
                    *a += t / stage_steps as f64;
                }
            }
        }
        steps += stage_steps;
    }
    Ok(Centre {
        distance: setup.mahalanobis(&average, &setup.laplace.mode),
        theta: average,
        steps,
        per_example: minibatches.per_example_gradients(),
    })
}

/// The gradient estimates' variance at one θ (traces of the covariance matrices).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VarianceAt {
    /// √((θ − ŵ)ᵀH(θ − ŵ)).
    pub distance: f64,
    /// tr V of the plain estimate (exact).
    pub plain: f64,
    /// tr V of the control variate around θ̂ (exact).
    pub cv: f64,
    /// The Lipschitz bound on [`VarianceAt::cv`]: N(N − b)/(b(N − 1)) Σᵢ |xᵢ|²(xᵢᵀ(θ − θ̂))²/16.
    pub cv_bound: f64,
    /// tr of the plain estimate's sample covariance over the repetitions.
    pub plain_empirical: f64,
    /// tr of the control variate's sample covariance over the repetitions.
    pub cv_empirical: f64,
    /// The standard error of [`VarianceAt::plain_empirical`]: the trace is the mean of the
    /// repetitions' |g − ḡ|², whose sd over √reps this is.
    pub plain_empirical_se: f64,
    /// The standard error of [`VarianceAt::cv_empirical`], likewise.
    pub cv_empirical_se: f64,
}

/// The variance of the plain minibatch estimate and of the control variate around `centre` at
/// `theta` for minibatches of `batch` rows without replacement: the exact traces, the bound,
/// and `reps` draws of each estimator through [`PairedMinibatches`] and [`ControlVariate`]
/// (seeded by `seed`). `distance` is left 0 (the caller knows the mode).
pub fn variance_at(
    model: &LogisticRegression,
    centre: &[f64],
    theta: &[f64],
    batch: usize,
    reps: usize,
    seed: u64,
) -> Result<VarianceAt, ExperimentError> {
    let (n, d) = (model.len(), model.dim());
    let data = &model.data;
    // Per-example terms gᵢ(θ) and gᵢ(θ) − gᵢ(θ̂): their means and sums of squares.
    let (mut mean_p, mut mean_c) = (vec![0.0; d], vec![0.0; d]);
    let mut terms_p = vec![0.0; n * d];
    let mut terms_c = vec![0.0; n * d];
    let mut bound = 0.0;
    for i in 0..n {
        let x = data.row(i);
        let z: f64 = x.iter().zip(theta).map(|(a, b)| a * b).sum();
        let zc: f64 = x.iter().zip(centre).map(|(a, b)| a * b).sum();
        let r = sigmoid(z) - data.y[i];
        let rc = sigmoid(zc) - data.y[i];
        let norm2: f64 = x.iter().map(|v| v * v).sum();
        bound += norm2 * (z - zc) * (z - zc) / 16.0;
        for j in 0..d {
            terms_p[i * d + j] = r * x[j];
            terms_c[i * d + j] = (r - rc) * x[j];
            mean_p[j] += r * x[j] / n as f64;
            mean_c[j] += (r - rc) * x[j] / n as f64;
        }
    }
    let trace = |terms: &[f64], mean: &[f64]| -> f64 {
        let mut s = 0.0;
        for i in 0..n {
            for j in 0..d {
                s += (terms[i * d + j] - mean[j]).powi(2);
            }
        }
        s / (n as f64 - 1.0)
    };
    let b = batch.min(n) as f64;
    let nf = n as f64;
    let scale = nf * (nf - b) / b;
    let plain = scale * trace(&terms_p, &mean_p);
    let cv = scale * trace(&terms_c, &mean_c);
    let cv_bound = scale * bound / (nf - 1.0);

    // The estimators as the samplers see them: the trace of the sample covariance is the mean
    // of q = |g − ḡ|² (times r/(r − 1)), and its standard error that of the q's mean.
    let sample_trace = |draws: &[Vec<f64>]| -> (f64, f64) {
        let r = draws.len() as f64;
        let mean: Vec<f64> = (0..d)
            .map(|j| draws.iter().map(|g| g[j]).sum::<f64>() / r)
            .collect();
        let q: Vec<f64> = draws
            .iter()
            .map(|g| {
                g.iter()
                    .zip(&mean)
                    .map(|(a, m)| (a - m).powi(2))
                    .sum::<f64>()
            })
            .collect();
        let q_mean = q.iter().sum::<f64>() / r;
        let q_var = q.iter().map(|v| (v - q_mean).powi(2)).sum::<f64>() / (r - 1.0);
        let correction = r / (r - 1.0);
        (q_mean * correction, (q_var / r).sqrt() * correction)
    };
    let mut plain_model = PairedMinibatches::new(model, batch, seed);
    let plain_draws: Vec<Vec<f64>> = (0..reps)
        .map(|_| {
            let mut g = vec![0.0; d];
            plain_model.gradient(theta, &mut g);
            g
        })
        .collect();
    let mut paired = PairedMinibatches::new(model, batch, seed ^ 0xc0de);
    let mut work = vec![0.0; ControlVariate::<f64, &mut PairedMinibatches>::workspace_len(d)];
    let mut estimate = ControlVariate::new(&mut paired, centre, &mut work)
        .map_err(|e| ExperimentError::Invalid(format!("control variate: {e}")))?;
    let cv_draws: Vec<Vec<f64>> = (0..reps)
        .map(|_| {
            let mut g = vec![0.0; d];
            estimate.gradient(theta, &mut g);
            g
        })
        .collect();
    let (plain_empirical, plain_empirical_se) = sample_trace(&plain_draws);
    let (cv_empirical, cv_empirical_se) = sample_trace(&cv_draws);
    Ok(VarianceAt {
        distance: 0.0,
        plain,
        cv,
        cv_bound,
        plain_empirical,
        cv_empirical,
        plain_empirical_se,
        cv_empirical_se,
    })
}

/// The per-example gradients a gradient has evaluated so far.
trait Counted {
    fn per_example(&mut self) -> u64;
}

impl Counted for PairedMinibatches<'_> {
    fn per_example(&mut self) -> u64 {
        self.per_example_gradients()
    }
}

impl Counted for ControlVariate<'_, f64, &mut PairedMinibatches<'_>> {
    fn per_example(&mut self) -> u64 {
        self.model_mut().per_example_gradients()
    }
}

/// What a chain sees at every step: (steps completed, θ, per-example gradients so far).
type Observe<'o> = dyn FnMut(usize, &[f64], u64) + 'o;

/// Steps `sampler` and hands every step to `observe`; returns the wall-clock ns per step.
fn drive<S, G>(
    sampler: &mut S,
    model: &mut G,
    rng: &mut Pcg64,
    steps: usize,
    pb: &ProgressBar,
    observe: &mut Observe<'_>,
) -> Result<f64, StepError>
where
    S: Sampler<f64, G>,
    G: Counted,
{
    let start = Instant::now();
    for t in 0..steps {
        sampler.step(model, rng)?;
        observe(t + 1, sampler.position(), model.per_example());
        if t % 4096 == 4095 {
            pb.inc(4096);
        }
    }
    pb.inc((steps % 4096) as u64);
    Ok(start.elapsed().as_nanos() as f64 / steps.max(1) as f64)
}

/// Builds the sampler of `kind` on θ and p and drives it on `model`.
#[allow(clippy::too_many_arguments)] // one chain's whole configuration, used twice
fn run_kind<G>(
    setup: &Setup,
    kind: Kind,
    theta: &mut [f64],
    p: &mut [f64],
    model: &mut G,
    rng: &mut Pcg64,
    steps: usize,
    pb: &ProgressBar,
    observe: &mut Observe<'_>,
) -> Result<f64, StepError>
where
    G: Gradient<f64> + Counted,
{
    let d = theta.len();
    let mut work = vec![0.0; 2 * d];
    let integrator = Integrator::Splitting;
    match kind {
        Kind::Sgld => {
            let params = SgldParams::new(setup.h_sgld);
            let mut s = Sgld::new(params, theta, &mut work).expect("valid settings");
            drive(&mut s, model, rng, steps, pb, observe)
        }
        Kind::Sghmc | Kind::SghmcDamped => {
            let friction = if kind == Kind::Sghmc {
                1.0
            } else {
                DAMPED_MOMENTUM / setup.h
            };
            let params = SghmcParams::new(setup.h)
                .with_friction(friction)
                .with_integrator(integrator);
            let mut s = Sghmc::new(params, theta, p, &mut work).expect("valid settings");
            drive(&mut s, model, rng, steps, pb, observe)
        }
        Kind::Sgnht | Kind::SgnhtDamped => {
            let mut xi = [0.0];
            let diffusion = if kind == Kind::Sgnht {
                1.0
            } else {
                DAMPED_MOMENTUM / setup.h
            };
            let params = SgnhtParams::new(setup.h)
                .with_diffusion(diffusion)
                .with_integrator(integrator);
            let mut s = Sgnht::new(params, theta, p, &mut xi, &mut work).expect("valid settings");
            drive(&mut s, model, rng, steps, pb, observe)
        }
    }
}

/// The SVRG refresh period: one epoch, N/b steps (our choice; Dubey et al. 2016 leave the
/// period a tuning parameter).
pub fn svrg_period(rows: usize) -> u64 {
    (rows / BATCH).max(1) as u64
}

/// Where a chain starts.
struct Start {
    theta: Vec<f64>,
    p: Vec<f64>,
    /// The control variate's θ̂ (unused by a plain run; SVRG's first snapshot is `theta`).
    centre: Vec<f64>,
}

/// One chain of `config` from `start`, its gradient's minibatches and its noise seeded by
/// `seed`; returns (ns per step, per-example gradients in total).
fn run_chain(
    setup: &Setup,
    config: Config,
    start: &Start,
    steps: usize,
    seed: u64,
    pb: &ProgressBar,
    observe: &mut Observe<'_>,
) -> Result<(f64, u64), ExperimentError> {
    let d = setup.dim();
    let named = |e| ExperimentError::Step(format!("{} {}", setup.data.name(), config.name()), e);
    let mut minibatches = PairedMinibatches::new(&setup.model, BATCH, seed ^ 0xba7c4);
    let mut rng = Pcg64::new(seed as u128, 0xc5);
    let mut theta = start.theta.clone();
    let mut p = start.p.clone();
    let kind = config.kind;
    let ns = match config.estimate {
        Estimate::Plain => run_kind(
            setup,
            kind,
            &mut theta,
            &mut p,
            &mut minibatches,
            &mut rng,
            steps,
            pb,
            observe,
        )
        .map_err(named)?,
        Estimate::ControlVariate | Estimate::Svrg => {
            let mut work =
                vec![0.0; ControlVariate::<f64, &mut PairedMinibatches>::workspace_len(d)];
            let centre = if config.estimate == Estimate::Svrg {
                &start.theta
            } else {
                &start.centre
            };
            let invalid = |e: &dyn std::fmt::Display| {
                ExperimentError::Invalid(format!("{} {}: {e}", setup.data.name(), config.name()))
            };
            let cv = ControlVariate::new(&mut minibatches, centre, &mut work)
                .map_err(|e| invalid(&e))?;
            let mut cv = if config.estimate == Estimate::Svrg {
                cv.with_refresh(svrg_period(setup.rows()))
                    .map_err(|e| invalid(&e))?
            } else {
                cv
            };
            run_kind(
                setup, kind, &mut theta, &mut p, &mut cv, &mut rng, steps, pb, observe,
            )
            .map_err(named)?
        }
    };
    Ok((ns, minibatches.per_example_gradients()))
}

/// One sampler's moment runs, pooled over its chains.
#[derive(Clone, Debug)]
pub struct RunResult {
    /// The sampler.
    pub config: Config,
    /// Steps per chain.
    pub steps: usize,
    /// Moments of the kept draws.
    pub moments: WeightMoments,
    /// Wall-clock ns per step (mean over the chains; gradient included), measured in the moment
    /// runs, which share the two cores.
    pub ns_per_step: f64,
    /// Wall-clock ns per step of [`TIMING_STEPS`] steps run alone, the least of three.
    pub ns_alone: f64,
    /// Per-example gradients per step, one-off full gradients excluded (SVRG's refreshes
    /// included).
    pub per_step: f64,
    /// One-off passes: Adam's and the full gradient at θ̂ (CV), the first full gradient
    /// (SVRG), none (plain).
    pub one_off_passes: f64,
}

/// One checkpoint of a figure run, pooled over the chains.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CurvePoint {
    /// Passes through the data spent (one-off costs included).
    pub passes: f64,
    /// The test log-loss of the posterior-predictive average over the window.
    pub log_loss: f64,
    /// The window's worst weight: max over the weights of |mean − reference mean|/reference sd
    /// and |sd/reference sd − 1|, whichever is larger.
    pub moment_error: f64,
}

/// One sampler's figure runs: test log-loss and moment error against passes.
#[derive(Clone, Debug)]
pub struct Curve {
    /// The sampler.
    pub config: Config,
    /// Every checkpoint.
    pub points: Vec<CurvePoint>,
}

impl Curve {
    /// The first passes from which the moment error stays within [`REACHED`] to the end;
    /// `None` if the last checkpoint is outside.
    pub fn passes_to_posterior(&self) -> Option<f64> {
        let mut first = None;
        for p in &self.points {
            if p.moment_error <= REACHED {
                first.get_or_insert(p.passes);
            } else {
                first = None;
            }
        }
        first
    }

    /// The last checkpoint.
    pub fn last(&self) -> Option<CurvePoint> {
        self.points.last().copied()
    }
}

/// One data set's results.
#[derive(Clone, Debug)]
pub struct DataResult {
    /// The posterior.
    pub setup: Setup,
    /// The HMC reference.
    pub reference: Reference,
    /// The reference's test log-loss (posterior-predictive average over its draws).
    pub reference_log_loss: f64,
    /// Adam's θ̂.
    pub centre: Centre,
    /// The variance at the reference draws.
    pub variance: Vec<VarianceAt>,
    /// The moment runs.
    pub runs: Vec<RunResult>,
    /// The figure runs.
    pub curves: Vec<Curve>,
}

/// Test log-loss of predictive probabilities `p` for the labels of `test`.
pub fn log_loss(test: &Design, p: &[f64]) -> f64 {
    let eps = 1e-15;
    let total: f64 = p
        .iter()
        .zip(&test.y)
        .map(|(&p, &y)| {
            let p = p.clamp(eps, 1.0 - eps);
            -(y * p.ln() + (1.0 - y) * (1.0 - p).ln())
        })
        .sum();
    total / test.len() as f64
}

/// The predictive probabilities of every test row averaged over `draws`.
fn predictive(test: &Design, draws: &[&Vec<f64>]) -> Vec<f64> {
    let mut acc = vec![0.0; test.len()];
    for w in draws {
        crate::models::logistic_regression::add_probabilities(test, w, &mut acc);
    }
    acc.iter_mut().for_each(|a| *a /= draws.len() as f64);
    acc
}

/// The checkpoints of a figure run of `steps` steps: round(16 · 2^{j/4}) ≤ steps, so that
/// checkpoint j − 4 is (to rounding) half of checkpoint j.
pub fn checkpoints(steps: usize) -> Vec<usize> {
    (0..)
        .map(|j| (16.0 * 2f64.powf(j as f64 / 4.0)).round() as usize)
        .take_while(|&t| t <= steps)
        .collect()
}

/// A figure run's state at one checkpoint: the per-example gradients spent, the stride-weighted
/// sums over the draws so far of the test rows' predictive probabilities, of θ and of θ⊙θ (in
/// that order, one vector), and the sum of the strides.
type Mark = (u64, Vec<f64>, f64);

/// A figure run's record ([`Mark`] at every checkpoint).
struct Record<'a> {
    test: &'a Design,
    checkpoints: &'a [usize],
    next: usize,
    sums: Vec<f64>,
    weight: f64,
    marks: Vec<Mark>,
}

impl<'a> Record<'a> {
    fn new(test: &'a Design, d: usize, checkpoints: &'a [usize]) -> Self {
        Record {
            test,
            checkpoints,
            next: 0,
            sums: vec![0.0; test.len() + 2 * d],
            weight: 0.0,
            marks: Vec::with_capacity(checkpoints.len()),
        }
    }

    /// Step t's draw: kept every max(1, ⌊t/128⌋) steps (about 128 draws per doubling of t) and
    /// weighted by that stride, so that a window's weighted mean is a time average.
    fn observe(&mut self, t: usize, theta: &[f64], per_example: u64) {
        let stride = (t >> 7).max(1);
        if t.is_multiple_of(stride) {
            let m = self.test.len();
            let weight = stride as f64;
            let (predictions, moments) = self.sums.split_at_mut(m);
            for (i, s) in predictions.iter_mut().enumerate() {
                let z: f64 = self.test.row(i).iter().zip(theta).map(|(a, b)| a * b).sum();
                *s += weight * sigmoid(z);
            }
            let (first, second) = moments.split_at_mut(theta.len());
            for ((a, b), t) in first.iter_mut().zip(second.iter_mut()).zip(theta) {
                *a += weight * t;
                *b += weight * t * t;
            }
            self.weight += weight;
        }
        if self.checkpoints.get(self.next) == Some(&t) {
            self.marks
                .push((per_example, self.sums.clone(), self.weight));
            self.next += 1;
        }
    }
}

/// The curve of one sampler from its chains' marks: at checkpoint j the window from
/// checkpoint j − 4 (half the steps) to j, pooled over the chains; `offset` per-example
/// gradients spent before the chains (Adam's).
fn curve(
    setup: &Setup,
    reference: &WeightMoments,
    config: Config,
    chains: &[Vec<Mark>],
    offset: f64,
) -> Curve {
    let (m, d, n) = (setup.test.len(), setup.dim(), setup.rows() as f64);
    let marks = chains.iter().map(Vec::len).min().unwrap_or(0);
    let mut points = Vec::with_capacity(marks);
    for j in 0..marks {
        let mut sums = vec![0.0; m + 2 * d];
        let mut weight = 0.0;
        for chain in chains {
            let (_, s, w) = &chain[j];
            sums.iter_mut().zip(s).for_each(|(a, v)| *a += v);
            weight += w;
            if j >= 4 {
                let (_, s0, w0) = &chain[j - 4];
                sums.iter_mut().zip(s0).for_each(|(a, v)| *a -= v);
                weight -= w0;
            }
        }
        let p: Vec<f64> = sums[..m].iter().map(|s| s / weight).collect();
        let mut error: f64 = 0.0;
        for k in 0..d {
            let mean = sums[m + k] / weight;
            let sd = (sums[m + d + k] / weight - mean * mean).max(0.0).sqrt();
            let (ref_mean, ref_sd) = (reference.mean[k], reference.sd[k]);
            error = error
                .max((mean - ref_mean).abs() / ref_sd)
                .max((sd / ref_sd - 1.0).abs());
        }
        // Passes: the chains' mean spend (they differ only through SVRG's rounding).
        let spent = chains.iter().map(|c| c[j].0 as f64).sum::<f64>() / chains.len() as f64;
        points.push(CurvePoint {
            passes: (offset + spent) / n,
            log_loss: log_loss(&setup.test, &p),
            moment_error: error,
        });
    }
    Curve { config, points }
}

/// Runs the experiment on `data`.
pub fn run(opts: &RunOptions, data: &[Data]) -> Result<Vec<DataResult>, ExperimentError> {
    opts.prepare()?;
    let mut out = Vec::new();
    for &ds in data {
        out.push(run_data(opts, ds)?);
    }
    write(opts, &out)?;
    Ok(out)
}

fn run_data(opts: &RunOptions, ds: Data) -> Result<DataResult, ExperimentError> {
    let setup = Setup::load(ds)?;
    let (d, n) = (setup.dim(), setup.rows());
    let (reference, ref_draws) = calibration::reference_draws(&setup.posterior(), opts)?;
    let pooled: Vec<&Vec<f64>> = ref_draws.iter().flatten().collect();
    let thinned: Vec<&Vec<f64>> = pooled.iter().step_by(5).copied().collect();
    let reference_log_loss = log_loss(&setup.test, &predictive(&setup.test, &thinned));

    let centre = centre(&setup, opts.chain_seed(740, 0))?;

    // The variance at reference draws spread over the pooled chains.
    let (k, reps) = if opts.quick {
        (VARIANCE_DRAWS / 4, VARIANCE_REPS / 4)
    } else {
        (VARIANCE_DRAWS, VARIANCE_REPS)
    };
    let variance = (0..k)
        .map(|i| {
            let theta = pooled[i * pooled.len() / k];
            let v = variance_at(
                &setup.model,
                &centre.theta,
                theta,
                BATCH,
                reps,
                opts.chain_seed(750, i),
            )?;
            Ok(VarianceAt {
                distance: setup.mahalanobis(theta, &setup.laplace.mode),
                ..v
            })
        })
        .collect::<Result<Vec<_>, ExperimentError>>()?;

    // Moment runs: chain c of every sampler from the same draw and momentum, same seeds.
    let chain_opts = RunOptions {
        chains: CHAINS,
        ..opts.clone()
    };
    let starts: Vec<Start> = (0..CHAINS)
        .map(|c| {
            let mut rng = Pcg64::new(opts.chain_seed(700, c) as u128, 0x57a);
            let theta = setup.posterior().start(&mut rng);
            let mut p = vec![0.0; d];
            fill_standard_normal(&mut rng, &mut p);
            Start {
                theta,
                p,
                centre: centre.theta.clone(),
            }
        })
        .collect();
    let total: usize = CONFIGS
        .iter()
        .map(|c| setup.steps(c.kind, opts.quick))
        .sum();
    let label = format!("cv-{}", ds.name());
    let chains = chain_opts.par_chains(
        &CONFIGS,
        total / CONFIGS.len(),
        &label,
        |_, config, c, pb| {
            let steps = setup.steps(config.kind, opts.quick);
            let burn = steps / 5;
            let thin = ((steps - burn) / MAX_KEPT).max(10);
            let mut draws = Vec::with_capacity((steps - burn) / thin + 1);
            let mut keep = |t: usize, theta: &[f64], _: u64| {
                if t > burn && (t - burn).is_multiple_of(thin) {
                    draws.push(theta.to_vec());
                }
            };
            let (ns, per_example) = run_chain(
                &setup,
                *config,
                &starts[c],
                steps,
                opts.chain_seed(710, c),
                pb,
                &mut keep,
            )?;
            Ok::<_, ExperimentError>((draws, ns, per_example))
        },
    );
    let mut runs = Vec::new();
    for (config, chains) in CONFIGS.iter().zip(chains) {
        let chains: Vec<_> = chains.into_iter().collect::<Result<_, _>>()?;
        let steps = setup.steps(config.kind, opts.quick);
        let one_off = match config.estimate {
            Estimate::Plain => 0,
            Estimate::ControlVariate | Estimate::Svrg => n as u64,
        };
        let draws: Vec<Vec<Vec<f64>>> = chains.iter().map(|c| c.0.clone()).collect();
        let m = chains.len() as f64;
        let per_step = chains
            .iter()
            .map(|c| (c.2 - one_off) as f64 / steps as f64)
            .sum::<f64>()
            / m;
        runs.push(RunResult {
            config: *config,
            steps,
            moments: WeightMoments::of(&draws, d)?,
            ns_per_step: chains.iter().map(|c| c.1).sum::<f64>() / m,
            ns_alone: f64::NAN,
            per_step,
            one_off_passes: match config.estimate {
                Estimate::Plain => 0.0,
                Estimate::ControlVariate => centre.passes(n) + 1.0,
                Estimate::Svrg => 1.0,
            },
        });
    }

    // The cost alone: each sampler's chain 0, three times in a row on one thread, the least
    // (interference from anything else on the machine only ever adds time).
    let timing_steps = if opts.quick {
        TIMING_STEPS / 10
    } else {
        TIMING_STEPS
    };
    for run in runs.iter_mut() {
        let mut best = f64::INFINITY;
        for _ in 0..3 {
            let (ns, _) = run_chain(
                &setup,
                run.config,
                &starts[0],
                timing_steps,
                opts.chain_seed(760, 0),
                &ProgressBar::hidden(),
                &mut |_, _, _| {},
            )?;
            best = best.min(ns);
        }
        run.ns_alone = best;
    }

    // Figure runs: cold starts, the same budget of passes for every sampler.
    let budget = setup.figure_passes(opts.quick) * n as f64;
    let adam = centre.per_example as f64;
    let figure_steps = |config: Config| -> usize {
        let b = BATCH as f64;
        let steps = match config.estimate {
            Estimate::Plain => budget / b,
            Estimate::ControlVariate => (budget - adam - n as f64) / (2.0 * b),
            Estimate::Svrg => (budget - n as f64) / (2.0 * b + n as f64 / svrg_period(n) as f64),
        };
        (steps.max(64.0)) as usize
    };
    let cold: Vec<Start> = (0..FIGURE_CHAINS)
        .map(|c| {
            let mut rng = Pcg64::new(opts.chain_seed(720, c) as u128, 0xc01d);
            let mut p = vec![0.0; d];
            fill_standard_normal(&mut rng, &mut p);
            Start {
                theta: vec![0.0; d],
                p,
                centre: centre.theta.clone(),
            }
        })
        .collect();
    let label = format!("cv-figure-{}", ds.name());
    let max_steps = CONFIGS.iter().map(|&c| figure_steps(c)).max().unwrap_or(0);
    let figure_opts = RunOptions {
        chains: FIGURE_CHAINS,
        ..opts.clone()
    };
    let records = figure_opts.par_chains(&CONFIGS, max_steps, &label, |_, config, c, pb| {
        let steps = figure_steps(*config);
        let marks = checkpoints(steps);
        let mut start = Start {
            theta: cold[c].theta.clone(),
            p: cold[c].p.clone(),
            centre: cold[c].centre.clone(),
        };
        if config.estimate == Estimate::ControlVariate {
            // The CV samplers start where Adam ended.
            start.theta = centre.theta.clone();
        }
        let mut record = Record::new(&setup.test, d, &marks);
        let mut observe =
            |t: usize, theta: &[f64], per_example: u64| record.observe(t, theta, per_example);
        run_chain(
            &setup,
            *config,
            &start,
            steps,
            opts.chain_seed(730, c),
            pb,
            &mut observe,
        )?;
        Ok::<_, ExperimentError>(record.marks)
    });
    let mut curves = Vec::new();
    for (config, chains) in CONFIGS.iter().zip(records) {
        let chains: Vec<Vec<Mark>> = chains.into_iter().collect::<Result<_, _>>()?;
        let offset = if config.estimate == Estimate::ControlVariate {
            adam
        } else {
            0.0
        };
        curves.push(curve(&setup, &reference.moments, *config, &chains, offset));
    }

    Ok(DataResult {
        setup,
        reference,
        reference_log_loss,
        centre,
        variance,
        runs,
        curves,
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

/// The per-data-set header: the posterior, the step sizes, Adam's θ̂, the reference.
pub fn header(results: &[DataResult], quick: bool) -> Table {
    let mut t = Table::new([
        "data",
        "rows N",
        "weights",
        "κ",
        "h (SGHMC, SGNHT)",
        "h (SGLD)",
        "steps/chain (momentum / SGLD)",
        "Adam steps",
        "Adam passes",
        "|θ̂ − ŵ|_H",
        "ref. min ESS",
        "ref. test log-loss",
        "figure budget (passes)",
    ]);
    for r in results {
        let s = &r.setup;
        t.row([
            s.data.name().to_string(),
            s.rows().to_string(),
            s.dim().to_string(),
            sig(s.kappa(), 3),
            sig(s.h, 3),
            sig(s.h_sgld, 3),
            format!(
                "{} / {}",
                s.steps(Kind::Sghmc, quick),
                s.steps(Kind::Sgld, quick)
            ),
            r.centre.steps.to_string(),
            sig(r.centre.passes(s.rows()), 3),
            sig(r.centre.distance, 2),
            format!("{:.0}", r.reference.moments.min_ess),
            format!("{:.4}", r.reference_log_loss),
            sig(s.figure_passes(quick), 3),
        ]);
    }
    t
}

/// The gradient variance at the reference draws: medians over the draws.
pub fn variance_table(results: &[DataResult]) -> Table {
    let mut t = Table::new([
        "data",
        "draws",
        "median |θ − ŵ|_H",
        "tr V plain",
        "tr V CV",
        "CV/plain (median)",
        "CV/plain (min – max)",
        "Lipschitz bound / plain",
        "empirical/exact plain",
        "empirical/exact CV",
    ]);
    for r in results {
        let v = &r.variance;
        let ratios: Vec<f64> = v.iter().map(|x| x.cv / x.plain).collect();
        let lo = ratios.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = ratios.iter().copied().fold(0.0, f64::max);
        t.row([
            r.setup.data.name().to_string(),
            v.len().to_string(),
            sig(median(v.iter().map(|x| x.distance).collect()), 3),
            sig(median(v.iter().map(|x| x.plain).collect()), 3),
            sig(median(v.iter().map(|x| x.cv).collect()), 3),
            sig(median(ratios), 3),
            format!("{} – {}", sig(lo, 2), sig(hi, 2)),
            sig(median(v.iter().map(|x| x.cv_bound / x.plain).collect()), 3),
            format!(
                "{:.3}",
                median(v.iter().map(|x| x.plain_empirical / x.plain).collect())
            ),
            format!(
                "{:.3}",
                median(v.iter().map(|x| x.cv_empirical / x.cv).collect())
            ),
        ]);
    }
    t
}

/// The samplers: moments against the reference, cost, and the figure's summary.
pub fn table(results: &[DataResult]) -> Table {
    let mut t = Table::new([
        "data",
        "sampler",
        "worst sd/ref",
        "worst |Δmean|/sd",
        "median sd/ref",
        "min ESS",
        "grads/step",
        "one-off passes",
        "ns/step (run)",
        "ns/step (alone)",
        "figure: passes to moment error ≤ 0.2",
        "figure: final moment error",
        "figure: final log-loss − ref",
    ]);
    for r in results {
        for run in &r.runs {
            let (_, ratio, mean) = worst(&run.moments, &r.reference.moments);
            let curve = r.curves.iter().find(|c| c.config == run.config);
            let last = curve.and_then(Curve::last);
            let reach = curve.and_then(Curve::passes_to_posterior);
            t.row([
                r.setup.data.name().to_string(),
                run.config.name().to_string(),
                format!("{ratio:.3}"),
                format!("{mean:.3}"),
                format!("{:.3}", median_sd_ratio(&run.moments, &r.reference.moments)),
                format!("{:.0}", run.moments.min_ess),
                format!("{:.1}", run.per_step),
                sig(run.one_off_passes, 3),
                format!("{:.0}", run.ns_per_step),
                format!("{:.0}", run.ns_alone),
                reach.map_or("never".into(), |p| sig(p, 3)),
                last.map_or("–".into(), |p| format!("{:.3}", p.moment_error)),
                last.map_or("–".into(), |p| {
                    format!("{:+.4}", p.log_loss - r.reference_log_loss)
                }),
            ]);
        }
    }
    t
}

/// Writes the tables, the per-weight moments, the per-draw variances, the curves and the
/// figures into `opts.out`.
fn write(opts: &RunOptions, results: &[DataResult]) -> Result<(), ExperimentError> {
    let dir = &opts.out;
    header(results, opts.quick).write_csv(&dir.join("cv-setup.csv"))?;
    variance_table(results).write_csv(&dir.join("cv-variance.csv"))?;
    table(results).write_csv(&dir.join("cv.csv"))?;
    let mut w = csv::Writer::from_path(dir.join("cv-variance-draws.csv"))?;
    w.write_record([
        "data",
        "draw",
        "distance_H",
        "trace_plain",
        "trace_cv",
        "trace_cv_bound",
        "trace_plain_empirical",
        "trace_plain_empirical_se",
        "trace_cv_empirical",
        "trace_cv_empirical_se",
    ])?;
    for r in results {
        for (i, v) in r.variance.iter().enumerate() {
            w.write_record([
                r.setup.data.name().to_string(),
                i.to_string(),
                format!("{:.6}", v.distance),
                format!("{:.6e}", v.plain),
                format!("{:.6e}", v.cv),
                format!("{:.6e}", v.cv_bound),
                format!("{:.6e}", v.plain_empirical),
                format!("{:.6e}", v.plain_empirical_se),
                format!("{:.6e}", v.cv_empirical),
                format!("{:.6e}", v.cv_empirical_se),
            ])?;
        }
    }
    w.flush()?;
    let mut w = csv::Writer::from_path(dir.join("cv-weights.csv"))?;
    w.write_record([
        "data",
        "sampler",
        "weight",
        "mean",
        "sd",
        "mean_mcse",
        "ref_mean",
        "ref_sd",
        "ref_mean_mcse",
        "sd_ratio",
        "mean_err_sd",
    ])?;
    for r in results {
        let reference = &r.reference.moments;
        for run in &r.runs {
            let m = &run.moments;
            for j in 0..r.setup.dim() {
                w.write_record([
                    r.setup.data.name().to_string(),
                    run.config.name().to_string(),
                    j.to_string(),
                    format!("{:.6}", m.mean[j]),
                    format!("{:.6}", m.sd[j]),
                    format!("{:.6}", m.mean_mcse[j]),
                    format!("{:.6}", reference.mean[j]),
                    format!("{:.6}", reference.sd[j]),
                    format!("{:.6}", reference.mean_mcse[j]),
                    format!("{:.4}", m.sd[j] / reference.sd[j]),
                    format!("{:.4}", (m.mean[j] - reference.mean[j]) / reference.sd[j]),
                ])?;
            }
        }
    }
    w.flush()?;
    let mut w = csv::Writer::from_path(dir.join("cv-curves.csv"))?;
    w.write_record([
        "data",
        "sampler",
        "passes",
        "log_loss",
        "reference_log_loss",
        "moment_error",
    ])?;
    for r in results {
        for c in &r.curves {
            for p in &c.points {
                w.write_record([
                    r.setup.data.name().to_string(),
                    c.config.name().to_string(),
                    format!("{:.6}", p.passes),
                    format!("{:.6}", p.log_loss),
                    format!("{:.6}", r.reference_log_loss),
                    format!("{:.6}", p.moment_error),
                ])?;
            }
        }
    }
    w.flush()?;
    for r in results {
        figure(dir, r)?;
    }
    Ok(())
}

/// The figures of one data set: the test log-loss against passes (`cv-logloss-*.png`), and the
/// moment error against passes (`cv-error-*.png`).
fn figure(dir: &std::path::Path, r: &DataResult) -> Result<(), ExperimentError> {
    let name = r.setup.data.name();
    let reference = r.reference_log_loss;
    let (lo, hi) = r
        .curves
        .iter()
        .flat_map(|c| c.points.iter().map(|p| p.passes))
        .fold((f64::INFINITY, 0.0f64), |(a, b), x| (a.min(x), b.max(x)));
    for error in [false, true] {
        let mut series: Vec<Series> = r
            .curves
            .iter()
            .map(|c| {
                let points = c
                    .points
                    .iter()
                    .map(|p| {
                        let y = if error { p.moment_error } else { p.log_loss };
                        (p.passes, y)
                    })
                    .collect();
                let (colour, dashed) = c.config.style();
                Series {
                    dashed,
                    ..Series::new(c.config.name(), points, colour)
                }
            })
            .collect();
        let (title, y_label, y_scale, file) = if error {
            series.push(Series::truth(
                "target 0.1",
                vec![(lo, MOMENT_TOLERANCE), (hi, MOMENT_TOLERANCE)],
            ));
            series.push(Series {
                dashed: true,
                ..Series::new("reached 0.2", vec![(lo, REACHED), (hi, REACHED)], 8)
            });
            (
                format!("{name}: worst weight's moment error against passes (b = {BATCH})"),
                "max(|Δmean|/sd_ref, |sd/sd_ref − 1|), second half of the run",
                Scale::Log,
                format!("cv-error-{name}.png"),
            )
        } else {
            series.push(Series::truth(
                "HMC reference",
                vec![(lo, reference), (hi, reference)],
            ));
            (
                format!("{name}: test log-loss against passes through the data (b = {BATCH})"),
                "test log-loss (posterior-predictive, second half of the run)",
                Scale::Linear,
                format!("cv-logloss-{name}.png"),
            )
        };
        let chart = Chart {
            title: &title,
            x_label: "passes through the data (CV: Adam's and the full gradient included)",
            y_label,
            x_scale: Scale::Log,
            y_scale,
        };
        let path = dir.join(file);
        line_chart(&path, &chart, &series)
            .map_err(|e| ExperimentError::Io(format!("{}: {e}", path.display())))?;
    }
    Ok(())
}

/// `harness cv`: runs the data sets and returns the tables as Markdown.
pub fn cli(opts: &RunOptions, data: &[Data]) -> Result<String, ExperimentError> {
    let results = run(opts, data)?;
    Ok(format!(
        "{}\n{}\n{}",
        header(&results, opts.quick).markdown(),
        variance_table(&results).markdown(),
        table(&results).markdown()
    ))
}
