//! `bnn --depth`: Li et al. 2016 §5, Fig. 4: mSGNHT-E against mSGNHT-S on ReLU networks of depth 2–4, at the paper's step sizes and around them.
//!
//! The paper trains networks of 2, 3 and 4 hidden layers of 100 ReLU units on MNIST with D = 5,
//! h = 10⁻⁴ halved at epoch 20 of 40, and reports that mSGNHT-E fails on the 4-layer network at
//! h = 10⁻⁴ (its training log-likelihood degrades until h is halved) while mSGNHT-S works, so it
//! plots h = 5·10⁻⁵ there. Here, on the digits: the same networks, D = A = 5 (ξᵢ₀ = 5, p₀ ~ N(0, I)),
//! minibatches of [`BATCH`] = 100 (the paper does not say), [`ITERATIONS`] = 24 000 updates — the
//! paper's 40 epochs of 600 minibatches of MNIST; 40 epochs of our 1197 images would be 480
//! updates, too few to compare — with h halved after half of them, for every h of [`STEPS`]:
//! the paper's 5·10⁻⁵ and 10⁻⁴, and larger ones, since a posterior of 1197 images is less stiff
//! than one of 60 000. Every "epoch" of 600 updates records the training negative
//! log-likelihood per image (the whole training split, at the current draw) and the test
//! accuracy of the current draw.
//!
//! Each configuration runs [`SEEDS`] times from different starts (the same starts for both
//! integrators). A run **diverged** if the sampler stopped (a non-finite state); it
//! **collapsed** if its final training NLL is above [`COLLAPSED`] nats per image (a network at
//! chance, ln 10 = 2.30: typically every ReLU dead); it **degraded** if its training NLL at the
//! end of the first half (before h is halved) is more than [`DEGRADED`] nats per image above
//! the lowest it had reached — the paper's "failing as learning progresses".

use super::{data, network};
use crate::experiments::common::{ExperimentError, Progress, RunOptions, sig};
use crate::models::bnn::{Bnn, Classification, EVAL_ROWS, Workspace, score};
use crate::plot::{Series, stacked_line_panels};
use indicatif::ProgressBar;
use rand_pcg::Pcg64;
use sgmcmc::prelude::*;
use std::convert::Infallible;
use std::fmt::Write as _;
use std::ops::ControlFlow;

/// Hidden layers of the networks (Li et al. 2016, Fig. 4).
pub const DEPTHS: [usize; 3] = [2, 3, 4];
/// D = A, the diffusion and initial thermostats (Li et al. 2016 §5: "D is set to 5").
pub const DIFFUSION: f64 = 5.0;
/// Minibatch size.
pub const BATCH: usize = 100;
/// Updates per run: the paper's 40 epochs of MNIST at 100 images per minibatch.
pub const ITERATIONS: usize = 24_000;
/// Updates per recorded "epoch" (ITERATIONS / 40).
pub const EPOCH: usize = 600;
/// Step sizes h (halved after ITERATIONS / 2): the paper's 5·10⁻⁵ and 10⁻⁴, then larger (at
/// 5·10⁻³ every run of depth 3 and 4 diverged or collapsed in a first sweep).
pub const STEPS: [f64; 6] = [5e-5, 1e-4, 2e-4, 5e-4, 1e-3, 2e-3];
/// Runs per configuration.
pub const SEEDS: usize = 3;
/// A final training NLL per image above this is a collapse (chance is ln 10 ≈ 2.30).
pub const COLLAPSED: f64 = 1.0;
/// A rise of the training NLL per image above its best so far by more than this, by the end
/// of the first half, is a degradation.
pub const DEGRADED: f64 = 0.1;

/// mSGNHT-E or mSGNHT-S.
pub const INTEGRATORS: [Integrator; 2] = [Integrator::Euler, Integrator::Splitting];

/// How a run ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Finished; the training NLL did not degrade.
    Ok,
    /// Finished, but the training NLL before halving h had risen [`DEGRADED`] above its best.
    Degraded,
    /// Finished at a training NLL above [`COLLAPSED`].
    Collapsed,
    /// The sampler stopped at this update.
    Diverged(usize),
}

/// One recorded epoch: update, training NLL per image, test accuracy (current draw).
pub type EpochPoint = (usize, f64, f64);

/// One run of the depth experiment.
#[derive(Clone, Debug)]
pub struct DepthRun {
    /// Hidden layers.
    pub depth: usize,
    /// Integrator.
    pub integrator: Integrator,
    /// Initial step size.
    pub h: f64,
    /// Which of the [`SEEDS`] starts.
    pub seed: usize,
    /// The learning curve.
    pub curve: Vec<EpochPoint>,
    /// How it ended.
    pub outcome: Outcome,
}

impl DepthRun {
    /// The last recorded point, if any.
    pub fn last(&self) -> Option<EpochPoint> {
        self.curve.last().copied()
    }
}

fn name(integrator: Integrator) -> &'static str {
    match integrator {
        Integrator::Euler => "mSGNHT-E",
        _ => "mSGNHT-S",
    }
}

/// Records the training NLL and test accuracy every [`EPOCH`] updates.
struct EpochRecorder<'a> {
    bnn: &'a Bnn<'a>,
    test: &'a Classification,
    ws: Workspace,
    curve: Vec<EpochPoint>,
    step: usize,
}

impl EpochRecorder<'_> {
    fn record(&mut self, theta: &[f64]) {
        self.step += 1;
        if !self.step.is_multiple_of(EPOCH) {
            return;
        }
        let train = self.bnn.train;
        let mut probs = vec![0.0; train.len() * train.classes];
        let nll = self
            .bnn
            .add_probabilities(theta, train, &mut probs, &mut self.ws);
        let mut test_probs = vec![0.0; self.test.len() * self.test.classes];
        self.bnn
            .add_probabilities(theta, self.test, &mut test_probs, &mut self.ws);
        let (error, _) = score(&test_probs, 1, self.test);
        self.curve
            .push((self.step, nll / train.len() as f64, 1.0 - error));
    }
}

impl<S: ChainState<f64>> Observer<S, f64> for EpochRecorder<'_> {
    type Stop = Infallible;
    fn observe(
        &mut self,
        _step: u64,
        sampler: &mut S,
        _stats: &StepStats<f64>,
    ) -> ControlFlow<Infallible> {
        self.record(sampler.position());
        ControlFlow::Continue(())
    }
}

/// One run: mSGNHT with `integrator` at h for the first half of `iterations`, h/2 for the
/// second, on the same θ, p and ξ.
fn run_one(
    bnn: &Bnn<'_>,
    test: &Classification,
    (integrator, h, iterations): (Integrator, f64, usize),
    seed: u64,
    pb: &ProgressBar,
) -> Result<DepthRun, ExperimentError> {
    let mut rng = Pcg64::new(seed as u128, 0xde9);
    let mut theta = bnn.arch.initial(&mut rng);
    let d = theta.len();
    let mut p = vec![0.0; d];
    sgmcmc::rng::fill_standard_normal(&mut rng, &mut p);
    let mut xi = vec![DIFFUSION; d];
    let mut work = vec![0.0; MSgnht::<f64>::workspace_len(d)];
    let mut model = bnn.stochastic_gradient(BATCH, seed ^ 0xba7c);
    let mut recorder = EpochRecorder {
        bnn,
        test,
        ws: Workspace::new(&bnn.arch, EVAL_ROWS),
        curve: Vec::new(),
        step: 0,
    };
    let mut outcome = Outcome::Ok;
    let half = iterations / 2;
    for (k, (h, steps)) in [(h, half), (h / 2.0, iterations - half)]
        .into_iter()
        .enumerate()
    {
        let params = SgnhtParams::new(h)
            .with_diffusion(DIFFUSION)
            .with_integrator(integrator);
        let mut sampler = MSgnht::resume(params, &mut theta, &mut p, &mut xi, &mut work)
            .map_err(|e| ExperimentError::Invalid(format!("depth: {e}")))?;
        let mut observer = Progress::new(pb, &mut recorder);
        if let Err(e) = sampler.run(&mut model, &mut rng, steps as u64, &mut observer) {
            outcome = Outcome::Diverged(k * half + e.completed as usize + 1);
            break;
        }
    }
    let curve = recorder.curve;
    if outcome == Outcome::Ok {
        let before_halving: Vec<f64> = curve.iter().filter(|c| c.0 <= half).map(|c| c.1).collect();
        let best = before_halving.iter().copied().fold(f64::INFINITY, f64::min);
        // (A NaN NLL is a collapse too.)
        if curve.last().is_none_or(|c| c.1.is_nan() || c.1 > COLLAPSED) {
            outcome = Outcome::Collapsed;
        } else if let Some(&at_half) = before_halving.last()
            && at_half > best + DEGRADED
        {
            outcome = Outcome::Degraded;
        }
    }
    Ok(DepthRun {
        depth: bnn.arch.depth(),
        integrator,
        h,
        seed: 0,
        curve,
        outcome,
    })
}

/// What [`depth`] returns.
#[derive(Clone, Debug)]
pub struct DepthResult {
    /// Every run: depths outer, then step sizes, then seeds, then integrators (E, S).
    pub runs: Vec<DepthRun>,
    /// Updates per run.
    pub iterations: usize,
}

/// Runs every depth × step size × integrator (quick: depth 2, h ∈ {10⁻⁴, 5·10⁻³}, 2400
/// updates). Writes `bnn-depth.csv`, `bnn-depth-curves.csv` and `bnn-depth.png` into `opts.out`.
pub fn depth(opts: &RunOptions) -> Result<DepthResult, ExperimentError> {
    opts.prepare()?;
    let (train, _validation, test) = data()?;
    let (depths, steps, iterations, seeds): (&[usize], &[f64], usize, usize) = if opts.quick {
        (&[2], &[1e-4, 2e-3], 2400, 1)
    } else {
        (&DEPTHS, &STEPS, ITERATIONS, SEEDS)
    };
    let nets = depths
        .iter()
        .map(|&depth| network(&train, depth))
        .collect::<Result<Vec<_>, _>>()?;
    let configs: Vec<(usize, f64, usize, Integrator)> = (0..depths.len())
        .flat_map(|k| {
            steps
                .iter()
                .flat_map(move |&h| (0..seeds).flat_map(move |c| INTEGRATORS.map(|i| (k, h, c, i))))
        })
        .collect();
    let one = RunOptions {
        chains: 1,
        ..opts.clone()
    };
    let outs = one.par_chains(
        &configs,
        iterations,
        "bnn --depth",
        |_, &(k, h, c, i), _, pb| {
            // Both integrators (and every h) of a depth start from the same draws.
            let run = run_one(
                &nets[k],
                &test,
                (i, h, iterations),
                opts.chain_seed(k, c),
                pb,
            )?;
            Ok::<_, ExperimentError>(DepthRun { seed: c, ..run })
        },
    );
    let runs = outs.into_iter().flatten().collect::<Result<Vec<_>, _>>()?;
    let result = DepthResult { runs, iterations };
    write_outputs(opts, &result)?;
    Ok(result)
}

/// The outcomes of a configuration's runs as a table cell ("3 ok", "2 ok, 1 degraded").
fn outcome_cell(runs: &[&DepthRun]) -> String {
    let count = |f: fn(&Outcome) -> bool| runs.iter().filter(|r| f(&r.outcome)).count();
    let parts = [
        (count(|o| *o == Outcome::Ok), "ok"),
        (count(|o| *o == Outcome::Degraded), "**degraded**"),
        (count(|o| *o == Outcome::Collapsed), "**collapsed**"),
        (count(|o| matches!(o, Outcome::Diverged(_))), "**diverged**"),
    ];
    parts
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The median of the finite values (NaN if none).
fn median(mut v: Vec<f64>) -> f64 {
    v.retain(|x| x.is_finite());
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => 0.5 * (v[n / 2 - 1] + v[n / 2]),
    }
}

/// The depth table as text: per depth and h, each integrator's outcomes over the seeds and the
/// medians of the final training NLL and test accuracy (of the runs that finished).
pub fn depth_table(result: &DepthResult) -> String {
    let seeds = result.runs.iter().map(|r| r.seed + 1).max().unwrap_or(0);
    let mut s = format!(
        "Li et al. 2016 Fig. 4 on the digits: ReLU networks of 100 units per layer, D = {DIFFUSION}, \
         minibatch {BATCH}, {} updates with h halved after half, {seeds} starts per row; final \
         training NLL per image and test accuracy of the current draw (medians over the runs that \
         finished)\n\n",
        result.iterations
    );
    s +=
        "| depth | h | mSGNHT-E | train NLL | test acc. % | mSGNHT-S | train NLL | test acc. % |\n";
    s += "|---:|---:|---|---:|---:|---|---:|---:|\n";
    let mut keys: Vec<(usize, f64)> = result.runs.iter().map(|r| (r.depth, r.h)).collect();
    keys.dedup();
    for (depth, h) in keys {
        let cells = |integrator: Integrator| {
            let runs: Vec<&DepthRun> = result
                .runs
                .iter()
                .filter(|r| r.depth == depth && r.h == h && r.integrator == integrator)
                .collect();
            let finished = || {
                runs.iter()
                    .filter(|r| !matches!(r.outcome, Outcome::Diverged(_)))
                    .filter_map(|r| r.last())
            };
            let nll = median(finished().map(|c| c.1).collect());
            let acc = median(finished().map(|c| c.2).collect());
            let show =
                |x: f64, f: &dyn Fn(f64) -> String| if x.is_nan() { "—".into() } else { f(x) };
            format!(
                "{} | {} | {}",
                outcome_cell(&runs),
                show(nll, &|x| sig(x, 2)),
                show(acc, &|x| format!("{:.1}", 100.0 * x))
            )
        };
        let _ = writeln!(
            s,
            "| {depth} | {h} | {} | {} |",
            cells(Integrator::Euler),
            cells(Integrator::Splitting)
        );
    }
    s
}

fn write_outputs(opts: &RunOptions, result: &DepthResult) -> Result<(), ExperimentError> {
    let mut w = csv::Writer::from_path(opts.out.join("bnn-depth.csv"))?;
    w.write_record([
        "depth",
        "h",
        "seed",
        "integrator",
        "outcome",
        "train_nll",
        "test_accuracy",
    ])?;
    for r in &result.runs {
        let (nll, acc) = r.last().map_or((f64::NAN, f64::NAN), |c| (c.1, c.2));
        w.write_record([
            r.depth.to_string(),
            r.h.to_string(),
            r.seed.to_string(),
            name(r.integrator).to_string(),
            format!("{:?}", r.outcome),
            nll.to_string(),
            acc.to_string(),
        ])?;
    }
    w.flush()?;
    let mut w = csv::Writer::from_path(opts.out.join("bnn-depth-curves.csv"))?;
    w.write_record([
        "depth",
        "h",
        "seed",
        "integrator",
        "update",
        "train_nll",
        "test_accuracy",
    ])?;
    for r in &result.runs {
        for &(t, nll, acc) in &r.curve {
            w.write_record([
                r.depth.to_string(),
                r.h.to_string(),
                r.seed.to_string(),
                name(r.integrator).to_string(),
                t.to_string(),
                nll.to_string(),
                acc.to_string(),
            ])?;
        }
    }
    w.flush()?;
    // One panel per depth: training NLL of both integrators from the first start, at the
    // paper's h = 10⁻⁴ (solid) and at 5·10⁻⁴ (dashed), where the deepest network starts to fail.
    let mut panels = Vec::new();
    let mut depths: Vec<usize> = result.runs.iter().map(|r| r.depth).collect();
    depths.dedup();
    for depth in depths {
        let series = result
            .runs
            .iter()
            .filter(|r| r.depth == depth && r.seed == 0 && (r.h == 1e-4 || r.h == 5e-4))
            .map(|r| Series {
                label: format!("{} h={}", name(r.integrator), r.h),
                points: r.curve.iter().map(|c| (c.0 as f64, c.1)).collect(),
                color: if r.integrator == Integrator::Euler {
                    1
                } else {
                    2
                },
                dashed: r.h != 1e-4,
            })
            .collect();
        panels.push((format!("{depth} hidden layers"), series));
    }
    stacked_line_panels(
        &opts.out.join("bnn-depth.png"),
        "mSGNHT-E vs mSGNHT-S: training NLL per image (h halved at half time)",
        "update",
        "training NLL",
        &panels,
    )?;
    Ok(())
}

/// `harness bnn --depth`: runs [`depth`] and returns its table.
pub fn depth_cli(opts: &RunOptions) -> Result<String, ExperimentError> {
    Ok(depth_table(&depth(opts)?))
}
