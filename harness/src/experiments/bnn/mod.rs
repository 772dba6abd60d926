//! `bnn`: Bayesian neural networks on the 8×8 digits: every SG-MCMC sampler tuned on a validation split (Ding et al. 2014 §5, App. G), and mSGNHT-E against mSGNHT-S on deeper networks (Li et al. 2016 §5, Fig. 4).
//!
//! The model and the data are [`crate::models::bnn`]'s: ReLU networks with a N(0, 1) prior and
//! a softmax likelihood on the UCI 8×8 digits (1797 images; MNIST is not reachable from here),
//! split once into 1197 training, 300 validation and 300 test images.
//!
//! **Table** ([`run`]): one hidden layer of 100 units (7510 parameters), minibatches of 20 (the
//! paper's) and 100. Per sampler — SGLD, SGHMC, SGNHT, mSGNHT-E, mSGNHT-S, SGMGT-D (a = 1) — every
//! setting of its grid ([`grid`]) runs [`ITERATIONS`] iterations from the same He-scaled start;
//! after [`BURN_IN`] the class probabilities of every [`THIN`]-th draw are averaged (the
//! posterior-predictive average). The setting with the highest validation log-likelihood of
//! that average is the sampler's row (the papers choose on validation performance; 300
//! validation images resolve the error only in steps of 0.33 %, so most settings would tie on
//! it); a run whose momentum blew up ([`UNSTABLE`]) or that diverged is listed, never chosen.
//! The row's test error and test log-likelihood, which the choice never sees, are reported
//! beside the paper's MNIST numbers, and so is SGNHT on the network without a hidden layer
//! (the multinomial logistic regression), the linear baseline. The learning
//! curve of each chosen run (test error and log-likelihood of the average so far; before
//! burn-in, of the current draw) is `bnn-curves.png`.
//!
//! **Depth** ([`depth`]): Li et al. 2016 §5 train ReLU networks of depth 2–4 (100 units per
//! layer, D = 5, h = 10⁻⁴ halved at epoch 20 of 40) and report that mSGNHT-E fails on the 4-layer
//! network at h = 10⁻⁴ while mSGNHT-S works. We run both integrators at that protocol on every
//! depth and over a range of h around it, and report where each fails.
//!
//! **Schedules** ([`schedules`]): constant, polynomial and cyclical (Zhang et al. 2020's
//! cSG-MCMC, the noise off while exploring) step sizes ([`ScheduleKind`]) for SGLD, SGHMC and
//! SGNHT, each with its own validation search.
//! **Timing** ([`timing`]): each sampler's cost per iteration on one thread, the gradient and
//! the sampler's own work apart.

mod depth;
mod timing;

pub use depth::{
    BATCH as DEPTH_BATCH, COLLAPSED, DEGRADED, DEPTHS, DIFFUSION, DepthResult, DepthRun, EPOCH,
    EpochPoint, INTEGRATORS, ITERATIONS as DEPTH_ITERATIONS, Outcome, SEEDS, STEPS, depth,
    depth_cli, depth_table,
};
pub use timing::{
    Cost, TIMED, TIMING_BATCHES, WARM_UP, peer_csv, timing, timing_cli, timing_table,
};

use super::common::{
    ExperimentError, Progress, RunOptions, SamplerError, Start, sgmgt_params, sig,
};
use crate::models::bnn::{
    Activation, Architecture, Bnn, Classification, EVAL_ROWS, Workspace, digits_split, score,
};
use crate::models::logistic_regression::data_dir;
use crate::plot::{Chart, Scale, Series, line_chart};
use indicatif::ProgressBar;
use rand_pcg::Pcg64;
use sgmcmc::ParamError;
use sgmcmc::prelude::*;
use sgmcmc::sampler::run_cyclical;
use std::convert::Infallible;
use std::fmt::Write as _;
use std::ops::ControlFlow;

/// Iterations per run (Ding et al. 2014: 50 000).
pub const ITERATIONS: usize = 50_000;
/// Burn-in (Ding et al. 2014: 10 000).
pub const BURN_IN: usize = 10_000;
/// Every THIN-th draw after burn-in joins the predictive average.
pub const THIN: usize = 50;
/// Iterations between two points of the learning curves.
pub const CURVE_EVERY: usize = 1000;
/// A run whose kinetic temperature exceeded this after burn-in (1 at equilibrium; SGHMC, which
/// does not absorb the gradient noise, runs at a few) had its momentum blow up, even if it came
/// back: it is reported as unstable and never chosen.
pub const UNSTABLE: f64 = 100.0;
/// Hidden units (both papers).
pub const WIDTH: usize = 100;
/// Minibatch sizes of the table: the paper's 20, and 100.
pub const BATCHES: [usize; 2] = [20, 100];

/// The samplers of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// SGLD (Welling & Teh 2011), constant step.
    Sgld,
    /// pSGLD (Li et al. 2016): SGLD with RMSprop's preconditioner, α = 0.99, λ = 10⁻⁵, no Γ.
    Psgld,
    /// SGHMC with friction A, Euler (Chen et al. 2014; Ding et al. 2014's Alg. 2 form).
    Sghmc,
    /// SGNHT, scalar thermostat, Euler (Ding et al. 2014, Alg. 1).
    Sgnht,
    /// mSGNHT with the Euler integrator (Li et al. 2016).
    MSgnhtE,
    /// mSGNHT with the symmetric splitting integrator (Li et al. 2016).
    MSgnhtS,
    /// SGMGT-D with a = 1 (Zhang et al. 2017), Euler.
    SgmgtD,
}

impl Method {
    /// Every sampler, in table order.
    pub const ALL: [Method; 7] = [
        Method::Sgld,
        Method::Psgld,
        Method::Sghmc,
        Method::Sgnht,
        Method::MSgnhtE,
        Method::MSgnhtS,
        Method::SgmgtD,
    ];

    /// The papers' name.
    pub fn label(self) -> &'static str {
        match self {
            Method::Sgld => "SGLD",
            Method::Psgld => "pSGLD",
            Method::Sghmc => "SGHMC",
            Method::Sgnht => "SGNHT",
            Method::MSgnhtE => "mSGNHT-E",
            Method::MSgnhtS => "mSGNHT-S",
            Method::SgmgtD => "SGMGT-D(a=1)",
        }
    }
}

/// One setting of a sampler: step h (SGLD's step ε) and noise term A (SGHMC's friction, the
/// thermostats' diffusion and ξ₀, SGMGT-D's σ_p; unused by SGLD).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Setting {
    /// Step size.
    pub h: f64,
    /// Noise term.
    pub a: f64,
}

/// pSGLD's steps h. Its drift per coordinate is about h (G∇Ũ ≈ ±1 once V tracks ∇Ũ²), as an
/// RMSprop learning rate is; the grid brackets the range where that move is small against the
/// weights' posterior sd.
pub const PSGLD_STEPS: [f64; 5] = [3e-3, 1e-2, 3e-2, 1e-1, 3e-1];

/// The validation grid of `method`. The momentum samplers' h is on the scale of Ding et al.'s
/// √η (η ∈ {2, 4, 6, 8}·10⁻⁷ on MNIST's 50 000 images, so h ≈ 4.5–8.9·10⁻⁴) times
/// √(50 000/1197) ≈ 6.5 for our smaller training set, whose posterior is that much less stiff;
/// A ∈ {1, 10} brackets their a = Ah ∈ {0.001, 0.01} at their h ≈ 7·10⁻⁴ (A ≈ 1.4 and 14).
/// SGLD's ε is on the scale of h²/2, the step of the Langevin limit of the momentum samplers.
pub fn grid(method: Method, quick: bool) -> Vec<Setting> {
    let hs: &[f64] = match (method, quick) {
        (Method::Sgld, false) => &[2.5e-6, 5e-6, 1e-5, 2e-5],
        (Method::Sgld, true) => &[5e-6, 2e-5],
        (Method::Psgld, false) => &PSGLD_STEPS,
        (Method::Psgld, true) => &[PSGLD_STEPS[1], PSGLD_STEPS[3]],
        (_, false) => &[1.5e-3, 3e-3, 6e-3, 1.2e-2],
        (_, true) => &[3e-3, 1.2e-2],
    };
    let a_values: &[f64] = match (method, quick) {
        (Method::Sgld | Method::Psgld, _) => &[0.0],
        (_, false) => &[1.0, 10.0],
        (_, true) => &[1.0],
    };
    hs.iter()
        .flat_map(|&h| a_values.iter().map(move |&a| Setting { h, a }))
        .collect()
}

/// The digits, split and standardised: (train, validation, test).
pub fn data() -> Result<(Classification, Classification, Classification), ExperimentError> {
    let all = Classification::read_csv(&data_dir().join("digits.csv"), 10)
        .map_err(|e| ExperimentError::Invalid(e.to_string()))?;
    digits_split(&all).map_err(|e| ExperimentError::Invalid(e.to_string()))
}

/// A run's protocol.
#[derive(Clone, Copy, Debug)]
pub struct Protocol {
    /// Iterations, burn-in included.
    pub iterations: usize,
    /// Burn-in.
    pub burn_in: usize,
    /// Minibatch size.
    pub batch: usize,
    /// Step-size schedule.
    pub schedule: ScheduleKind,
}

/// A learning-curve point: iteration, test error, test log-likelihood (per image).
pub type CurvePoint = (usize, f64, f64);

/// What one run gives.
#[derive(Clone, Debug)]
pub struct RunOut {
    /// Validation (error, log-likelihood) of the posterior-predictive average.
    pub validation: (f64, f64),
    /// Test (error, log-likelihood) of the posterior-predictive average.
    pub test: (f64, f64),
    /// Learning curve.
    pub curve: Vec<CurvePoint>,
    /// Draws in the predictive average.
    pub draws: usize,
    /// Mean kinetic temperature after burn-in (NaN for SGLD).
    pub temperature: f64,
    /// Largest kinetic temperature after burn-in (NaN for SGLD): above [`UNSTABLE`] the run
    /// counts as unstable and is not chosen.
    pub max_temperature: f64,
    /// Seconds in the gradient and in the sampler's own work (the step minus the gradient;
    /// the predictions' evaluation excluded), over the run.
    pub seconds: (f64, f64),
}

/// Records a run: predictive averages on the validation and test images, the curve, the
/// kinetic temperature.
struct Recorder<'a> {
    bnn: &'a Bnn<'a>,
    validation: &'a Classification,
    test: &'a Classification,
    protocol: Protocol,
    schedule: StepSchedule<f64>,
    ws: Workspace,
    val_probs: Vec<f64>,
    test_probs: Vec<f64>,
    draws: usize,
    curve: Vec<CurvePoint>,
    temperature: (f64, usize),
    max_temperature: f64,
    step: usize,
    /// Seconds spent evaluating predictions (not the sampler's).
    seconds: f64,
}

impl<'a> Recorder<'a> {
    fn new(
        bnn: &'a Bnn<'a>,
        (validation, test): (&'a Classification, &'a Classification),
        protocol: Protocol,
        schedule: StepSchedule<f64>,
    ) -> Self {
        Recorder {
            bnn,
            validation,
            test,
            protocol,
            schedule,
            ws: Workspace::new(&bnn.arch, EVAL_ROWS),
            val_probs: vec![0.0; validation.len() * validation.classes],
            test_probs: vec![0.0; test.len() * test.classes],
            draws: 0,
            curve: Vec::new(),
            temperature: (0.0, 0),
            max_temperature: f64::NAN,
            step: 0,
            seconds: 0.0,
        }
    }

    fn record(&mut self, theta: &[f64], stats: &StepStats<f64>) {
        let started = std::time::Instant::now();
        self.record_untimed(theta, stats);
        self.seconds += started.elapsed().as_secs_f64();
    }

    fn record_untimed(&mut self, theta: &[f64], stats: &StepStats<f64>) {
        self.step += 1;
        let t = self.step;
        let p = self.protocol;
        if t > p.burn_in {
            if let Some(k) = stats.kinetic_temperature {
                self.temperature.0 += k;
                self.temperature.1 += 1;
                self.max_temperature = self.max_temperature.max(k);
            }
            // (Step t is the schedule's iteration t − 1.)
            if (t - p.burn_in).is_multiple_of(THIN) && self.schedule.sampling(t as u64 - 1) {
                self.bnn.add_probabilities(
                    theta,
                    self.validation,
                    &mut self.val_probs,
                    &mut self.ws,
                );
                self.bnn
                    .add_probabilities(theta, self.test, &mut self.test_probs, &mut self.ws);
                self.draws += 1;
            }
        }
        if t.is_multiple_of(CURVE_EVERY) || t == p.iterations {
            let point = if self.draws > 0 {
                score(&self.test_probs, self.draws, self.test)
            } else {
                let mut probs = vec![0.0; self.test_probs.len()];
                self.bnn
                    .add_probabilities(theta, self.test, &mut probs, &mut self.ws);
                score(&probs, 1, self.test)
            };
            self.curve.push((t, point.0, point.1));
        }
    }

    fn finish(self, seconds: (f64, f64)) -> RunOut {
        RunOut {
            validation: score(&self.val_probs, self.draws, self.validation),
            test: score(&self.test_probs, self.draws, self.test),
            curve: self.curve,
            draws: self.draws,
            temperature: if self.temperature.1 > 0 {
                self.temperature.0 / self.temperature.1 as f64
            } else {
                f64::NAN
            },
            max_temperature: self.max_temperature,
            seconds,
        }
    }
}

impl<S: ChainState<f64>> Observer<S, f64> for Recorder<'_> {
    type Stop = Infallible;
    fn observe(
        &mut self,
        _step: u64,
        sampler: &mut S,
        stats: &StepStats<f64>,
    ) -> ControlFlow<Infallible> {
        self.record(sampler.position(), stats);
        ControlFlow::Continue(())
    }
}

/// The ReLU network of `depth` hidden layers of [`WIDTH`] units on `train`.
pub(super) fn network(train: &Classification, depth: usize) -> Result<Bnn<'_>, ExperimentError> {
    let arch = Architecture::new(
        train.features,
        depth,
        WIDTH,
        train.classes,
        Activation::Relu,
    );
    Bnn::new(arch, train).map_err(|e| ExperimentError::Invalid(e.to_string()))
}

/// A step-size schedule of the table's runs, built around a sampler's step h.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScheduleKind {
    /// h at every step (the papers' protocol).
    Constant,
    /// h_t = a (b + t)^−0.55, from 2h at the start to h/2 at the end of the run (Welling & Teh
    /// 2011's γ = 0.55).
    Polynomial,
    /// Zhang et al. 2020's cosine with h₀ = 2h (the same mean step h), [`CYCLES`] cycles over
    /// the run and exploration fraction [`EXPLORATION`]: draws join the average only in the
    /// sampling stages.
    Cyclical,
}

/// Cycles of the cyclical schedule over a run (Zhang et al. 2020 use 4 on CIFAR).
pub const CYCLES: u64 = 4;
/// Exploration fraction β of the cyclical schedule (Zhang et al. 2020 use 0.8 for their
/// CIFAR-10 cSGLD and cSGHMC).
pub const EXPLORATION: f64 = 0.8;

impl ScheduleKind {
    /// The schedule for step h over `iterations` steps.
    pub fn schedule(self, h: f64, iterations: usize) -> Result<StepSchedule<f64>, ParamError> {
        let n = iterations.max(1) as f64;
        match self {
            ScheduleKind::Constant => StepSchedule::constant(h),
            ScheduleKind::Polynomial => {
                // a b^−γ = 2h and a (b + n)^−γ = h/2: (1 + n/b)^γ = 4.
                let gamma = 0.55;
                let b = n / (4f64.powf(1.0 / gamma) - 1.0);
                StepSchedule::polynomial(2.0 * h * b.powf(gamma), b, gamma)
            }
            ScheduleKind::Cyclical => StepSchedule::cyclical(
                2.0 * h,
                (iterations as u64).div_ceil(CYCLES).max(1),
                EXPLORATION,
            ),
        }
    }

    /// Its name.
    pub fn label(self) -> &'static str {
        match self {
            ScheduleKind::Constant => "constant",
            ScheduleKind::Polynomial => "polynomial",
            ScheduleKind::Cyclical => "cyclical",
        }
    }
}

/// Builds `method` at `setting` over θ and p (identity mass; the thermostats start at A as in
/// Ding et al. 2014 and Li et al. 2016; SGMGT-D redraws p from its kinetics, its thermostats
/// start at 0) as one [`AnySampler`], and hands it to `drive` with `rng`, the generator it was
/// started with.
pub(super) fn with_sampler<O>(
    (method, setting): (Method, Setting),
    (theta, p): (&mut [f64], &mut [f64]),
    rng: &mut Pcg64,
    drive: impl FnOnce(&mut AnySampler<'_, f64>, &mut Pcg64) -> O,
) -> Result<O, sgmcmc::Error> {
    let d = theta.len();
    let Setting { h, a } = setting;
    let params = match method {
        Method::Sgld => AnyParams::Sgld(SgldParams::new(h)),
        Method::Psgld => AnyParams::Psgld(PsgldParams::new(h)),
        Method::Sghmc => AnyParams::Sghmc(SghmcParams::new(h).with_friction(a)),
        Method::Sgnht => AnyParams::Sgnht(SgnhtParams::new(h).with_diffusion(a)),
        Method::MSgnhtE | Method::MSgnhtS => {
            let integrator = if method == Method::MSgnhtE {
                Integrator::Euler
            } else {
                Integrator::Splitting
            };
            let params = SgnhtParams::new(h)
                .with_diffusion(a)
                .with_integrator(integrator);
            AnyParams::MSgnht(params)
        }
        // a = 1 with softening c = 1; σ_θ = σ_ξ = 0.01 (SgmgtParams::sgmgt_d), γ = 1, p
        // resampled every 100 steps, ξ never.
        Method::SgmgtD => AnyParams::Sgmgt(sgmgt_params(
            (h, MonomialGamma::softened(1.0, 1.0), Integrator::Euler),
            (a, 0.01, 0.01),
            (100, 0),
        )),
    };
    let len = params.lengths(d);
    let (mut xi, mut work) = (vec![0.0; len.thermostat], vec![0.0; len.work]);
    let mut sampler = AnySampler::new(params, theta, p, &mut xi, &mut work)?;
    if method == Method::SgmgtD {
        sampler.resample_momentum(rng);
    }
    Ok(drive(&mut sampler, rng))
}

/// A gradient that times its calls.
pub(super) struct Timed<G> {
    pub(super) inner: G,
    pub(super) seconds: f64,
}

impl<G: FnMut(&[f64], &mut [f64])> Gradient<f64> for Timed<G> {
    fn gradient(&mut self, theta: &[f64], grad: &mut [f64]) {
        let t = std::time::Instant::now();
        (self.inner)(theta, grad);
        self.seconds += t.elapsed().as_secs_f64();
    }
}

/// One run of `method` at `setting` on `bnn` from the He-scaled start drawn from `seed`
/// (p₀ ~ N(0, I)), its step size following `protocol.schedule` ([`run_cyclical`]: on the cyclical
/// schedule the injected noise is off in each cycle's exploration stage, as in Zhang et al. 2020).
pub fn run_one(
    bnn: &Bnn<'_>,
    held_out: (&Classification, &Classification),
    (method, setting): (Method, Setting),
    protocol: Protocol,
    seed: u64,
    pb: &ProgressBar,
) -> Result<RunOut, SamplerError> {
    let mut rng = Pcg64::new(seed as u128, 0xb22);
    let mut theta = bnn.arch.initial(&mut rng);
    let mut model = Timed {
        inner: bnn.stochastic_gradient(protocol.batch, seed ^ 0xba7c),
        seconds: 0.0,
    };
    let schedule = protocol
        .schedule
        .schedule(setting.h, protocol.iterations)
        .map_err(sgmcmc::Error::from)?;
    let mut recorder = Recorder::new(bnn, held_out, protocol, schedule);
    let started = std::time::Instant::now();
    let mut start = Start::new(&theta, seed, 0xb22);
    let mut observer = Progress::new(pb, &mut recorder);
    let steps = protocol.iterations as u64;
    let run = with_sampler(
        (method, setting),
        (&mut theta, &mut start.p),
        &mut start.rng,
        |sampler, rng| {
            run_cyclical(sampler, &schedule, 0, &mut model, rng, steps, &mut observer).map(|_| ())
        },
    )?;
    drop(observer);
    run.map_err(SamplerError::Run)?;
    let sampler = started.elapsed().as_secs_f64() - model.seconds - recorder.seconds;
    Ok(recorder.finish((model.seconds, sampler)))
}

/// A searched setting's validation (error, log-likelihood), or why it was not a candidate.
pub type Searched = Result<(f64, f64), String>;

/// A row of a table: a cell's chosen setting and its run, and every setting's validation
/// (error, log-likelihood) or what stopped it.
#[derive(Clone, Debug)]
pub struct Row {
    /// Sampler, minibatch, network and schedule.
    pub cell: Cell,
    /// The chosen setting.
    pub chosen: Setting,
    /// Its run.
    pub out: RunOut,
    /// Every setting with its validation (error, log-likelihood), or what stopped it.
    pub searched: Vec<(Setting, Searched)>,
}

impl Row {
    /// The sampler's name, marked for the linear baseline and a non-constant schedule.
    pub fn label(&self) -> String {
        let c = self.cell;
        let mut s = c.method.label().to_string();
        if c.hidden == 0 {
            s += " (no hidden layer)";
        }
        if c.schedule != ScheduleKind::Constant {
            s += &format!(", {} step", c.schedule.label());
        }
        s
    }
}

/// What [`run`] returns.
#[derive(Clone, Debug)]
pub struct BnnResult {
    /// One row per sampler and minibatch size.
    pub rows: Vec<Row>,
    /// The protocol (its batch is that of the first table).
    pub protocol: Protocol,
}

fn protocol(opts: &RunOptions, batch: usize) -> Protocol {
    if opts.quick {
        Protocol {
            iterations: 5000,
            burn_in: 2000,
            batch,
            schedule: ScheduleKind::Constant,
        }
    } else {
        Protocol {
            iterations: ITERATIONS,
            burn_in: BURN_IN,
            batch,
            schedule: ScheduleKind::Constant,
        }
    }
}

/// One cell of a search: minibatch, sampler, hidden layers (0 or 1), schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cell {
    /// Minibatch size.
    pub batch: usize,
    /// Sampler.
    pub method: Method,
    /// Hidden layers: 1, or 0 for the linear baseline.
    pub hidden: usize,
    /// Step-size schedule around the setting's h.
    pub schedule: ScheduleKind,
}

/// Runs every setting of every cell's grid (one chain each; the seed is the setting's index
/// within the grid, so every cell starts from the same draws) and keeps, per cell, the
/// setting with the highest validation log-likelihood among the runs that finished stably.
pub fn search(opts: &RunOptions, cells: &[Cell], label: &str) -> Result<Vec<Row>, ExperimentError> {
    opts.prepare()?;
    let (train, validation, test) = data()?;
    // [no hidden layer (the multinomial logistic regression baseline), one of WIDTH units]
    let nets = [network(&train, 0)?, network(&train, 1)?];
    let configs: Vec<(Cell, Setting)> = cells
        .iter()
        .flat_map(|&c| grid(c.method, opts.quick).into_iter().map(move |s| (c, s)))
        .collect();
    let one = RunOptions {
        chains: 1,
        ..opts.clone()
    };
    let iterations = protocol(opts, BATCHES[0]).iterations;
    let outs = one.par_chains(&configs, iterations, label, |_, &(c, s), _, pb| {
        let k = grid(c.method, opts.quick)
            .iter()
            .position(|x| *x == s)
            .unwrap_or(0);
        let protocol = Protocol {
            schedule: c.schedule,
            ..protocol(opts, c.batch)
        };
        run_one(
            &nets[c.hidden.min(1)],
            (&validation, &test),
            (c.method, s),
            protocol,
            opts.chain_seed(k, 0),
            pb,
        )
    });
    let outs: Vec<Result<RunOut, SamplerError>> = outs.into_iter().flatten().collect();
    let mut rows = Vec::new();
    for &cell in cells {
        let mut best: Option<(Setting, RunOut)> = None;
        let mut searched = Vec::new();
        for ((c, s), out) in configs.iter().zip(&outs) {
            if *c != cell {
                continue;
            }
            match out {
                Ok(o) if o.max_temperature > UNSTABLE => searched.push((
                    *s,
                    Err(format!(
                        "unstable: kinetic temperature reached {:.1e}",
                        o.max_temperature
                    )),
                )),
                Ok(o) => {
                    searched.push((*s, Ok(o.validation)));
                    // The validation log-likelihood decides: 300 images resolve the error
                    // only in steps of 0.33 %, and most settings tie on it.
                    let better = best
                        .as_ref()
                        .is_none_or(|(_, bo)| o.validation.1 > bo.validation.1);
                    if better {
                        best = Some((*s, o.clone()));
                    }
                }
                Err(e) => searched.push((*s, Err(e.to_string()))),
            }
        }
        let Some((chosen, out)) = best else {
            return Err(ExperimentError::Invalid(format!(
                "bnn: every setting of {} ({} schedule) diverged at minibatch {}",
                cell.method.label(),
                cell.schedule.label(),
                cell.batch
            )));
        };
        rows.push(Row {
            cell,
            chosen,
            out,
            searched,
        });
    }
    Ok(rows)
}

/// The table: every sampler on every setting of its grid, for each minibatch size, and SGNHT
/// on the network without a hidden layer (the linear baseline, minibatch 20), all with a
/// constant step. Quick: SGNHT and mSGNHT-S only, minibatch 20, [`grid`]'s quick grid, 5000
/// iterations. Writes `bnn.csv`, `bnn-search.csv`, `bnn-curves.csv`, `bnn-curves.png` and
/// `bnn-loglik.png` into `opts.out`.
pub fn run(opts: &RunOptions) -> Result<BnnResult, ExperimentError> {
    let (methods, batches): (&[Method], &[usize]) = if opts.quick {
        (&[Method::Sgnht, Method::MSgnhtS], &BATCHES[..1])
    } else {
        (&Method::ALL, &BATCHES)
    };
    let cell = |batch, method, hidden| Cell {
        batch,
        method,
        hidden,
        schedule: ScheduleKind::Constant,
    };
    let mut cells: Vec<Cell> = batches
        .iter()
        .flat_map(|&b| methods.iter().map(move |&m| cell(b, m, 1)))
        .collect();
    cells.push(cell(BATCHES[0], Method::Sgnht, 0));
    let rows = search(opts, &cells, "bnn")?;
    let result = BnnResult {
        rows,
        protocol: protocol(opts, batches[0]),
    };
    write_outputs(opts, &result, "bnn")?;
    Ok(result)
}

/// The samplers of the schedule comparison: Zhang et al. 2020's cSGLD and cSGHMC, and SGNHT.
pub const SCHEDULE_METHODS: [Method; 3] = [Method::Sgld, Method::Sghmc, Method::Sgnht];

/// Constant, polynomial and cyclical step sizes ([`ScheduleKind`]) for SGLD, SGHMC and SGNHT
/// at minibatch 20, each schedule with its own validation search over the sampler's grid
/// (quick: SGLD and SGNHT, the quick grid). Writes `bnn-schedules.csv`,
/// `bnn-schedules-search.csv`, `bnn-schedules-curves.csv` and `bnn-schedules-curves.png`.
pub fn schedules(opts: &RunOptions) -> Result<BnnResult, ExperimentError> {
    let methods: &[Method] = if opts.quick {
        &[Method::Sgld, Method::Sgnht]
    } else {
        &SCHEDULE_METHODS
    };
    let cells: Vec<Cell> = methods
        .iter()
        .flat_map(|&method| {
            [
                ScheduleKind::Constant,
                ScheduleKind::Polynomial,
                ScheduleKind::Cyclical,
            ]
            .map(|schedule| Cell {
                batch: BATCHES[0],
                method,
                hidden: 1,
                schedule,
            })
        })
        .collect();
    let rows = search(opts, &cells, "bnn --schedules")?;
    let result = BnnResult {
        rows,
        protocol: protocol(opts, BATCHES[0]),
    };
    write_outputs(opts, &result, "bnn-schedules")?;
    Ok(result)
}

/// The paper's MNIST row for `method` (Ding et al. 2014, App. G, Tables 2–3): test error %,
/// and (a, η).
fn paper(method: Method) -> Option<(f64, (f64, f64))> {
    match method {
        Method::Sghmc => Some((2.25, (0.01, 2e-7))),
        Method::Sgnht => Some((2.15, (0.01, 2e-7))),
        _ => None,
    }
}

/// The table as text.
pub fn table(result: &BnnResult) -> String {
    let p = result.protocol;
    let mut s = format!(
        "BNN on the 8×8 digits (1197 train / 300 validation / 300 test), 64-{WIDTH}-10 ReLU, \
         N(0, 1) prior; {} iterations, burn-in {}, every {THIN}th draw averaged; settings chosen \
         on the validation log-likelihood\n\n",
        p.iterations, p.burn_in
    );
    s += "| sampler | batch | chosen h | A | (a = Ah, η = h²) | val. error % | test error % | test log-lik. | temp. | paper (MNIST): test error %, (a, η) |\n";
    s += "|---|---:|---:|---:|---|---:|---:|---:|---:|---|\n";
    for r in &result.rows {
        let o = &r.out;
        let first_order = matches!(r.cell.method, Method::Sgld | Method::Psgld);
        let reform = if first_order {
            "—".to_string()
        } else {
            format!(
                "({}, {})",
                sig(r.chosen.a * r.chosen.h, 2),
                sig(r.chosen.h * r.chosen.h, 2)
            )
        };
        let constant_net = r.cell.hidden == 1 && r.cell.schedule == ScheduleKind::Constant;
        let paper = paper(r.cell.method)
            .filter(|_| constant_net)
            .map_or("—".to_string(), |(e, (a, eta))| {
                format!("{e}, ({a}, {eta:e})")
            });
        let label = r.label();
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {:.1} | {:.1} | {:.3} | {} | {} |",
            label,
            r.cell.batch,
            sig(r.chosen.h, 2),
            if first_order {
                "—".to_string()
            } else {
                sig(r.chosen.a, 2)
            },
            reform,
            100.0 * o.validation.0,
            100.0 * o.test.0,
            o.test.1,
            if o.temperature.is_nan() {
                "—".to_string()
            } else {
                sig(o.temperature, 3)
            },
            paper
        );
    }
    s
}

fn write_outputs(opts: &RunOptions, result: &BnnResult, stem: &str) -> Result<(), ExperimentError> {
    let mut w = csv::Writer::from_path(opts.out.join(format!("{stem}.csv")))?;
    w.write_record([
        "sampler",
        "batch",
        "h",
        "A",
        "val_error",
        "val_loglik",
        "test_error",
        "test_loglik",
        "temperature",
        "gradient_s",
        "sampler_s",
    ])?;
    for r in &result.rows {
        let o = &r.out;
        w.write_record([
            r.label(),
            r.cell.batch.to_string(),
            r.chosen.h.to_string(),
            r.chosen.a.to_string(),
            o.validation.0.to_string(),
            o.validation.1.to_string(),
            o.test.0.to_string(),
            o.test.1.to_string(),
            o.temperature.to_string(),
            o.seconds.0.to_string(),
            o.seconds.1.to_string(),
        ])?;
    }
    w.flush()?;
    let mut w = csv::Writer::from_path(opts.out.join(format!("{stem}-search.csv")))?;
    w.write_record([
        "sampler",
        "batch",
        "h",
        "A",
        "val_error",
        "val_loglik",
        "error",
    ])?;
    for r in &result.rows {
        for (s, v) in &r.searched {
            let (e, l, msg) = match v {
                Ok((e, l)) => (e.to_string(), l.to_string(), String::new()),
                Err(m) => (String::new(), String::new(), m.clone()),
            };
            w.write_record([
                r.label(),
                r.cell.batch.to_string(),
                s.h.to_string(),
                s.a.to_string(),
                e,
                l,
                msg,
            ])?;
        }
    }
    w.flush()?;
    let mut w = csv::Writer::from_path(opts.out.join(format!("{stem}-curves.csv")))?;
    w.write_record(["sampler", "batch", "iteration", "test_error", "test_loglik"])?;
    for r in &result.rows {
        for &(t, e, l) in &r.out.curve {
            w.write_record([
                r.label(),
                r.cell.batch.to_string(),
                t.to_string(),
                e.to_string(),
                l.to_string(),
            ])?;
        }
    }
    w.flush()?;
    let batch = result.protocol.batch;
    let series = |f: fn(&CurvePoint) -> f64| -> Vec<Series> {
        result
            .rows
            .iter()
            .filter(|r| r.cell.batch == batch)
            .enumerate()
            .map(|(k, r)| {
                Series::new(
                    r.label(),
                    r.out.curve.iter().map(|c| (c.0 as f64, f(c))).collect(),
                    k + 1,
                )
            })
            .collect()
    };
    line_chart(
        &opts.out.join(format!("{stem}-curves.png")),
        &Chart {
            title: &format!(
                "BNN on digits: test error of the predictive average (minibatch {batch})"
            ),
            x_label: "iteration",
            y_label: "test error",
            x_scale: Scale::Linear,
            y_scale: Scale::Log,
        },
        &series(|c| c.1),
    )?;
    line_chart(
        &opts.out.join(format!("{stem}-loglik.png")),
        &Chart {
            title: &format!("BNN on digits: test log-likelihood per image (minibatch {batch})"),
            x_label: "iteration",
            y_label: "test log-likelihood",
            x_scale: Scale::Linear,
            y_scale: Scale::Linear,
        },
        &series(|c| c.2),
    )?;
    Ok(())
}

/// `harness bnn --schedules`: runs [`schedules`] and returns its table.
pub fn schedules_cli(opts: &RunOptions) -> Result<String, ExperimentError> {
    Ok(table(&schedules(opts)?))
}

/// `harness bnn`: runs the table and returns it as text.
pub fn cli(opts: &RunOptions) -> Result<String, ExperimentError> {
    let result = run(opts)?;
    Ok(table(&result))
}
