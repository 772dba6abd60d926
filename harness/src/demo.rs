//! The demo: sample a Bayesian linear regression with minibatch gradients and compare with the exact posterior.

use crate::experiments::common::{Dynamics, DynamicsSettings, SamplerError, Start, run_dynamics};
use crate::models::LinearRegression;
use rand_pcg::Pcg64;
use sgmcmc::prelude::*;
use std::convert::Infallible;
use std::fmt;
use std::ops::ControlFlow;

/// Which sampler the demo runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SamplerKind {
    /// SGLD.
    Sgld,
    /// SGHMC (no noise estimate).
    Sghmc,
    /// SGNHT (scalar thermostat).
    Sgnht,
    /// mSGNHT (per-coordinate thermostats): the default.
    MSgnht,
}

/// Settings of a demo run.
#[derive(Clone, Copy, Debug)]
pub struct DemoConfig {
    /// Sampler.
    pub sampler: SamplerKind,
    /// Integrator (ignored by SGLD).
    pub integrator: Integrator,
    /// Data points N.
    pub n: usize,
    /// Weights d.
    pub d: usize,
    /// Minibatch size.
    pub batch: usize,
    /// Step size h.
    pub h: f64,
    /// Friction / diffusion A.
    pub friction: f64,
    /// Burn-in steps.
    pub burn_in: usize,
    /// Kept steps.
    pub steps: usize,
    /// Seed of data, minibatches and sampler.
    pub seed: u64,
}

impl Default for DemoConfig {
    fn default() -> Self {
        DemoConfig {
            sampler: SamplerKind::MSgnht,
            integrator: Integrator::Splitting,
            n: 1000,
            d: 5,
            batch: 50,
            h: 3e-3,
            friction: 1.0,
            burn_in: 20_000,
            steps: 1_000_000,
            seed: 1,
        }
    }
}

/// The posterior summary of a run beside the exact one.
#[derive(Clone, Debug)]
pub struct DemoReport {
    /// The run's settings.
    pub config: DemoConfig,
    /// Sample means of the weights.
    pub mean: Vec<f64>,
    /// Sample standard deviations.
    pub sd: Vec<f64>,
    /// Exact posterior means.
    pub exact_mean: Vec<f64>,
    /// Exact posterior standard deviations.
    pub exact_sd: Vec<f64>,
    /// Mean kinetic temperature (NaN for SGLD).
    pub temperature: f64,
    /// Mean thermostat (NaN without one).
    pub thermostat: f64,
}

impl DemoReport {
    /// Largest |sample mean − exact mean| in units of the exact posterior sd.
    pub fn max_mean_error_in_sd(&self) -> f64 {
        (0..self.mean.len())
            .map(|j| (self.mean[j] - self.exact_mean[j]).abs() / self.exact_sd[j])
            .fold(0.0, f64::max)
    }
    /// Largest |sample sd / exact sd − 1|.
    pub fn max_sd_ratio_error(&self) -> f64 {
        (0..self.sd.len())
            .map(|j| (self.sd[j] / self.exact_sd[j] - 1.0).abs())
            .fold(0.0, f64::max)
    }
}

impl fmt::Display for DemoReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.config;
        writeln!(
            f,
            "Bayesian linear regression: N = {}, d = {}, minibatch {}, {:?} ({:?}), h = {}, A = {}, {} steps after {} burn-in, seed {}",
            c.n, c.d, c.batch, c.sampler, c.integrator, c.h, c.friction, c.steps, c.burn_in, c.seed
        )?;
        writeln!(
            f,
            "{:>6} {:>12} {:>12} {:>10} {:>10} {:>10}",
            "weight", "mean", "exact mean", "sd", "exact sd", "sd ratio"
        )?;
        for j in 0..self.mean.len() {
            writeln!(
                f,
                "{:>6} {:>12.5} {:>12.5} {:>10.5} {:>10.5} {:>10.3}",
                format!("w{j}"),
                self.mean[j],
                self.exact_mean[j],
                self.sd[j],
                self.exact_sd[j],
                self.sd[j] / self.exact_sd[j]
            )?;
        }
        writeln!(
            f,
            "mean kinetic temperature {:.4} (target 1), mean thermostat {:.3}",
            self.temperature, self.thermostat
        )?;
        write!(
            f,
            "max |mean error| = {:.3} posterior sd; max |sd ratio − 1| = {:.3}",
            self.max_mean_error_in_sd(),
            self.max_sd_ratio_error()
        )
    }
}

/// Why a demo run failed.
#[derive(Clone, Copy, Debug)]
pub enum DemoError {
    /// A hyperparameter was rejected.
    Param(ParamError),
    /// The buffers did not fit (a configuration with d = 0).
    Layout(LayoutError),
    /// The sampler could not be built for another reason.
    Build(sgmcmc::Error),
    /// The sampler diverged or the gradient was not finite.
    Step(StepError),
}

impl fmt::Display for DemoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DemoError::Param(e) => write!(f, "invalid parameter: {e}"),
            DemoError::Layout(e) => write!(f, "invalid configuration: {e}"),
            DemoError::Build(e) => write!(f, "invalid configuration: {e}"),
            DemoError::Step(e) => write!(f, "the sampler stopped: {e}"),
        }
    }
}

impl std::error::Error for DemoError {}

impl From<ParamError> for DemoError {
    fn from(e: ParamError) -> Self {
        DemoError::Param(e)
    }
}
impl From<LayoutError> for DemoError {
    fn from(e: LayoutError) -> Self {
        DemoError::Layout(e)
    }
}
impl From<sgmcmc::Error> for DemoError {
    fn from(e: sgmcmc::Error) -> Self {
        match e {
            sgmcmc::Error::Param(e) => DemoError::Param(e),
            sgmcmc::Error::Layout(e) => DemoError::Layout(e),
            e => DemoError::Build(e),
        }
    }
}
impl From<StepError> for DemoError {
    fn from(e: StepError) -> Self {
        DemoError::Step(e)
    }
}

/// Runs the demo.
pub fn run(config: DemoConfig) -> Result<DemoReport, DemoError> {
    let data = LinearRegression::simulate(config.n, config.d, config.seed);
    let mut grad = data.minibatch_gradient(config.batch, config.seed.wrapping_add(1));
    let d = config.d;
    let mut start = Start {
        theta: vec![0.0; d],
        p: vec![0.0; d],
        rng: Pcg64::new(config.seed as u128 + 2, 0xde),
    };
    let mut summary = Summary::new(config);
    let dynamics = match config.sampler {
        SamplerKind::Sgld => {
            let mut work = vec![0.0; Sgld::<f64>::workspace_len(d)];
            let mut smp = Sgld::new(SgldParams::new(config.h), &mut start.theta, &mut work)?;
            let steps = (config.burn_in + config.steps) as u64;
            smp.run(&mut grad, &mut start.rng, steps, &mut summary)
                .map_err(|e| DemoError::Step(e.error))?;
            None
        }
        SamplerKind::Sghmc => Some(Dynamics::Sghmc),
        SamplerKind::Sgnht => Some(Dynamics::Sgnht),
        SamplerKind::MSgnht => Some(Dynamics::MSgnht),
    };
    if let Some(dynamics) = dynamics {
        let settings = DynamicsSettings::new(config.h, config.friction, config.integrator);
        let steps = config.burn_in + config.steps;
        run_dynamics(
            (dynamics, settings),
            &mut start,
            &mut grad,
            steps,
            &mut summary,
        )
        .map_err(|e| match e {
            SamplerError::Build(e) => DemoError::from(e),
            SamplerError::Run(e) => DemoError::Step(e.error),
        })?;
    }
    let n = config.steps as f64;
    let mean: Vec<f64> = summary.sum.iter().map(|s| s / n).collect();
    let sd = summary
        .sum2
        .iter()
        .zip(&mean)
        .map(|(s2, m)| (s2 / n - m * m).max(0.0).sqrt())
        .collect();
    Ok(DemoReport {
        config,
        mean,
        sd,
        exact_mean: data.posterior_mean.clone(),
        exact_sd: data.posterior_sd.clone(),
        temperature: summary.temperature / n,
        thermostat: summary.thermostat / n,
    })
}

/// Running sums over the steps after burn-in (an [`Observer`] of every demo sampler).
struct Summary {
    burn_in: u64,
    sum: Vec<f64>,
    sum2: Vec<f64>,
    temperature: f64,
    thermostat: f64,
}

impl Summary {
    fn new(c: DemoConfig) -> Self {
        Summary {
            burn_in: c.burn_in as u64,
            sum: vec![0.0; c.d],
            sum2: vec![0.0; c.d],
            temperature: 0.0,
            thermostat: 0.0,
        }
    }
}

impl<S: ChainState<f64>> Observer<S, f64> for Summary {
    type Stop = Infallible;
    fn observe(
        &mut self,
        step: u64,
        sampler: &mut S,
        stats: &StepStats<f64>,
    ) -> ControlFlow<Infallible> {
        if step < self.burn_in {
            return ControlFlow::Continue(());
        }
        self.temperature += stats.kinetic_temperature.unwrap_or(f64::NAN);
        self.thermostat += stats.thermostat.unwrap_or(f64::NAN);
        for ((s, s2), &w) in self
            .sum
            .iter_mut()
            .zip(&mut self.sum2)
            .zip(sampler.position())
        {
            *s += w;
            *s2 += w * w;
        }
        ControlFlow::Continue(())
    }
}
