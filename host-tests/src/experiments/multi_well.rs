//! `multi-well`: SGNHT vs SGMGT vs SGMGT-D (a = 2) on a 2-d potential with five isolated modes
//! (Zhang et al. 2017 §4.1, Fig. 3).
//!
//! The potential is ours ([`crate::models::multi_well`]: five unit Gaussians on a pentagon of
//! radius 7, barriers ≈ 7.8 units between neighbours), since the paper's is in its missing
//! supplement. The gradient noise is ∇Ũ = ∇U + N(0, 2B/h) per coordinate with B = 1, as in the
//! double well of 000 §3; γ = 1. Every method gets the same number of steps, each one gradient
//! evaluation, and starts in the same mode (μ₁, the top of the pentagon) with a momentum drawn from
//! its kinetic energy's marginal. All use the Euler scheme (000 Alg. 1; 001's SM gives SGMGT with
//! Euler).
//!
//! The settings are tuned on a small grid per method (the paper: "we try a number of
//! hyperparameter settings ... and present the best results"): every grid point runs
//! [`TUNE_CHAINS`] chains on seeds disjoint from the final run's; among the points whose potential
//! temperature E[U] − U(μ) is within 10 % of the truth (an overheated chain visits modes for the
//! wrong reason), the one with the most modes visited per chain, then the most switches, wins.
//! The final run then repeats the winner on fresh seeds, so luck in the tuning does not carry
//! over. Quick mode skips the tuning and uses [`tuned`], the full run's winners.

use super::common::{ExperimentError, RunOptions, sig};
use crate::models::multi_well::{MODES, ModeTracker, MultiWell};
use crate::plot::{DensityGrid, ScatterPanel, Series, density_scatter_panels, stacked_line_panels};
use crate::report::{Table, write_columns};
use rand_pcg::Pcg64;
use rayon::prelude::*;
use sgmcmc::sampler::{Sgnht, SgnhtParams};
use sgmcmc::{ChainState, Integrator, Sampler, StepError, Workspace};
use std::time::Instant;

/// Gradient-noise level B (000 §3, 001 §4.1).
pub const B: f64 = 1.0;
/// SGMGT's friction rescaling γ (001 §4.1).
pub const GAMMA: f64 = 1.0;
/// Monomial parameter a of SGMGT and SGMGT-D (001 §4.1).
pub const MONOMIAL_A: f64 = 2.0;
/// Chains per grid point in the tuning.
pub const TUNE_CHAINS: usize = 2;

/// The three samplers of Fig. 3.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// SGNHT (000 Alg. 1; Gaussian kinetics, one scalar thermostat, A = 0).
    Sgnht,
    /// SGMGT with a = 2: softened monomial-gamma kinetics, thermostat, resampling of p and ξ.
    Sgmgt,
    /// SGMGT-D with a = 2: SGMGT plus first-order Langevin terms on θ and ξ (σ_θ, σ_ξ > 0).
    SgmgtD,
}

impl Method {
    /// Fig. 3's order.
    pub const ALL: [Method; 3] = [Method::Sgnht, Method::Sgmgt, Method::SgmgtD];

    /// Label for tables and figures.
    pub fn label(&self) -> &'static str {
        match self {
            Method::Sgnht => "SGNHT",
            Method::Sgmgt => "SGMGT (a = 2)",
            Method::SgmgtD => "SGMGT-D (a = 2)",
        }
    }

    /// A file-name-safe tag.
    pub fn tag(&self) -> &'static str {
        match self {
            Method::Sgnht => "sgnht",
            Method::Sgmgt => "sgmgt",
            Method::SgmgtD => "sgmgt-d",
        }
    }

    /// Modes visited in the paper's Fig. 3 (§4.1).
    pub fn paper_modes(&self) -> usize {
        match self {
            Method::Sgnht => 1,
            Method::Sgmgt => 3,
            Method::SgmgtD => 5,
        }
    }

    /// Whether the sampler exists in `sgmcmc` yet.
    pub fn available(&self) -> bool {
        matches!(self, Method::Sgnht)
    }
}

/// A sampler's tunable settings (the ones a method does not use are ignored).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    /// Step size h.
    pub h: f64,
    /// Softening c of the monomial-gamma kinetics (001 eq. 12).
    pub c: f64,
    /// σ_p: injected momentum noise (SGNHT's A).
    pub sigma_p: f64,
    /// σ_θ: first-order Langevin term on θ (SGMGT-D).
    pub sigma_theta: f64,
    /// σ_ξ: first-order Langevin term on ξ (SGMGT-D).
    pub sigma_xi: f64,
    /// Resampling period of p in steps (0: never).
    pub resample_p: usize,
    /// Resampling period of ξ in steps (0: never).
    pub resample_xi: usize,
}

impl Settings {
    /// SGNHT with step h and A = 0 (the gradient noise is the only noise, as in 000 §3).
    pub const fn sgnht(h: f64) -> Self {
        Settings {
            h,
            c: f64::INFINITY,
            sigma_p: 0.0,
            sigma_theta: 0.0,
            sigma_xi: 0.0,
            resample_p: 0,
            resample_xi: 0,
        }
    }

    /// The settings that matter for `method`, as text.
    pub fn describe(&self, method: Method) -> String {
        match method {
            Method::Sgnht => format!("h = {}, A = {}", self.h, self.sigma_p),
            Method::Sgmgt => format!(
                "h = {}, c = {}, σ_p = {}, T_p = {}, T_ξ = {}",
                self.h, self.c, self.sigma_p, self.resample_p, self.resample_xi
            ),
            Method::SgmgtD => format!(
                "h = {}, c = {}, σ_p = {}, σ_θ = {}, σ_ξ = {}, T_p = {}, T_ξ = {}",
                self.h,
                self.c,
                self.sigma_p,
                self.sigma_theta,
                self.sigma_xi,
                self.resample_p,
                self.resample_xi
            ),
        }
    }
}

/// The settings the full run's tuning chose (used directly in quick mode).
pub fn tuned(method: Method) -> Settings {
    match method {
        Method::Sgnht => Settings::sgnht(0.1),
        Method::Sgmgt | Method::SgmgtD => Settings::sgnht(0.1),
    }
}

/// The tuning grid of `method`: SGNHT over h; SGMGT over h × c × T_ξ ∈ {100 (the paper's),
/// 0 (never)}; SGMGT-D also over σ_θ × σ_ξ. σ_p = 1 (the sampler's default) and T_p = 100 (the
/// paper's) throughout.
pub fn tuning_grid(method: Method) -> Vec<Settings> {
    const H: [f64; 3] = [0.05, 0.1, 0.2];
    const C: [f64; 3] = [2.0, 5.0, 10.0];
    const T_XI: [usize; 2] = [100, 0];
    let base = |h, c, t_xi| Settings {
        h,
        c,
        sigma_p: 1.0,
        sigma_theta: 0.0,
        sigma_xi: 0.0,
        resample_p: 100,
        resample_xi: t_xi,
    };
    let mut out = Vec::new();
    match method {
        Method::Sgnht => {
            out.extend([0.02, 0.05, 0.1, 0.2, 0.3].map(Settings::sgnht));
        }
        Method::Sgmgt => {
            for h in H {
                for c in C {
                    for t in T_XI {
                        out.push(base(h, c, t));
                    }
                }
            }
        }
        Method::SgmgtD => {
            for h in H {
                for c in C {
                    for t in T_XI {
                        for sigma_theta in [0.01, 0.1] {
                            for sigma_xi in [0.1, 1.0] {
                                out.push(Settings {
                                    sigma_theta,
                                    sigma_xi,
                                    ..base(h, c, t)
                                });
                            }
                        }
                    }
                }
            }
        }
    }
    out
}

/// What one chain produced.
#[derive(Clone, Debug)]
pub struct ChainRun {
    /// Modes visited, switches, time per mode.
    pub tracker: ModeTracker,
    /// Mean of U(θ) − U(μ) over all steps (the potential temperature; ≈ 1 at equilibrium).
    pub potential_temperature: f64,
    /// Mean thermostat value over the second half.
    pub mean_xi: f64,
    /// (step, θ₁, θ₂) every `thin` steps.
    pub draws: Vec<(usize, f64, f64)>,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// Runs one chain of `method` for `steps` steps from μ₁, keeping every `thin`-th draw.
#[allow(clippy::too_many_arguments)]
pub fn run_chain(
    model: &MultiWell,
    method: Method,
    settings: &Settings,
    steps: usize,
    thin: usize,
    seed: u64,
    pb: &indicatif::ProgressBar,
) -> Result<ChainRun, ExperimentError> {
    let fail = |e: StepError| ExperimentError::Step(method.label().into(), e);
    let bad =
        |e: &dyn std::fmt::Display| ExperimentError::Invalid(format!("{}: {e}", method.label()));
    let start = Instant::now();
    let mut rng = Pcg64::new(seed as u128, 0x3a11);
    let mut grad = model.noisy_gradient(settings.h, B, seed ^ 0x5eed_3a11);
    let mut theta = model.means()[0];
    let (mut p, mut g, mut s) = ([0.0; 2], [0.0; 2], [0.0; 2]);
    let u_min = model.potential(&model.means()[0]);
    let thin = thin.max(1);
    let mut tracker = ModeTracker::new();
    let mut draws = Vec::with_capacity(steps / thin + 1);
    let (mut sum_u, mut sum_xi) = (0.0, 0.0);
    let mut observe = |t: usize, th: &[f64], xi: f64| {
        tracker.observe(model.mode_of(th));
        sum_u += model.potential(th) - u_min;
        if t >= steps / 2 {
            sum_xi += xi;
        }
        if t.is_multiple_of(thin) {
            draws.push((t, th[0], th[1]));
        }
    };
    match method {
        Method::Sgnht => {
            for x in &mut p {
                *x = sgmcmc::rng::standard_normal_f64(&mut rng);
            }
            let prm = SgnhtParams::new(settings.h, settings.sigma_p).map_err(|e| bad(&e))?;
            let mut smp = Sgnht::new(
                prm,
                Integrator::Euler,
                &mut theta,
                &mut p,
                Workspace::new(&mut g, &mut s),
            )
            .map_err(|e| bad(&e))?;
            for t in 0..steps {
                let st = smp.step(&mut grad, &mut rng).map_err(fail)?;
                observe(t, smp.position(), st.thermostat.unwrap_or(0.0));
                tick(pb, t);
            }
        }
        Method::Sgmgt | Method::SgmgtD => return Err(bad(&"not in sgmcmc yet")),
    }
    pb.inc((steps % 4096) as u64);
    let n = steps.max(1) as f64;
    Ok(ChainRun {
        tracker,
        potential_temperature: sum_u / n,
        mean_xi: sum_xi / (steps - steps / 2).max(1) as f64,
        draws,
        seconds: start.elapsed().as_secs_f64(),
    })
}

fn tick(pb: &indicatif::ProgressBar, t: usize) {
    if t % 4096 == 4095 {
        pb.inc(4096);
    }
}

/// One method's final run.
#[derive(Clone, Debug)]
pub struct MethodRun {
    /// The method.
    pub method: Method,
    /// Its (tuned) settings.
    pub settings: Settings,
    /// One entry per chain.
    pub chains: Vec<ChainRun>,
    /// All chains' counts added.
    pub pooled: ModeTracker,
}

impl MethodRun {
    /// Distinct modes visited by all chains together.
    pub fn modes_visited(&self) -> usize {
        self.pooled.modes_visited()
    }
    /// Modes visited by each chain.
    pub fn per_chain_modes(&self) -> Vec<usize> {
        self.chains
            .iter()
            .map(|c| c.tracker.modes_visited())
            .collect()
    }
    /// Mode switches, all chains.
    pub fn switches(&self) -> u64 {
        self.pooled.switches
    }
    /// Mean potential temperature over chains.
    pub fn potential_temperature(&self) -> f64 {
        self.chains
            .iter()
            .map(|c| c.potential_temperature)
            .sum::<f64>()
            / self.chains.len().max(1) as f64
    }
}

/// One grid point of the tuning.
#[derive(Clone, Debug)]
pub struct TuneRow {
    /// The method.
    pub method: Method,
    /// The grid point.
    pub settings: Settings,
    /// Mean over the tuning chains of the modes each visited.
    pub modes_per_chain: f64,
    /// Switches, all tuning chains.
    pub switches: u64,
    /// Mean potential temperature.
    pub potential_temperature: f64,
    /// Within 10 % of the true potential temperature (or the chain failed: false).
    pub accurate: bool,
    /// The sampler stopped (non-finite state).
    pub failed: bool,
    /// Chosen for the final run.
    pub chosen: bool,
    /// The most modes (then switches) of this method's grid, ignoring the temperature check:
    /// what "the best result" would be if exploration alone counted.
    pub best_any: bool,
}

/// The experiment's results.
#[derive(Clone, Debug)]
pub struct MultiWellResult {
    /// One entry per available method, in [`Method::ALL`] order.
    pub runs: Vec<MethodRun>,
    /// The tuning grid (empty in quick mode).
    pub tuning: Vec<TuneRow>,
    /// True basin masses.
    pub true_masses: [f64; MODES],
    /// True potential temperature E[U] − U(μ).
    pub true_temperature: f64,
    /// Steps (gradient evaluations) per chain.
    pub steps: usize,
    /// Barrier between neighbouring modes.
    pub barrier: f64,
    /// Wall-clock seconds of the whole experiment.
    pub seconds: f64,
}

/// Steps per chain: 10⁶ (quick: 10⁵).
pub fn steps_for(opts: &RunOptions) -> usize {
    if opts.quick { 100_000 } else { 1_000_000 }
}

/// The settings each method runs with.
type Chosen = Vec<(Method, Settings)>;

fn tune(
    model: &MultiWell,
    opts: &RunOptions,
    steps: usize,
    true_t: f64,
) -> Result<(Vec<TuneRow>, Chosen), ExperimentError> {
    let points: Vec<(Method, Settings)> = Method::ALL
        .into_iter()
        .filter(Method::available)
        .flat_map(|m| tuning_grid(m).into_iter().map(move |s| (m, s)))
        .collect();
    let tasks: Vec<(usize, usize)> = (0..points.len())
        .flat_map(|k| (0..TUNE_CHAINS).map(move |c| (k, c)))
        .collect();
    let pb = opts.progress_bar((tasks.len() * steps) as u64, "multi-well tuning");
    let outs: Vec<Result<ChainRun, ExperimentError>> = tasks
        .par_iter()
        .map(|&(k, c)| {
            let (m, s) = points[k];
            // Seeds disjoint from the final run's (configurations 1000 + k).
            run_chain(
                model,
                m,
                &s,
                steps,
                steps,
                opts.chain_seed(1000 + k, c),
                &pb,
            )
        })
        .collect();
    pb.finish_and_clear();
    let mut rows = Vec::new();
    let mut outs = outs.into_iter();
    for &(method, settings) in &points {
        let chains: Vec<Result<ChainRun, ExperimentError>> =
            outs.by_ref().take(TUNE_CHAINS).collect();
        let failed = chains.iter().any(Result::is_err);
        let ok: Vec<ChainRun> = chains.into_iter().filter_map(Result::ok).collect();
        let n = ok.len().max(1) as f64;
        let temp = ok.iter().map(|c| c.potential_temperature).sum::<f64>() / n;
        rows.push(TuneRow {
            method,
            settings,
            modes_per_chain: ok
                .iter()
                .map(|c| c.tracker.modes_visited() as f64)
                .sum::<f64>()
                / n,
            switches: ok.iter().map(|c| c.tracker.switches).sum(),
            potential_temperature: temp,
            accurate: !failed && (temp - true_t).abs() <= 0.1 * true_t,
            failed,
            chosen: false,
            best_any: false,
        });
    }
    let explores = |a: &&TuneRow, b: &&TuneRow| {
        a.modes_per_chain
            .total_cmp(&b.modes_per_chain)
            .then(a.switches.cmp(&b.switches))
    };
    let mut chosen = Vec::new();
    for m in Method::ALL.into_iter().filter(Method::available) {
        let of = |i: &usize| rows[*i].method == m;
        let idx: Vec<usize> = (0..rows.len()).filter(of).collect();
        let accurate = idx
            .iter()
            .copied()
            .filter(|&i| rows[i].accurate)
            .max_by(|&a, &b| explores(&&rows[a], &&rows[b]));
        // No accurate point: the one closest to the true temperature (flagged in the report).
        let closest = idx
            .iter()
            .copied()
            .filter(|&i| !rows[i].failed)
            .min_by(|&a, &b| {
                (rows[a].potential_temperature - true_t)
                    .abs()
                    .total_cmp(&(rows[b].potential_temperature - true_t).abs())
            });
        let any = idx
            .iter()
            .copied()
            .filter(|&i| !rows[i].failed)
            .max_by(|&a, &b| explores(&&rows[a], &&rows[b]));
        if let Some(i) = any {
            rows[i].best_any = true;
        }
        let settings = match accurate.or(closest) {
            Some(i) => {
                rows[i].chosen = true;
                rows[i].settings
            }
            None => tuned(m),
        };
        chosen.push((m, settings));
    }
    Ok((rows, chosen))
}

/// Runs the experiment, writes CSVs and figures into `opts.out`, returns the numbers.
pub fn run(opts: &RunOptions) -> Result<MultiWellResult, ExperimentError> {
    opts.prepare()?;
    let start = Instant::now();
    let model = MultiWell::standard();
    let steps = steps_for(opts);
    let true_temperature = model.mean_potential() - model.potential(&model.means()[0]);
    let (tuning, chosen) = if opts.quick {
        (
            Vec::new(),
            Method::ALL
                .into_iter()
                .filter(Method::available)
                .map(|m| (m, tuned(m)))
                .collect(),
        )
    } else {
        tune(&model, opts, steps, true_temperature)?
    };
    let tasks: Vec<(usize, usize)> = (0..chosen.len())
        .flat_map(|k| (0..opts.chains).map(move |c| (k, c)))
        .collect();
    let pb = opts.progress_bar((tasks.len() * steps) as u64, "multi-well");
    let thin = (steps / 10_000).max(1);
    let outs: Vec<Result<ChainRun, ExperimentError>> = tasks
        .par_iter()
        .map(|&(k, c)| {
            let (m, s) = chosen[k];
            run_chain(&model, m, &s, steps, thin, opts.chain_seed(k, c), &pb)
        })
        .collect();
    pb.finish_and_clear();
    let mut outs = outs.into_iter().collect::<Result<Vec<_>, _>>()?.into_iter();
    let mut runs = Vec::new();
    for &(method, settings) in &chosen {
        let chains: Vec<ChainRun> = outs.by_ref().take(opts.chains).collect();
        let mut pooled = ModeTracker::new();
        for c in &chains {
            pooled.merge(&c.tracker);
        }
        runs.push(MethodRun {
            method,
            settings,
            chains,
            pooled,
        });
    }
    let result = MultiWellResult {
        runs,
        tuning,
        true_masses: model.basin_masses(),
        true_temperature,
        steps,
        barrier: model.barrier(0, 1),
        seconds: start.elapsed().as_secs_f64(),
    };
    write_outputs(&model, opts, &result)?;
    Ok(result)
}

fn write_outputs(
    model: &MultiWell,
    opts: &RunOptions,
    r: &MultiWellResult,
) -> Result<(), ExperimentError> {
    table(r).write_csv(&opts.out.join("multi-well.csv"))?;
    per_chain_table(r).write_csv(&opts.out.join("multi-well-chains.csv"))?;
    occupancy_table(r).write_csv(&opts.out.join("multi-well-occupancy.csv"))?;
    if !r.tuning.is_empty() {
        tuning_table(r).write_csv(&opts.out.join("multi-well-tuning.csv"))?;
    }
    // Thinned draws, one file per method: step, chain, θ₁, θ₂, mode (0 = none, else 1..5).
    for run in &r.runs {
        let mut cols: [Vec<f64>; 5] = Default::default();
        for (c, ch) in run.chains.iter().enumerate() {
            for &(t, x, y) in &ch.draws {
                cols[0].push(t as f64);
                cols[1].push(c as f64);
                cols[2].push(x);
                cols[3].push(y);
                cols[4].push(model.mode_of(&[x, y]).map_or(0.0, |k| (k + 1) as f64));
            }
        }
        write_columns(
            &opts
                .out
                .join(format!("multi-well-draws-{}.csv", run.method.tag())),
            &["step", "chain", "theta1", "theta2", "mode"],
            &[&cols[0], &cols[1], &cols[2], &cols[3], &cols[4]],
        )?;
    }
    // Heat map of the truth with each method's pooled thinned draws on top.
    let (lo, hi) = (-12.0, 12.0);
    let grid = model.density_grid(lo, hi, 210);
    // Mode numbers just outside each mode, away from the centre.
    let labels: Vec<((f64, f64), String)> = model
        .means()
        .iter()
        .enumerate()
        .map(|(k, m)| ((m[0] * 1.42 - 0.3, m[1] * 1.42 + 0.5), format!("{}", k + 1)))
        .collect();
    let clouds: Vec<Vec<(f64, f64)>> = r
        .runs
        .iter()
        .map(|run| {
            run.chains
                .iter()
                .flat_map(|c| c.draws.iter().map(|&(_, x, y)| (x, y)))
                .collect()
        })
        .collect();
    let mut panels = vec![ScatterPanel {
        title: format!("true density (5 modes, barriers {:.1})", r.barrier),
        points: &[],
        color: 0,
    }];
    for (run, cloud) in r.runs.iter().zip(&clouds) {
        panels.push(ScatterPanel {
            title: format!(
                "{}: {} mode(s), {} switches",
                run.method.label(),
                run.modes_visited(),
                run.switches()
            ),
            points: cloud,
            color: 2,
        });
    }
    density_scatter_panels(
        &opts.out.join("multi-well-samples.png"),
        &format!(
            "Multi-well (001 §4.1, Fig. 3 left): {} steps × {} chain(s) per method, B = {B}",
            r.steps,
            r.runs.first().map_or(0, |x| x.chains.len())
        ),
        DensityGrid {
            lo,
            hi,
            values: &grid,
            labels: &labels,
        },
        &panels,
        2,
    )?;
    // Trace plots of θ₁ (chain 1), with the modes' θ₁ as dashed lines.
    let refs: Vec<Series> = model
        .means()
        .iter()
        .map(|m| Series {
            label: String::new(),
            points: vec![(0.0, m[0]), (r.steps as f64, m[0])],
            color: 0,
            dashed: true,
        })
        .collect();
    let trace_panels: Vec<(String, Vec<Series>)> = r
        .runs
        .iter()
        .map(|run| {
            let pts: Vec<(f64, f64)> = run.chains[0]
                .draws
                .iter()
                .map(|&(t, x, _)| (t as f64, x))
                .collect();
            let mut s = refs.clone();
            s.push(Series::new(run.method.label(), pts, 1));
            (
                format!(
                    "{} ({})",
                    run.method.label(),
                    run.settings.describe(run.method)
                ),
                s,
            )
        })
        .collect();
    stacked_line_panels(
        &opts.out.join("multi-well-traces.png"),
        "Multi-well: θ₁ of chain 1 (001 Fig. 3 right); dashed: the modes' θ₁",
        "iteration (= gradient evaluations)",
        "θ₁",
        &trace_panels,
    )?;
    Ok(())
}

/// method | modes visited (ours) | paper | switches, plus the settings and the temperature check.
pub fn table(r: &MultiWellResult) -> Table {
    let mut t = Table::new([
        "method",
        "modes visited (ours, pooled)",
        "per chain",
        "paper",
        "switches",
        "E[U] − U(μ)",
        "settings",
    ]);
    for run in &r.runs {
        t.row([
            run.method.label().to_string(),
            run.modes_visited().to_string(),
            run.per_chain_modes()
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" "),
            run.method.paper_modes().to_string(),
            run.switches().to_string(),
            format!(
                "{} (truth {})",
                sig(run.potential_temperature(), 3),
                sig(r.true_temperature, 3)
            ),
            run.settings.describe(run.method),
        ]);
    }
    t
}

/// Per chain: modes, switches, time per mode, temperature, mean ξ, seconds.
pub fn per_chain_table(r: &MultiWellResult) -> Table {
    let mut header = vec![
        "method".to_string(),
        "chain".into(),
        "modes visited".into(),
        "switches".into(),
    ];
    header.extend((1..=MODES).map(|k| format!("time in mode {k}")));
    header.extend([
        "time outside".into(),
        "E[U] − U(μ)".into(),
        "mean ξ (2nd half)".into(),
        "seconds".into(),
    ]);
    let mut t = Table::new(header);
    for run in &r.runs {
        for (c, ch) in run.chains.iter().enumerate() {
            let n = ch.tracker.steps().max(1) as f64;
            let mut row = vec![
                run.method.label().to_string(),
                (c + 1).to_string(),
                ch.tracker.modes_visited().to_string(),
                ch.tracker.switches.to_string(),
            ];
            row.extend(ch.tracker.fractions().iter().map(|f| format!("{f:.4}")));
            row.push(format!("{:.4}", ch.tracker.outside as f64 / n));
            row.push(sig(ch.potential_temperature, 4));
            row.push(sig(ch.mean_xi, 4));
            row.push(format!("{:.2}", ch.seconds));
            t.row(row);
        }
    }
    t
}

/// Pooled time in each mode against its true mass.
pub fn occupancy_table(r: &MultiWellResult) -> Table {
    let mut header = vec!["method".to_string()];
    header.extend((1..=MODES).map(|k| format!("mode {k}")));
    header.push("outside".into());
    let mut t = Table::new(header);
    let mut truth = vec!["true mass".to_string()];
    truth.extend(r.true_masses.iter().map(|m| format!("{m:.4}")));
    truth.push(format!("{:.4}", 1.0 - r.true_masses.iter().sum::<f64>()));
    t.row(truth);
    for run in &r.runs {
        let n = run.pooled.steps().max(1) as f64;
        let mut row = vec![run.method.label().to_string()];
        row.extend(run.pooled.fractions().iter().map(|f| format!("{f:.4}")));
        row.push(format!("{:.4}", run.pooled.outside as f64 / n));
        t.row(row);
    }
    t
}

/// The tuning grid with what each point did.
pub fn tuning_table(r: &MultiWellResult) -> Table {
    let mut t = Table::new([
        "method",
        "settings",
        "modes per chain",
        "switches",
        "E[U] − U(μ)",
        "within 10 %",
        "chosen",
        "most modes (any T)",
    ]);
    for row in &r.tuning {
        t.row([
            row.method.label().to_string(),
            row.settings.describe(row.method),
            sig(row.modes_per_chain, 3),
            row.switches.to_string(),
            if row.failed {
                "failed".into()
            } else {
                sig(row.potential_temperature, 3)
            },
            if row.accurate { "yes" } else { "no" }.into(),
            if row.chosen { "*" } else { "" }.into(),
            if row.best_any { "+" } else { "" }.into(),
        ]);
    }
    t
}

/// The text the CLI prints: the main table, the occupancy table and the tuning grid.
pub fn report(r: &MultiWellResult, opts: &RunOptions) -> String {
    let mut s = format!(
        "Multi-well (Zhang et al. 2017 §4.1, Fig. 3): 5 unit Gaussians on a pentagon of radius {}, \
         barrier {:.2} between neighbours, B = {B}, γ = {GAMMA}, a = {MONOMIAL_A}; {} steps \
         (gradient evaluations) per chain, {} chain(s), all starting in mode 1\n{}",
        MultiWell::RADIUS,
        r.barrier,
        r.steps,
        opts.chains,
        table(r)
    );
    s += &format!(
        "\nTime in each mode (pooled) vs its true mass\n{}",
        occupancy_table(r)
    );
    if !r.tuning.is_empty() {
        s += &format!(
            "\nTuning ({TUNE_CHAINS} chains × {} steps per point, other seeds; chosen: most modes \
             per chain, then most switches, among points with E[U] − U(μ) within 10 % of {})\n{}",
            r.steps,
            sig(r.true_temperature, 3),
            tuning_table(r)
        );
    }
    for row in r.tuning.iter().filter(|x| x.chosen && !x.accurate) {
        s += &format!(
            "{}: no grid point within 10 % of the true temperature; ran the closest ({}).\n",
            row.method.label(),
            row.settings.describe(row.method)
        );
    }
    for row in r.tuning.iter().filter(|x| x.best_any && !x.chosen) {
        s += &format!(
            "{}: ignoring the temperature check, the most modes in the tuning were {} per chain \
             ({} switches) at {}, with E[U] − U(μ) = {}.\n",
            row.method.label(),
            sig(row.modes_per_chain, 3),
            row.switches,
            row.settings.describe(row.method),
            sig(row.potential_temperature, 3)
        );
    }
    let missing: Vec<&str> = Method::ALL
        .iter()
        .filter(|m| !m.available())
        .map(|m| m.label())
        .collect();
    if !missing.is_empty() {
        s += &format!(
            "\nNot run (sampler not in sgmcmc yet): {}\n",
            missing.join(", ")
        );
    }
    s += &format!("\nWall-clock time {:.1} s\n", r.seconds);
    s
}
