//! `double-well-kl`: KL divergence of mSGNHT-Euler versus mSGNHT-splitting across step sizes (Li et al. 2016 §3, Fig. 1).
//!
//! The double well of Ding et al. with gradient noise ∇Ũ h = ∇U h + N(0, 2Bh), B = 1, and no
//! injected noise (D = 0, so ξ₀ = 0); 10⁶ samples per chain at each
//! h ∈ {0.001, 0.01, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3}; KL of the histogram (120 bins on [−6, 6])
//! from the true density. A chain that diverges (the Euler thermostat is unstable once ξh > 2)
//! has no histogram; it is reported as diverged, with the step at which it did.

use super::common::{
    Dynamics, DynamicsSettings, ExperimentError, Job, RunOptions, SamplerError, Start,
    run_observed, sig,
};
use crate::diagnostics::{Axis, DrawCollector, Histogram};
use crate::models::double_well::{density, noisy_gradient};
use crate::plot::{Chart, Scale, Series, line_chart};
use crate::report::Table;
use sgmcmc::prelude::*;
use std::convert::Infallible;
use std::ops::ControlFlow;

/// The step sizes of Li et al. 2016, Fig. 1.
pub const STEPS: [f64; 8] = [0.001, 0.01, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3];
/// The step sizes the quick mode runs (where the paper's gap is large).
pub const QUICK_STEPS: [f64; 3] = [0.1, 0.2, 0.3];
/// Gradient-noise level.
pub const B: f64 = 1.0;

/// KL at one step size for one integrator.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kl {
    /// KL of the pooled histogram.
    Value(f64),
    /// A chain diverged at this step (no histogram).
    Diverged(usize),
}

impl Kl {
    /// The value, +∞ for a diverged run.
    pub fn value(&self) -> f64 {
        match self {
            Kl::Value(v) => *v,
            Kl::Diverged(_) => f64::INFINITY,
        }
    }
    fn text(&self) -> String {
        match self {
            Kl::Value(v) => sig(*v, 3),
            Kl::Diverged(t) => format!("diverged (step {t})"),
        }
    }
}

/// One row of Fig. 1.
#[derive(Clone, Debug)]
pub struct KlRow {
    /// Step size.
    pub h: f64,
    /// mSGNHT-E.
    pub euler: Kl,
    /// mSGNHT-S.
    pub splitting: Kl,
    /// Mean ξ of the splitting chains (third row of Li et al. 2016, Fig. 2: it should approach B =
    /// 1).
    pub splitting_xi: f64,
}

/// What a chain records: θ and the sum of the mean ξ over the steps.
struct KlChain {
    samples: DrawCollector,
    xi_sum: f64,
}

impl<S: ChainState<f64>> Observer<S, f64> for KlChain {
    type Stop = Infallible;
    fn observe(
        &mut self,
        step: u64,
        sampler: &mut S,
        stats: &StepStats<f64>,
    ) -> ControlFlow<Infallible> {
        let ControlFlow::Continue(()) = self.samples.observe(step, sampler, stats);
        self.xi_sum += stats.thermostat.unwrap_or(0.0);
        ControlFlow::Continue(())
    }
}

/// One chain of mSGNHT (D = 0, so ξᵢ₀ = 0): its samples and mean ξ, or the step at which it
/// diverged.
fn run_chain(
    integrator: Integrator,
    h: f64,
    job: Job,
) -> Result<(Vec<f64>, f64), (usize, SamplerError)> {
    let (steps, seed) = (job.steps, job.seed);
    let mut start = Start::new(&[0.0], seed, 0xd2);
    let mut grad = noisy_gradient(h, B, seed ^ 0x5eed);
    let out = KlChain {
        samples: DrawCollector::new(1).with_capacity(steps),
        xi_sum: 0.0,
    };
    let sampler = (Dynamics::MSgnht, DynamicsSettings::new(h, 0.0, integrator));
    let out = run_observed(sampler, &mut start, &mut grad, job, out).map_err(|e| match e {
        SamplerError::Run(r) => (r.completed as usize, e),
        SamplerError::Build(_) => (0, e),
    })?;
    Ok((out.samples.into_flat(), out.xi_sum / steps as f64))
}

/// Runs the experiment, writes `double-well-kl.csv` and `double-well-kl.png` into `opts.out`.
pub fn run(opts: &RunOptions) -> Result<Vec<KlRow>, ExperimentError> {
    opts.prepare()?;
    let hs: &[f64] = if opts.quick { &QUICK_STEPS } else { &STEPS };
    // 10⁶ samples per chain in both modes (a 1-d step costs ~30 ns); quick mode runs fewer h.
    let steps = 1_000_000;
    let configs: Vec<(f64, Integrator)> = hs
        .iter()
        .flat_map(|&h| [Integrator::Euler, Integrator::Splitting].map(|i| (h, i)))
        .collect();
    let outs = opts.par_chains(
        &configs,
        steps,
        "double-well-kl",
        |k, &(h, integrator), c, pb| {
            let seed = opts.chain_seed(k, c);
            run_chain(integrator, h, Job { steps, seed, pb })
        },
    );
    let axis = Axis::new(-6.0, 6.0, 120).expect("valid axis");
    let mut rows = Vec::new();
    let mut outs = outs.into_iter();
    for &h in hs {
        let mut kls = [Kl::Diverged(0); 2];
        let mut xi = f64::NAN;
        for (i, kl) in kls.iter_mut().enumerate() {
            let mut hist = Histogram::new(axis);
            let mut diverged = None;
            let mut xi_sum = 0.0;
            for out in outs.next().unwrap_or_default() {
                match out {
                    Ok((samples, x)) => {
                        hist.extend(&samples)
                            .map_err(|e| ExperimentError::Invalid(e.to_string()))?;
                        xi_sum += x;
                    }
                    Err((t, _)) => diverged = Some(diverged.map_or(t, |d: usize| d.min(t))),
                }
            }
            *kl = match diverged {
                Some(t) => Kl::Diverged(t),
                None => Kl::Value(
                    hist.kl_divergence(density)
                        .map_err(|e| ExperimentError::Invalid(e.to_string()))?,
                ),
            };
            if i == 1 {
                xi = xi_sum / opts.chains as f64;
            }
        }
        rows.push(KlRow {
            h,
            euler: kls[0],
            splitting: kls[1],
            splitting_xi: xi,
        });
    }
    table(&rows).write_csv(&opts.out.join("double-well-kl.csv"))?;
    let series = |name: &str, f: &dyn Fn(&KlRow) -> Kl, color| {
        Series::new(
            name,
            rows.iter()
                .filter_map(|r| match f(r) {
                    Kl::Value(v) => Some((r.h, v)),
                    Kl::Diverged(_) => None,
                })
                .collect(),
            color,
        )
    };
    line_chart(
        &opts.out.join("double-well-kl.png"),
        &Chart {
            title: "Double well: KL(histogram ‖ truth) vs step size (Li et al. 2016, Fig. 1)",
            x_label: "step size h",
            y_label: "KL divergence",
            x_scale: Scale::Log,
            y_scale: Scale::Log,
        },
        &[
            series("mSGNHT-E (diverged runs omitted)", &|r| r.euler, 2),
            series("mSGNHT-S", &|r| r.splitting, 1),
        ],
    )?;
    Ok(rows)
}

/// Our KL per step size, Euler beside splitting.
pub fn table(rows: &[KlRow]) -> Table {
    let mut t = Table::new(["h", "KL mSGNHT-E", "KL mSGNHT-S", "mean ξ (S)"]);
    for r in rows {
        t.row([
            format!("{}", r.h),
            r.euler.text(),
            r.splitting.text(),
            sig(r.splitting_xi, 3),
        ]);
    }
    t
}

/// The text the CLI prints: the paper's claim and [`table`].
pub fn report(rows: &[KlRow]) -> String {
    format!(
        "Double well, KL vs step size (Li et al. 2016 Fig. 1; the paper plots mSGNHT-S below mSGNHT-E at every h)\n{}",
        table(rows)
    )
}

/// Runs the experiment and returns [`report`].
pub fn cli(opts: &RunOptions) -> Result<String, ExperimentError> {
    run(opts).map(|rows| report(&rows))
}
