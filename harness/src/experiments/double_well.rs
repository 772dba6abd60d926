//! `double-well`: fixed friction ξ ∈ {0.1, 1, 10} versus SGNHT under unknown gradient noise (Ding et al. 2014 §3, Fig. 1 and 4).
//!
//! U(θ) = (θ + 4)(θ + 1)(θ − 1)(θ − 3)/14 + 0.5, gradient noise ∇Ũ = ∇U + N(0, 2B/h) with B = 1,
//! no injected noise (A = 0), h = 0.01, 10⁶ samples per chain. The fixed-friction runs are the
//! Langevin dynamics dp = −∇Ũ dt − ξp dt with the gradient noise as the only noise (SGHMC with
//! friction ξ and B̂ = ξ, so its injected noise √(2(ξ − B̂)h) is zero); ξ = B = 1 is then exact
//! Langevin dynamics, ξ > B freezes the chain into one well, ξ < B heats it up. SGNHT (Ding et
//! al. 2014, Alg. 1, ξ₀ = A = 0) learns ξ ≈ B by itself.

use super::common::{
    Dynamics, DynamicsSettings, ExperimentError, Job, RunOptions, SamplerError, Start, all_ok,
    grid, run_observed, sig,
};
use crate::diagnostics::{Axis, DrawCollector, Histogram, split_rhat};
use crate::models::double_well::{barrier, density, noisy_gradient};
use crate::plot::{Chart, Scale, Series, line_chart};
use crate::report::{Table, write_columns};
use sgmcmc::prelude::*;
use std::convert::Infallible;
use std::ops::ControlFlow;

/// Step size h (Ding et al. 2014, §3).
pub const H: f64 = 0.01;
/// Gradient-noise level B (Ding et al. 2014, §3).
pub const B: f64 = 1.0;

/// One configuration of Fig. 1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Friction {
    /// ξ held fixed (no thermostat).
    Fixed(f64),
    /// SGNHT's adaptive ξ.
    Thermostat,
}

impl Friction {
    /// The four columns of Fig. 1, in the paper's order.
    pub const ALL: [Friction; 4] = [
        Friction::Fixed(1.0),
        Friction::Fixed(10.0),
        Friction::Fixed(0.1),
        Friction::Thermostat,
    ];

    /// A label for tables and legends.
    pub fn label(&self) -> String {
        match self {
            Friction::Fixed(x) => format!("ξ = {x} fixed"),
            Friction::Thermostat => "SGNHT".into(),
        }
    }
}

/// What one configuration produced (pooled over chains).
#[derive(Clone, Debug)]
pub struct DoubleWellRun {
    /// The configuration.
    pub friction: Friction,
    /// Mean kinetic energy p²/2 over all steps (0.5 at equilibrium).
    pub mean_kinetic: f64,
    /// Time-averaged ξ (the fixed value, or SGNHT's mean ξ over the second half of each chain).
    pub mean_xi: f64,
    /// KL divergence of the pooled histogram (120 bins on [−6, 6]) from the true density.
    pub kl: f64,
    /// Well-to-well transitions (with hysteresis: from θ < −1 to θ > 1 or back), all chains.
    pub crossings: u64,
    /// Fraction of samples right of the barrier.
    pub right_fraction: f64,
    /// Split-R̂ of θ across chains (None with one chain).
    pub rhat: Option<f64>,
    /// Samples per chain.
    pub steps: usize,
}

/// The experiment's results.
#[derive(Clone, Debug)]
pub struct DoubleWellResult {
    /// One entry per configuration of [`Friction::ALL`].
    pub runs: Vec<DoubleWellRun>,
    /// The exact fraction of the target's mass right of the barrier.
    pub true_right_fraction: f64,
}

/// What one chain records, step by step (an [`Observer`] of every sampler of [`Friction::ALL`]).
struct ChainOut {
    samples: DrawCollector,
    running_kinetic: Vec<(f64, f64)>,
    xi_trace: Vec<(f64, f64)>,
    sum_kinetic: f64,
    sum_xi_late: f64,
    crossings: u64,
    steps: usize,
    /// The fixed friction, or `None` to read SGNHT's ξ from the step statistics.
    fixed_xi: Option<f64>,
    /// The next running-mean checkpoint (steps), spaced 2 % apart in log t for the log-scale
    /// figure.
    next_k: usize,
    every_xi: usize,
    side: i8,
}

impl ChainOut {
    fn new(steps: usize, fixed_xi: Option<f64>) -> Self {
        ChainOut {
            samples: DrawCollector::new(1).with_capacity(steps),
            running_kinetic: Vec::new(),
            xi_trace: Vec::new(),
            sum_kinetic: 0.0,
            sum_xi_late: 0.0,
            crossings: 0,
            steps,
            fixed_xi,
            next_k: 1,
            every_xi: (steps / 2000).max(1),
            side: 0,
        }
    }
}

impl<S: ChainState<f64>> Observer<S, f64> for ChainOut {
    type Stop = Infallible;
    fn observe(
        &mut self,
        step: u64,
        sampler: &mut S,
        stats: &StepStats<f64>,
    ) -> ControlFlow<Infallible> {
        let ControlFlow::Continue(()) = self.samples.observe(step, sampler, stats);
        let t = step as usize;
        let (th, mom) = (sampler.position()[0], sampler.momentum()[0]);
        let xi = self
            .fixed_xi
            .unwrap_or_else(|| stats.thermostat.unwrap_or(0.0));
        self.sum_kinetic += 0.5 * mom * mom;
        if t >= self.steps / 2 {
            self.sum_xi_late += xi;
        }
        if t + 1 == self.next_k {
            self.running_kinetic
                .push(((t + 1) as f64, self.sum_kinetic / (t + 1) as f64));
            self.next_k = (self.next_k + 1).max((self.next_k as f64 * 1.02) as usize);
        }
        if t.is_multiple_of(self.every_xi) {
            self.xi_trace.push((t as f64, xi));
        }
        let now = if th < -1.0 {
            -1
        } else if th > 1.0 {
            1
        } else {
            self.side
        };
        if self.side != 0 && now != self.side {
            self.crossings += 1;
        }
        self.side = now;
        ControlFlow::Continue(())
    }
}

fn run_chain(
    friction: Friction,
    integrator: Integrator,
    job: Job,
) -> Result<ChainOut, SamplerError> {
    let mut start = Start::new(&[0.0], job.seed, 0xd1);
    let mut grad = noisy_gradient(H, B, job.seed ^ 0x5eed);
    let (sampler, fixed_xi) = match friction {
        // Friction ξ with B̂ = ξ: no injected noise.
        Friction::Fixed(xi) => {
            let settings = DynamicsSettings::new(H, xi, integrator);
            let settings = DynamicsSettings {
                noise_estimate: xi,
                ..settings
            };
            ((Dynamics::Sghmc, settings), Some(xi))
        }
        Friction::Thermostat => {
            let settings = DynamicsSettings::new(H, 0.0, integrator);
            ((Dynamics::Sgnht, settings), None)
        }
    };
    let out = ChainOut::new(job.steps, fixed_xi);
    run_observed(sampler, &mut start, &mut grad, job, out)
}

/// Fraction of e^{−U} right of the barrier (midpoint rule on [−8, 8], 10⁵ cells).
pub fn true_right_fraction() -> f64 {
    let b = barrier();
    let n = 100_000;
    let (lo, hi) = (-8.0, 8.0);
    let w = (hi - lo) / n as f64;
    let (mut all, mut right) = (0.0, 0.0);
    for i in 0..n {
        let x = lo + (i as f64 + 0.5) * w;
        let d = density(x);
        all += d;
        if x > b {
            right += d;
        }
    }
    right / all
}

/// Runs the experiment, writes CSVs and figures into `opts.out`, returns the numbers.
pub fn run(opts: &RunOptions, integrator: Integrator) -> Result<DoubleWellResult, ExperimentError> {
    opts.prepare()?;
    let steps = if opts.quick { 200_000 } else { 1_000_000 };
    let outs = opts.par_chains(&Friction::ALL, steps, "double-well", |k, &f, c, pb| {
        let seed = opts.chain_seed(k, c);
        run_chain(f, integrator, Job { steps, seed, pb }).map_err(|e| e.named(f.label()))
    });
    let mut outs = all_ok(outs)?.into_iter();
    let axis = Axis::new(-6.0, 6.0, 120).expect("valid axis");
    let b = barrier();
    let mut runs = Vec::new();
    let mut density_series = Vec::new();
    let mut kinetic_series = Vec::new();
    let mut xi_series = Vec::new();
    for (k, f) in Friction::ALL.into_iter().enumerate() {
        let chains: Vec<ChainOut> = outs.next().unwrap_or_default();
        let mut hist = Histogram::new(axis);
        for ch in &chains {
            hist.extend(ch.samples.as_flat())
                .map_err(|e| ExperimentError::Invalid(e.to_string()))?;
        }
        let kl = hist
            .kl_divergence(density)
            .map_err(|e| ExperimentError::Invalid(e.to_string()))?;
        let total = (steps * chains.len()) as f64;
        let right = chains
            .iter()
            .map(|c| c.samples.as_flat().iter().filter(|&&x| x > b).count())
            .sum::<usize>() as f64;
        let rhat = if chains.len() > 1 {
            let v: Vec<&[f64]> = chains.iter().map(|c| c.samples.as_flat()).collect();
            split_rhat(&v).ok().map(|r| r.rhat)
        } else {
            None
        };
        let mean_xi = match f {
            Friction::Fixed(x) => x,
            Friction::Thermostat => {
                chains.iter().map(|c| c.sum_xi_late).sum::<f64>()
                    / (chains.len() * (steps - steps / 2)) as f64
            }
        };
        let dens = hist
            .densities(crate::diagnostics::Normalization::Normalized)
            .map_err(|e| ExperimentError::Invalid(e.to_string()))?;
        let centers: Vec<f64> = (0..axis.bins()).map(|i| axis.center(i)).collect();
        write_columns(
            &opts.out.join(format!("double-well-density-{k}.csv")),
            &["theta", "density"],
            &[&centers, &dens],
        )?;
        density_series.push(Series::new(
            f.label(),
            centers.iter().copied().zip(dens.iter().copied()).collect(),
            k + 1,
        ));
        kinetic_series.push(Series::new(
            f.label(),
            chains[0].running_kinetic.clone(),
            k + 1,
        ));
        if f == Friction::Thermostat {
            xi_series.push(Series::new(
                "SGNHT ξ (chain 1)",
                chains[0].xi_trace.clone(),
                1,
            ));
        }
        runs.push(DoubleWellRun {
            friction: f,
            mean_kinetic: chains.iter().map(|c| c.sum_kinetic).sum::<f64>() / total,
            mean_xi,
            kl,
            crossings: chains.iter().map(|c| c.crossings).sum(),
            right_fraction: right / total,
            rhat,
            steps,
        });
    }
    // The truth, normalised over the plotted range like the histograms.
    let xs = grid(-6.0, 6.0, 600);
    let z: f64 = true_normaliser();
    density_series.push(Series::truth(
        "true density",
        xs.iter().map(|&x| (x, density(x) / z)).collect(),
    ));
    let title = format!("Double well: density of θ (h = {H}, B = {B}, {integrator:?})");
    line_chart(
        &opts.out.join("double-well-density.png"),
        &Chart {
            title: &title,
            x_label: "θ",
            y_label: "density",
            x_scale: Scale::Linear,
            y_scale: Scale::Linear,
        },
        &density_series,
    )?;
    kinetic_series.push(Series::truth(
        "equilibrium 0.5",
        vec![(1.0, 0.5), (steps as f64, 0.5)],
    ));
    line_chart(
        &opts.out.join("double-well-kinetic.png"),
        &Chart {
            title: "Double well: running mean kinetic energy",
            x_label: "iteration",
            y_label: "mean K(p)",
            x_scale: Scale::Log,
            y_scale: Scale::Log,
        },
        &kinetic_series,
    )?;
    xi_series.push(Series::truth("B = 1", vec![(0.0, B), (steps as f64, B)]));
    line_chart(
        &opts.out.join("double-well-xi.png"),
        &Chart {
            title: "Double well: SGNHT's ξ adapts to B (Ding et al. 2014, Fig. 4)",
            x_label: "iteration",
            y_label: "ξ",
            x_scale: Scale::Linear,
            y_scale: Scale::Linear,
        },
        &xi_series,
    )?;
    let result = DoubleWellResult {
        runs,
        true_right_fraction: true_right_fraction(),
    };
    table(&result).write_csv(&opts.out.join("double-well.csv"))?;
    Ok(result)
}

fn true_normaliser() -> f64 {
    let n = 100_000;
    let w = 16.0 / n as f64;
    (0..n)
        .map(|i| density(-8.0 + (i as f64 + 0.5) * w) * w)
        .sum()
}

/// The summary table with the paper's qualitative result beside ours.
pub fn table(r: &DoubleWellResult) -> Table {
    let mut t = Table::new([
        "run",
        "mean K (paper)",
        "mean K (ours)",
        "mean ξ",
        "KL",
        "crossings",
        "right-well fraction",
        "split-R̂",
    ]);
    for run in &r.runs {
        let paper = match run.friction {
            Friction::Fixed(1.0) => "≈ 0.5, accurate",
            Friction::Fixed(x) if x > 1.0 => "low, stuck in one well",
            Friction::Fixed(_) => "too high, random walk",
            Friction::Thermostat => "≈ 0.5, accurate; ξ → B = 1",
        };
        t.row([
            run.friction.label(),
            paper.to_string(),
            sig(run.mean_kinetic, 3),
            sig(run.mean_xi, 3),
            sig(run.kl, 3),
            run.crossings.to_string(),
            format!(
                "{:.3} (truth {:.3})",
                run.right_fraction, r.true_right_fraction
            ),
            run.rhat.map_or("–".into(), |x| sig(x, 4)),
        ]);
    }
    t
}

/// The text the CLI prints: the settings and [`table`].
pub fn report(r: &DoubleWellResult, opts: &RunOptions) -> String {
    format!(
        "Double well (Ding et al. 2014 §3, Fig. 1), h = {H}, B = {B}, {} samples per chain, {} chain(s)\n{}",
        r.runs.first().map_or(0, |run| run.steps),
        opts.chains,
        table(r)
    )
}

/// Runs the experiment and returns [`report`].
pub fn cli(opts: &RunOptions, integrator: Integrator) -> Result<String, ExperimentError> {
    run(opts, integrator).map(|r| report(&r, opts))
}
