//! `calibration`: posterior means and sds of Bayesian logistic regression under minibatch noise, with and without the online noise estimate, against a full-batch HMC reference (issue 17).
//!
//! Data: Pima (8 weights), breast cancer (31), Ripley (7, cubic basis) and Caravan (86), the
//! `blr` experiment's training splits, standardised features with an intercept, prior
//! N(0, 10 I) ([`crate::models::logistic_regression`]).
//!
//! * **Reference**: full-batch HMC ([`sgmcmc::sampler::Hmc`]) with a dense mass whose precision
//!   M⁻¹ is the Laplace covariance H⁻¹ at the mode, the largest step of 0.5, 0.25, … with a
//!   pilot acceptance ≥ 0.75, trajectories of length ≈ 1.5 (L drawn from [L̄/2, 3L̄/2]),
//!   [`REF_CHAINS`] chains of [`REF_DRAWS`] draws after [`REF_BURN`] from N(ŵ, H⁻¹). Its Monte
//!   Carlo error is printed with the table (`ref. min ESS`, `ref. max sd MCSE/sd`).
//! * **Runs**: SGHMC (friction A = 1), SGNHT and mSGNHT (injected diffusion A = 1, ξ₀ = 1) with
//!   the splitting integrator, and SGMGT-D ([`SgmgtParams::sgmgt_d`]), each with minibatches of
//!   8, 32 and 128 rows drawn without replacement, at the full-batch step size
//!   h = 0.2/ω_max (ω_max² the largest eigenvalue of the Hessian at the mode; no shrinking for
//!   the minibatch), with no estimate, and with the diagonal and the dense one
//!   ([`sgmcmc::adapt::Calibrated`], λ = 0.02) subtracted from the injected noise (A raised
//!   to the estimate's bound when below it) or added to the friction; SGMGT-D (ξ never
//!   redrawn) with none or the diagonal one in its θ term. [`CHAINS`] chains per run, from
//!   N(ŵ, H⁻¹) draws, p ~ N(0, I), steps per chain from [`Setup::steps`].
//! * **Noise regime** ([`Setup::noise_regime`]): h·λ_max(B) and the minibatch gradient's
//!   largest excess kurtosis at the mode, where Chen et al.'s first-order, Gaussian correction
//!   stops being accurate.
//! * **Baselines at an equal gradient budget** (SGNHT without the estimate): the full batch for
//!   the same number of per-example gradients (steps × b/N), and h/16 for the same number of
//!   steps (the "shrink h by 16").
//! * **Metrics**: per weight, the pooled sd over the reference sd and |mean − reference mean|
//!   in reference sds; the table gives the worst weight of each. The target at
//!   b = 32: every sd within 10 % and every mean within 0.1 sd.
//! * **Cost**: the harness's wall-clock ns per step of each run (gradient included), so the
//!   rows with and without the estimate give its cost.

use super::blr::Problem;
use super::common::{ExperimentError, RunOptions, sig};
use crate::diagnostics::moments_of;
use crate::models::logistic_regression::{DataSet, LogisticRegression, MomentMinibatches};
use crate::plot::{Chart, Scale, Series, line_chart};
use crate::report::Table;
use indicatif::ProgressBar;
use rand_pcg::Pcg64;
use sgmcmc::adapt::NoiseShape;
use sgmcmc::adapt::{Calibrated, CalibratedParams, Correction};
use sgmcmc::linalg::{cholesky_in_place, spd_inverse};
use sgmcmc::prelude::*;
use sgmcmc::rng::fill_standard_normal;
use std::time::Instant;

/// The data sets, in the order.
pub const DATA: [DataSet; 4] = [
    DataSet::Pima,
    DataSet::BreastCancer,
    DataSet::Ripley,
    DataSet::Caravan,
];
/// Minibatch sizes.
pub const BATCHES: [usize; 3] = [8, 32, 128];
/// Chains per run.
pub const CHAINS: usize = 4;
/// Reference HMC chains, draws per chain and burn-in.
pub const REF_CHAINS: usize = 4;
/// Reference draws per chain.
pub const REF_DRAWS: usize = 5000;
/// Reference burn-in per chain.
pub const REF_BURN: usize = 500;
/// The step size in units of 1/ω_max.
pub const STEP_FACTOR: f64 = 0.2;
/// Every THIN-th step is kept for the moments and their Monte Carlo errors.
pub const THIN: usize = 10;

/// A sampler of the experiment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// SGHMC, friction A = 1.
    Sghmc,
    /// SGNHT, one thermostat.
    Sgnht,
    /// mSGNHT, one thermostat per weight.
    MSgnht,
    /// SGMGT-D with its defaults.
    SgmgtD,
}

impl Method {
    /// Every method.
    pub const ALL: [Method; 4] = [Method::Sghmc, Method::Sgnht, Method::MSgnht, Method::SgmgtD];
    /// Its name in tables.
    pub fn name(self) -> &'static str {
        match self {
            Method::Sghmc => "SGHMC",
            Method::Sgnht => "SGNHT",
            Method::MSgnht => "mSGNHT-S",
            Method::SgmgtD => "SGMGT-D",
        }
    }
}

/// Which estimate a run uses (or a baseline).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// No estimate (the sampler as it is).
    Plain,
    /// The online estimate, subtracted from the injected noise (Chen et al. 2014's B̂).
    Subtract(NoiseShape),
    /// The online estimate, added to the friction.
    Friction(NoiseShape),
    /// Baseline: the full batch for the minibatch run's per-example gradient budget.
    FullBatchBudget,
    /// Baseline: h/16 for the minibatch run's steps.
    ShrunkStep,
}

impl Variant {
    /// Its name in tables.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Plain => "none",
            Variant::Subtract(NoiseShape::Diagonal) => "subtract, diagonal",
            Variant::Subtract(NoiseShape::Dense) => "subtract, dense",
            Variant::Friction(NoiseShape::Diagonal) => "friction, diagonal",
            Variant::Friction(NoiseShape::Dense) => "friction, dense",
            Variant::FullBatchBudget => "full batch, equal gradients",
            Variant::ShrunkStep => "h/16, equal steps",
        }
    }
    fn calibration(self) -> Option<(NoiseShape, Correction)> {
        match self {
            Variant::Subtract(shape) => Some((shape, Correction::Subtract)),
            Variant::Friction(shape) => Some((shape, Correction::Friction)),
            _ => None,
        }
    }
}

/// One run's configuration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    /// Sampler.
    pub method: Method,
    /// Estimate or baseline.
    pub variant: Variant,
    /// Minibatch rows (the run the baselines are matched to).
    pub batch: usize,
}

/// A posterior with its reference and step size.
#[derive(Clone, Debug)]
pub struct Setup {
    /// The data set.
    pub data: DataSet,
    /// Its posterior and Laplace approximation.
    pub problem: Problem,
    /// The Laplace covariance H⁻¹ at the mode (row-major).
    pub cov: Vec<f64>,
    /// ω_max and ω_min: square roots of the Hessian's extreme eigenvalues at the mode.
    pub omega: (f64, f64),
    /// The step size 0.2/ω_max.
    pub h: f64,
    /// λ_max of the per-example gradient covariance at the mode and the largest per-example
    /// excess kurtosis (computed once; [`Setup::noise_regime`]).
    noise: (f64, f64),
}

impl Setup {
    /// Loads `data` and computes the mode's curvature.
    pub fn load(data: DataSet) -> Result<Self, ExperimentError> {
        let problem = Problem::load(data)?;
        let d = problem.model.dim();
        let hessian = problem.model.hessian(&problem.laplace.mode);
        let mut cov = vec![0.0; d * d];
        spd_inverse(&hessian, d, &mut cov)
            .map_err(|e| ExperimentError::Invalid(format!("{}: Hessian: {e}", data.name())))?;
        let lambda_max = largest_eigenvalue(&hessian, d);
        let lambda_min = 1.0 / largest_eigenvalue(&cov, d);
        let omega = (lambda_max.sqrt(), lambda_min.sqrt());
        let noise = per_example_noise(&problem);
        Ok(Setup {
            noise,
            data,
            problem,
            cov,
            omega,
            h: STEP_FACTOR / omega.0,
        })
    }

    /// Weights d.
    pub fn dim(&self) -> usize {
        self.problem.model.dim()
    }

    /// A draw from N(ŵ, H⁻¹).
    fn start(&self, rng: &mut Pcg64) -> Vec<f64> {
        self.posterior().start(rng)
    }

    /// What the reference needs of this posterior ([`Posterior`]).
    pub fn posterior(&self) -> Posterior<'_> {
        Posterior {
            label: self.data.name(),
            model: &self.problem.model,
            mode: &self.problem.laplace.mode,
            cov: &self.cov,
        }
    }

    /// Steps per minibatch chain: 2500 κ^1.5 with κ = ω_max/ω_min, between 40 000 and
    /// 320 000 (÷20 in quick mode). The exponent is fitted to what a min ESS of about 2000 over
    /// four chains took on Pima (κ = 2.5) and Ripley (κ = 9.5); the cap is the time budget
    /// (Caravan, κ = 157, would need about 5·10⁶).
    pub fn steps(&self, quick: bool) -> usize {
        let kappa = self.omega.0 / self.omega.1;
        let steps = (2500.0 * kappa.powf(1.5)) as usize;
        let steps = steps.clamp(40_000, 320_000);
        if quick { steps / 20 } else { steps }
    }

    /// The minibatch noise at the mode for minibatches of `batch` rows: (h·λ_max(B), the largest
    /// excess kurtosis of a coordinate of the minibatch gradient). B = ½hV with V = N(N − b)S/b
    /// from the per-example gradients' covariance S over all N rows; the minibatch mean of b
    /// rows has excess kurtosis κ₄/b for per-example excess kurtosis κ₄ (i.i.d. approximation).
    /// Chen et al. 2014's correction is first order in hB and Gaussian: both numbers should be
    /// small.
    pub fn noise_regime(&self, batch: usize) -> (f64, f64) {
        let n_rows = self.problem.model.len();
        let (lambda_s, kurtosis) = self.noise;
        let (nf, bf) = (n_rows as f64, batch.min(n_rows) as f64);
        let scale = 0.5 * self.h * nf * (nf - bf) / bf;
        (self.h * (lambda_s * scale), kurtosis / bf)
    }
}

/// What the reference HMC needs of a logistic-regression posterior: the model, its Laplace
/// mode ŵ and covariance H⁻¹ (the HMC's mass and its chains' start), and a label for the
/// progress bar. [`Setup::posterior`] gives one; the `cv` experiment builds one for a data set
/// that is not a [`DataSet`].
#[derive(Clone, Copy, Debug)]
pub struct Posterior<'a> {
    /// Names the progress bar.
    pub label: &'a str,
    /// The posterior.
    pub model: &'a LogisticRegression,
    /// The Laplace mode ŵ.
    pub mode: &'a [f64],
    /// The Laplace covariance H⁻¹ (row-major d × d).
    pub cov: &'a [f64],
}

impl Posterior<'_> {
    /// Weights d.
    pub fn dim(&self) -> usize {
        self.model.dim()
    }

    /// A draw from N(ŵ, H⁻¹).
    pub fn start(&self, rng: &mut Pcg64) -> Vec<f64> {
        let d = self.dim();
        let mut l = self.cov.to_vec();
        cholesky_in_place(&mut l, d).expect("a covariance from spd_inverse is positive definite");
        let mut z = vec![0.0; d];
        fill_standard_normal(rng, &mut z);
        (0..d)
            .map(|r| {
                let lz: f64 = (0..=r).map(|c| l[r * d + c] * z[c]).sum();
                self.mode[r] + lz
            })
            .collect()
    }
}

/// The per-example gradients' covariance S (divisor N − 1) at the mode: its largest eigenvalue,
/// and the largest per-example excess kurtosis of a coordinate ([`Setup::noise_regime`]
/// scales both to a minibatch).
fn per_example_noise(problem: &Problem) -> (f64, f64) {
    let x = &problem.model.data;
    let (n_rows, d) = (x.len(), x.d);
    let w = &problem.laplace.mode;
    let g: Vec<Vec<f64>> = (0..n_rows)
        .map(|i| {
            let row = x.row(i);
            let z: f64 = row.iter().zip(w).map(|(a, b)| a * b).sum();
            let r = crate::models::logistic_regression::sigmoid(z) - x.y[i];
            row.iter().map(|v| r * v).collect()
        })
        .collect();
    let nf = n_rows as f64;
    let mean: Vec<f64> = (0..d)
        .map(|j| g.iter().map(|gi| gi[j]).sum::<f64>() / nf)
        .collect();
    let mut s = vec![0.0; d * d];
    for gi in &g {
        for a in 0..d {
            for b in 0..d {
                s[a * d + b] += (gi[a] - mean[a]) * (gi[b] - mean[b]) / (nf - 1.0);
            }
        }
    }
    let kurtosis = (0..d)
        .map(|j| {
            let m2 = g.iter().map(|gi| (gi[j] - mean[j]).powi(2)).sum::<f64>() / nf;
            let m4 = g.iter().map(|gi| (gi[j] - mean[j]).powi(4)).sum::<f64>() / nf;
            if m2 > 0.0 { m4 / (m2 * m2) - 3.0 } else { 0.0 }
        })
        .fold(0.0, f64::max);
    (largest_eigenvalue(&s, d), kurtosis)
}

/// λ_max of a symmetric positive definite matrix by power iteration (to 10⁻¹⁰ relative).
pub fn largest_eigenvalue(a: &[f64], d: usize) -> f64 {
    let mut x = vec![1.0; d];
    let mut lambda = 0.0;
    for _ in 0..10_000 {
        let norm = x.iter().map(|v| v * v).sum::<f64>().sqrt();
        let y: Vec<f64> = (0..d)
            .map(|r| (0..d).map(|c| a[r * d + c] * x[c]).sum::<f64>() / norm)
            .collect();
        let next = x.iter().zip(&y).map(|(a, b)| a * b).sum::<f64>() / norm;
        x = y;
        if (next - lambda).abs() <= 1e-10 * next.abs() {
            return next;
        }
        lambda = next;
    }
    lambda
}

/// Pooled moments of every weight: mean, sd and their Monte Carlo standard errors, and the
/// smallest ESS (of the mean) over the weights.
#[derive(Clone, Debug, Default)]
pub struct WeightMoments {
    /// Per weight mean.
    pub mean: Vec<f64>,
    /// Per weight sd.
    pub sd: Vec<f64>,
    /// Per weight MCSE of the mean.
    pub mean_mcse: Vec<f64>,
    /// Per weight MCSE of the sd (from the variance's, by the delta method).
    pub sd_mcse: Vec<f64>,
    /// The smallest ESS of a weight's mean.
    pub min_ess: f64,
}

impl WeightMoments {
    /// From per-chain draws `chains[c][t][j]`.
    pub fn of(chains: &[Vec<Vec<f64>>], d: usize) -> Result<Self, ExperimentError> {
        let mut m = WeightMoments {
            min_ess: f64::INFINITY,
            ..Default::default()
        };
        for j in 0..d {
            let series: Vec<Vec<f64>> = chains
                .iter()
                .map(|c| c.iter().map(|w| w[j]).collect())
                .collect();
            let e = moments_of(&series)
                .map_err(|e| ExperimentError::Invalid(format!("moments of weight {j}: {e}")))?;
            m.mean.push(e.mean);
            m.sd.push(e.sd);
            m.mean_mcse.push(e.mean_mcse);
            m.sd_mcse.push(e.var_mcse / (2.0 * e.sd));
            m.min_ess = m.min_ess.min(e.ess_mean);
        }
        Ok(m)
    }
}

/// The reference: full-batch HMC (module docs).
pub fn reference(setup: &Setup, opts: &RunOptions) -> Result<Reference, ExperimentError> {
    reference_draws(&setup.posterior(), opts).map(|(reference, _)| reference)
}

/// One chain's kept draws, `draws[t][j]`.
pub type ChainDraws = Vec<Vec<f64>>;

/// [`reference()`] for any [`Posterior`], with the kept draws of every chain
/// (`draws[c][t][j]`).
pub fn reference_draws(
    posterior: &Posterior<'_>,
    opts: &RunOptions,
) -> Result<(Reference, Vec<ChainDraws>), ExperimentError> {
    let d = posterior.dim();
    let (draws, burn) = if opts.quick {
        (REF_DRAWS / 5, REF_BURN / 5)
    } else {
        (REF_DRAWS, REF_BURN)
    };
    let configs = [posterior.label];
    let ref_opts = RunOptions {
        chains: REF_CHAINS,
        ..opts.clone()
    };
    let label = format!("calibration-reference-{}", posterior.label);
    let named = |e| ExperimentError::Step(format!("{} reference HMC", posterior.label), e);
    let h = reference_step(posterior, opts.chain_seed(901, 0)).map_err(named)?;
    let chains = ref_opts.par_chains(&configs, draws + burn, &label, |_, _, c, pb| {
        reference_run(posterior, h, draws, burn, opts.chain_seed(900, c), pb)
    });
    let chains: Vec<(Vec<Vec<f64>>, f64)> = chains
        .into_iter()
        .flatten()
        .collect::<Result<_, _>>()
        .map_err(named)?;
    let acceptance = chains.iter().map(|c| c.1).sum::<f64>() / chains.len() as f64;
    let draws: Vec<Vec<Vec<f64>>> = chains.into_iter().map(|c| c.0).collect();
    let reference = Reference {
        moments: WeightMoments::of(&draws, d)?,
        h,
        acceptance,
    };
    Ok((reference, draws))
}

/// The HMC reference: its moments, step size and mean acceptance.
#[derive(Clone, Debug)]
pub struct Reference {
    /// Per-weight moments.
    pub moments: WeightMoments,
    /// Leapfrog step (with M⁻¹ = H⁻¹).
    pub h: f64,
    /// Mean acceptance probability.
    pub acceptance: f64,
}

/// The reference HMC's step size: the largest of 0.5, 0.25, … whose mean acceptance over a
/// pilot of 200 proposals from the mode is at least 0.75 (the Laplace mass fits Pima and Ripley
/// well enough for 0.5; Caravan's skewed rare-feature weights need much less).
fn reference_step(posterior: &Posterior<'_>, seed: u64) -> Result<f64, StepError> {
    let mut h = 0.5;
    for _ in 0..8 {
        let (_, acceptance) = reference_run(posterior, h, 200, 0, seed, &ProgressBar::hidden())?;
        if acceptance >= 0.75 {
            break;
        }
        h *= 0.5;
    }
    Ok(h)
}

/// One reference chain at step `h`: its kept draws and mean acceptance.
fn reference_run(
    posterior: &Posterior<'_>,
    h: f64,
    draws: usize,
    burn: usize,
    seed: u64,
    pb: &ProgressBar,
) -> Result<(Vec<Vec<f64>>, f64), StepError> {
    let d = posterior.dim();
    let model = posterior.model;
    let mut rng = Pcg64::new(seed as u128, 0x4e5);
    let mut theta = posterior.start(&mut rng);
    let mut p = vec![0.0; d];
    let mut work = vec![0.0; Hmc::<f64>::workspace_len(d)];
    let mut precision = posterior.cov.to_vec();
    let mut mass_work = vec![0.0; MassBuffer::<f64>::dense_work_len(d)];
    let mass = MassBuffer::dense(&mut precision, &mut mass_work, d).expect("H⁻¹ is a precision");
    let mut hmc =
        Hmc::new(HmcParams::new(h), &mut theta, &mut p, &mut work).expect("valid settings");
    hmc.set_mass(mass).expect("dimension d");
    let mut energy = Model::new(
        |w: &[f64], g: &mut [f64]| {
            model.gradient(w, g);
        },
        |w: &[f64]| model.potential(w),
    );
    // Trajectory length about 1.5 (the Laplace-whitened posterior has unit scales), L drawn
    // uniformly from [L̄/2, 3L̄/2] to break periodicities.
    let mean_l = (1.5 / h).ceil().max(2.0);
    let mut out = Vec::with_capacity(draws);
    let mut acc = 0.0;
    for t in 0..draws + burn {
        let l = (mean_l * (0.5 + sgmcmc::rng::uniform_f64(&mut rng)))
            .round()
            .max(1.0);
        hmc.set_leapfrog_steps(l as u32).expect("L ≥ 1");
        let s = hmc.step(&mut energy, &mut rng)?;
        if t >= burn {
            out.push(hmc.position().to_vec());
            acc += s.acceptance.unwrap_or(0.0);
        }
        pb.inc(1);
    }
    Ok((out, acc / draws.max(1) as f64))
}

/// One run's outcome, pooled over its chains.
#[derive(Clone, Debug)]
pub struct RunResult {
    /// The configuration.
    pub config: Config,
    /// Steps per chain (burn-in included) and the step size.
    pub steps: usize,
    /// Step size.
    pub h: f64,
    /// Moments of the kept draws.
    pub moments: WeightMoments,
    /// Mean kinetic temperature after burn-in.
    pub temperature: f64,
    /// Mean friction A′ the calibrated steps used (A when not raised; NaN without estimate).
    pub friction: f64,
    /// Wall-clock ns per step (one chain, gradient included).
    pub ns_per_step: f64,
}

/// Runs `config` on `setup` ([`CHAINS`] chains of `steps`).
pub fn run_config(
    setup: &Setup,
    config: Config,
    steps: usize,
    opts: &RunOptions,
    k: usize,
    pb: &ProgressBar,
) -> Result<RunResult, ExperimentError> {
    let n_rows = setup.problem.model.len();
    let (steps, h, batch) = match config.variant {
        Variant::FullBatchBudget => (
            (steps * config.batch).div_ceil(n_rows).max(5 * THIN),
            setup.h,
            n_rows,
        ),
        Variant::ShrunkStep => (steps, setup.h / 16.0, config.batch),
        _ => (steps, setup.h, config.batch),
    };
    let chains: Vec<Result<ChainOut, StepError>> = (0..CHAINS)
        .map(|c| run_chain(setup, config, steps, h, batch, opts.chain_seed(k, c), pb))
        .collect();
    let chains: Vec<ChainOut> = chains.into_iter().collect::<Result<_, _>>().map_err(|e| {
        ExperimentError::Step(
            format!(
                "{} {} {} b = {}",
                setup.data.name(),
                config.method.name(),
                config.variant.name(),
                config.batch
            ),
            e,
        )
    })?;
    let draws: Vec<Vec<Vec<f64>>> = chains.iter().map(|c| c.draws.clone()).collect();
    let moments = WeightMoments::of(&draws, setup.dim())?;
    let n = chains.len() as f64;
    Ok(RunResult {
        config,
        steps,
        h,
        moments,
        temperature: chains.iter().map(|c| c.temperature).sum::<f64>() / n,
        friction: chains.iter().map(|c| c.friction).sum::<f64>() / n,
        ns_per_step: chains.iter().map(|c| c.ns_per_step).sum::<f64>() / n,
    })
}

/// One chain's kept draws and statistics.
struct ChainOut {
    draws: Vec<Vec<f64>>,
    temperature: f64,
    friction: f64,
    ns_per_step: f64,
}

/// Steps a sampler, keeping every [`THIN`]-th position after the first fifth; `friction`
/// reads the calibrated friction of a step, if any.
fn drive<S, G>(
    sampler: &mut S,
    model: &mut G,
    rng: &mut Pcg64,
    steps: usize,
    pb: &ProgressBar,
    mut friction: impl FnMut(&S) -> f64,
) -> Result<ChainOut, StepError>
where
    S: Sampler<f64, G>,
    G: ?Sized,
{
    let burn = steps / 5;
    let mut draws = Vec::with_capacity((steps - burn) / THIN + 1);
    let (mut temp, mut fric, mut kept) = (0.0, 0.0, 0usize);
    let start = Instant::now();
    for t in 0..steps {
        let stats = sampler.step(model, rng)?;
        if t >= burn {
            temp += stats.kinetic_temperature.unwrap_or(f64::NAN);
            fric += friction(sampler);
            kept += 1;
            if (t - burn).is_multiple_of(THIN) {
                draws.push(sampler.position().to_vec());
            }
        }
        if t % 1000 == 999 {
            pb.inc(1000);
        }
    }
    let ns_per_step = start.elapsed().as_nanos() as f64 / steps as f64;
    Ok(ChainOut {
        draws,
        temperature: temp / kept.max(1) as f64,
        friction: fric / kept.max(1) as f64,
        ns_per_step,
    })
}

fn run_chain(
    setup: &Setup,
    config: Config,
    steps: usize,
    h: f64,
    batch: usize,
    seed: u64,
    pb: &ProgressBar,
) -> Result<ChainOut, StepError> {
    let d = setup.dim();
    let mut rng = Pcg64::new(seed as u128, 0xca11);
    let mut theta = setup.start(&mut rng);
    let mut p = vec![0.0; d];
    fill_standard_normal(&mut rng, &mut p);
    // (Each sampler starts its thermostats: ξ = A = 1 for SGNHT and mSGNHT, 0 for SGMGT-D.)
    let mut xi_vec = vec![0.0; d];
    let mut xi = [0.0];
    let mut work = vec![0.0; 3 * d];
    let mut model = MomentMinibatches::new(&setup.problem.model, batch, seed ^ 0x5eed);
    let calibration = config.variant.calibration();
    let (estimate_shape, correction) =
        calibration.unwrap_or((NoiseShape::Diagonal, Correction::Subtract));
    let mut estimate = vec![0.0; estimate_shape.len(d)];
    let mut scratch = vec![0.0; Calibrated::<f64, Sghmc<f64>>::workspace_len(estimate_shape, d)];
    let params = CalibratedParams::new()
        .with_shape(estimate_shape)
        .with_correction(correction);
    let rng = &mut rng;
    // Runs a built sampler with or without the wrapper.
    macro_rules! drive_any {
        ($sampler:expr) => {{
            let sampler = $sampler;
            match calibration {
                Some(_) => {
                    let mut c = Calibrated::new(sampler, params, &mut estimate, &mut scratch)
                        .expect("buffers sized by workspace_len");
                    drive(&mut c, &mut model, rng, steps, pb, |c| c.last().friction)
                }
                None => {
                    let mut s = sampler;
                    drive(&mut s, &mut model, rng, steps, pb, |_| f64::NAN)
                }
            }
        }};
    }
    let integrator = Integrator::Splitting;
    match config.method {
        Method::Sghmc => {
            let params = SghmcParams::new(h).with_integrator(integrator);
            drive_any!(Sghmc::new(params, &mut theta, &mut p, &mut work[..2 * d]).expect("valid"))
        }
        Method::Sgnht => {
            let params = SgnhtParams::new(h).with_integrator(integrator);
            let w = &mut work[..2 * d];
            drive_any!(Sgnht::new(params, &mut theta, &mut p, &mut xi, w).expect("valid"))
        }
        Method::MSgnht => {
            let params = SgnhtParams::new(h).with_integrator(integrator);
            let w = &mut work[..];
            drive_any!(MSgnht::new(params, &mut theta, &mut p, &mut xi_vec, w).expect("valid"))
        }
        Method::SgmgtD => {
            // (ξ never redrawn, so that the per-coordinate thermostats can absorb the noise.)
            let params = SgmgtParams::sgmgt_d(h).with_resampling_steps(100, 0);
            let mut xi0 = vec![0.0; d];
            let mut s = Sgmgt::new(params, &mut theta, &mut p, &mut xi0, &mut work).expect("valid");
            s.resample_momentum(rng);
            drive_any!(s)
        }
    }
}

/// The worst weight of a run against the reference: (max |sd/sd_ref − 1|, its ratio, max
/// |Δmean|/sd_ref).
pub fn worst(run: &WeightMoments, reference: &WeightMoments) -> (f64, f64, f64) {
    let mut worst_sd: (f64, f64) = (0.0, 1.0);
    let mut worst_mean: f64 = 0.0;
    for j in 0..reference.sd.len() {
        let ratio = run.sd[j] / reference.sd[j];
        if (ratio - 1.0).abs() > worst_sd.0 {
            worst_sd = ((ratio - 1.0).abs(), ratio);
        }
        worst_mean = worst_mean.max((run.mean[j] - reference.mean[j]).abs() / reference.sd[j]);
    }
    (worst_sd.0, worst_sd.1, worst_mean)
}

/// The median over the weights of sd/sd_ref.
pub fn median_sd_ratio(run: &WeightMoments, reference: &WeightMoments) -> f64 {
    let mut r: Vec<f64> = run
        .sd
        .iter()
        .zip(&reference.sd)
        .map(|(a, b)| a / b)
        .collect();
    r.sort_by(f64::total_cmp);
    let n = r.len();
    if n % 2 == 1 {
        r[n / 2]
    } else {
        0.5 * (r[n / 2 - 1] + r[n / 2])
    }
}

/// One data set's results.
#[derive(Clone, Debug)]
pub struct DataResult {
    /// The posterior and step size.
    pub setup: Setup,
    /// The HMC reference.
    pub reference: Reference,
    /// Every run.
    pub runs: Vec<RunResult>,
}

/// The configurations of a full run (quick: SGNHT and SGHMC at b = 32 only, every variant).
pub fn configs(quick: bool) -> Vec<Config> {
    let mut out = Vec::new();
    let (methods, batches): (&[Method], &[usize]) = if quick {
        (&[Method::Sghmc, Method::Sgnht], &[32])
    } else {
        (&Method::ALL, &BATCHES)
    };
    for &batch in batches {
        for &method in methods {
            let (diagonal, dense) = (NoiseShape::Diagonal, NoiseShape::Dense);
            let variants: &[Variant] = match method {
                Method::SgmgtD => &[Variant::Plain, Variant::Subtract(diagonal)],
                _ => &[
                    Variant::Plain,
                    Variant::Subtract(diagonal),
                    Variant::Subtract(dense),
                    Variant::Friction(diagonal),
                    Variant::Friction(dense),
                ],
            };
            for &variant in variants {
                out.push(Config {
                    method,
                    variant,
                    batch,
                });
            }
        }
        for variant in [Variant::FullBatchBudget, Variant::ShrunkStep] {
            out.push(Config {
                method: Method::Sgnht,
                variant,
                batch,
            });
        }
    }
    out
}

/// Runs the experiment on `data` (all four by default).
pub fn run(opts: &RunOptions, data: &[DataSet]) -> Result<Vec<DataResult>, ExperimentError> {
    opts.prepare()?;
    let mut out = Vec::new();
    for &ds in data {
        let setup = Setup::load(ds)?;
        let reference = reference(&setup, opts)?;
        let steps = setup.steps(opts.quick);
        let configs = configs(opts.quick);
        let label = format!("calibration-{}", ds.name());
        let run_opts = RunOptions {
            chains: 1,
            ..opts.clone()
        };
        let results = run_opts.par_chains(&configs, steps * CHAINS, &label, |k, config, _, pb| {
            run_config(&setup, *config, steps, opts, k, pb)
        });
        let runs = results
            .into_iter()
            .flatten()
            .collect::<Result<Vec<_>, _>>()?;
        out.push(DataResult {
            setup,
            reference,
            runs,
        });
    }
    write(opts, &out)?;
    Ok(out)
}

/// The table of every run.
pub fn table(results: &[DataResult]) -> Table {
    let mut t = Table::new([
        "data",
        "b",
        "sampler",
        "estimate",
        "median sd/ref",
        "worst sd/ref",
        "worst |Δmean|/sd",
        "min ESS",
        "temp.",
        "A′",
        "ns/step",
    ]);
    for r in results {
        for run in &r.runs {
            let (_, ratio, mean) = worst(&run.moments, &r.reference.moments);
            t.row([
                r.setup.data.name().to_string(),
                run.config.batch.to_string(),
                run.config.method.name().to_string(),
                run.config.variant.name().to_string(),
                format!("{:.3}", median_sd_ratio(&run.moments, &r.reference.moments)),
                format!("{ratio:.3}"),
                format!("{mean:.3}"),
                format!("{:.0}", run.moments.min_ess),
                format!("{:.3}", run.temperature),
                if run.friction.is_finite() {
                    sig(run.friction, 3)
                } else {
                    "–".into()
                },
                format!("{:.0}", run.ns_per_step),
            ]);
        }
    }
    t
}

/// The per-data-set header: h, ω, steps, the reference's ESS.
pub fn header(results: &[DataResult], quick: bool) -> Table {
    let mut t = Table::new([
        "data",
        "weights",
        "rows N",
        "ω_max",
        "ω_min",
        "h",
        "steps/chain",
        "ref. min ESS",
        "ref. max sd MCSE/sd",
        "ref. HMC step",
        "ref. acceptance",
        "hλ_max(B), b = 8/32/128",
        "max excess kurtosis, b = 32",
    ]);
    for r in results {
        let rel = r
            .reference
            .moments
            .sd_mcse
            .iter()
            .zip(&r.reference.moments.sd)
            .map(|(a, b)| a / b)
            .fold(0.0, f64::max);
        t.row([
            r.setup.data.name().to_string(),
            r.setup.dim().to_string(),
            r.setup.problem.model.len().to_string(),
            sig(r.setup.omega.0, 3),
            sig(r.setup.omega.1, 3),
            sig(r.setup.h, 3),
            r.setup.steps(quick).to_string(),
            format!("{:.0}", r.reference.moments.min_ess),
            format!("{rel:.4}"),
            sig(r.reference.h, 2),
            format!("{:.2}", r.reference.acceptance),
            BATCHES
                .iter()
                .map(|&b| sig(r.setup.noise_regime(b).0, 2))
                .collect::<Vec<_>>()
                .join(" / "),
            sig(r.setup.noise_regime(32).1, 2),
        ]);
    }
    t
}

/// Writes the tables as CSV, the per-weight CSV and the figure of the worst sd ratio against
/// the minibatch size.
fn write(opts: &RunOptions, results: &[DataResult]) -> Result<(), ExperimentError> {
    table(results).write_csv(&opts.out.join("calibration.csv"))?;
    header(results, opts.quick).write_csv(&opts.out.join("calibration-setup.csv"))?;
    let mut w = csv::Writer::from_path(opts.out.join("calibration-weights.csv"))?;
    w.write_record([
        "data",
        "batch",
        "sampler",
        "estimate",
        "weight",
        "mean",
        "sd",
        "ref_mean",
        "ref_sd",
        "sd_ratio",
        "mean_err_sd",
    ])?;
    for r in results {
        for run in &r.runs {
            for j in 0..r.setup.dim() {
                w.write_record([
                    r.setup.data.name().to_string(),
                    run.config.batch.to_string(),
                    run.config.method.name().to_string(),
                    run.config.variant.name().to_string(),
                    j.to_string(),
                    format!("{:.6}", run.moments.mean[j]),
                    format!("{:.6}", run.moments.sd[j]),
                    format!("{:.6}", r.reference.moments.mean[j]),
                    format!("{:.6}", r.reference.moments.sd[j]),
                    format!("{:.4}", run.moments.sd[j] / r.reference.moments.sd[j]),
                    format!(
                        "{:.4}",
                        (run.moments.mean[j] - r.reference.moments.mean[j])
                            / r.reference.moments.sd[j]
                    ),
                ])?;
            }
        }
    }
    w.flush()?;
    figures(&opts.out)
}

/// The (sampler, estimate) pairs the figures draw: each sampler without the estimate, and the
/// dense estimate (diagonal rows and SGMGT-D are in the tables).
pub const FIGURE_ROWS: [(&str, &str); 6] = [
    ("SGHMC", "none"),
    ("SGHMC", "friction, dense"),
    ("SGNHT", "none"),
    ("SGNHT", "subtract, dense"),
    ("SGNHT", "friction, dense"),
    ("mSGNHT-S", "none"),
];

/// Draws one figure per data set from `calibration.csv` in `dir`: the worst weight's sd over
/// the reference sd against the minibatch size ([`FIGURE_ROWS`]).
pub fn figures(dir: &std::path::Path) -> Result<(), ExperimentError> {
    let mut reader = csv::Reader::from_path(dir.join("calibration.csv"))?;
    let mut rows: Vec<(String, f64, String, String, f64)> = Vec::new();
    for record in reader.records() {
        let r = record?;
        let field = |i: usize| r.get(i).unwrap_or("").to_string();
        let number = |i: usize| field(i).parse::<f64>().unwrap_or(f64::NAN);
        rows.push((field(0), number(1), field(2), field(3), number(5)));
    }
    let mut data: Vec<String> = rows.iter().map(|r| r.0.clone()).collect();
    data.dedup();
    for ds in data {
        let mut series = Vec::new();
        for (color, (method, variant)) in FIGURE_ROWS.iter().enumerate() {
            let points: Vec<(f64, f64)> = rows
                .iter()
                .filter(|r| r.0 == ds && r.2 == *method && r.3 == *variant)
                .map(|r| (r.1, r.4))
                .collect();
            if points.len() > 1 {
                series.push(Series::new(
                    format!("{method} ({variant})"),
                    points,
                    color + 1,
                ));
            }
        }
        if series.is_empty() {
            continue;
        }
        series.push(Series::truth(
            "reference",
            BATCHES.iter().map(|&b| (b as f64, 1.0)).collect(),
        ));
        let title = format!("{ds}: worst sd / reference sd against the minibatch");
        let chart = Chart {
            title: &title,
            x_label: "minibatch rows",
            y_label: "worst weight's sd / reference sd",
            x_scale: Scale::Log,
            y_scale: Scale::Linear,
        };
        let path = dir.join(format!("calibration-{ds}.png"));
        line_chart(&path, &chart, &series)
            .map_err(|e| ExperimentError::Io(format!("{}: {e}", path.display())))?;
    }
    Ok(())
}

/// `harness calibration`: runs every data set and returns the tables.
pub fn cli(opts: &RunOptions, data: &[DataSet]) -> Result<String, ExperimentError> {
    let results = run(opts, data)?;
    Ok(format!(
        "{}\n{}",
        header(&results, opts.quick),
        table(&results)
    ))
}
