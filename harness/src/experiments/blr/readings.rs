//! `blr --ess-readings`: Table 1's median ESS under other readings of its protocol and with four ESS estimators, and the audit of those estimators against the true ESS of full-gradient Pima chains.
//!
//! Zhang et al. 2017 say "5000 iterations with 1000 burn-in" and a minibatch of 16, but neither
//! which ESS estimator nor what a stored draw is. [`ess_readings`] reruns Table 1's ESS methods
//! (SGNHT, SGMGT-D a = 1, 2) under each reading of [`READINGS`] — minibatch 16 with one stored
//! draw per update, per epoch (⌈N/16⌉ updates) or per 100 updates, and the full batch with one
//! draw per update at the settings `blr --batch-sweep` chose — keeping 4000 or 5000 draws after
//! 1000 discarded ones, and gives for each the median over the weights of four estimates:
//! Geyer's (ours, [`ess_unsplit`]), R coda's AR spectral ESS ([`ess_spectral_ar`]), the
//! first-dip rule of the first author's MGHMC code ([`ess_first_dip`]) and Sokal's window
//! ([`tau_windowed`], c = 5).
//!
//! [`ess_audit`] measures which estimator to trust on the chains where they disagree: full-
//! gradient SGNHT and SGHMC on Pima at large steps, whose autocorrelation oscillates, in
//! [`AUDIT_RUNS`] independent runs, against the true ESS from the variance of the run means
//! ([`ess_from_replicates`]).

use super::problem::Problem;
use super::run::{Protocol, run_chain};
use super::tune::batch_rows;
use super::{BATCH, FIRST_DIP, Method, SWEEP_METHODS, Settings, paper_ess, settings};
use crate::diagnostics::{
    DrawCollector, ess_first_dip, ess_from_replicates, ess_spectral_ar, ess_unsplit, quantile,
    tau_windowed,
};
use crate::experiments::common::{
    Dynamics, DynamicsSettings, ExperimentError, Progress, RunOptions, Start, mean_sd,
    run_dynamics, sig,
};
use crate::models::logistic_regression::DataSet;
use crate::report::Table;
use rand_pcg::Pcg64;
use sgmcmc::prelude::*;
use sgmcmc::rng::standard_normal_f64;
use std::convert::Infallible;
use std::ops::ControlFlow;

/// Draws discarded before the kept ones, in stored draws (so 1000·thin updates).
pub const BURN_DRAWS: usize = 1000;
/// The numbers of kept draws: 4000 (5000 iterations, 1000 burn-in) and 5000 ("5000 iterations
/// after 1000 burn-in").
pub const KEPT: [usize; 2] = [4000, 5000];
/// Sokal's window constant.
pub const SOKAL_C: f64 = 5.0;

/// How often a draw is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Storage {
    /// One stored draw per update.
    EveryUpdate,
    /// One per epoch: ⌈N/n⌉ updates.
    PerEpoch,
    /// One per 100 updates.
    Per100,
}

/// One reading of Table 1's protocol: the minibatch (0 = every training row) and the storage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reading {
    /// Minibatch rows (0 = full batch).
    pub batch: usize,
    /// How often a draw is stored.
    pub storage: Storage,
}

impl Reading {
    /// Updates per stored draw on `problem`.
    pub fn thin(&self, problem: &Problem) -> usize {
        match self.storage {
            Storage::EveryUpdate => 1,
            Storage::PerEpoch => problem
                .model
                .len()
                .div_ceil(batch_rows(problem, self.batch)),
            Storage::Per100 => 100,
        }
    }

    /// "n = 16, per epoch" etc.
    pub fn label(&self) -> String {
        let n = if self.batch == 0 {
            "full batch".to_string()
        } else {
            format!("n = {}", self.batch)
        };
        let s = match self.storage {
            Storage::EveryUpdate => "every update",
            Storage::PerEpoch => "per epoch",
            Storage::Per100 => "per 100 updates",
        };
        format!("{n}, {s}")
    }
}

/// The readings [`ess_readings`] runs.
pub const READINGS: [Reading; 4] = [
    Reading {
        batch: BATCH,
        storage: Storage::EveryUpdate,
    },
    Reading {
        batch: BATCH,
        storage: Storage::PerEpoch,
    },
    Reading {
        batch: BATCH,
        storage: Storage::Per100,
    },
    Reading {
        batch: 0,
        storage: Storage::EveryUpdate,
    },
];

/// The full-batch settings `blr --batch-sweep`'s validation search chose (rows "(all)" of
/// `results/blr/blr-batch-sweep.csv`, seed 1); minibatch readings use [`settings`].
pub fn full_batch_settings(data: DataSet, method: Method) -> Settings {
    use DataSet::{BreastCancer as B, Caravan as C, Pima as P, Ripley as R};
    use Method::{SgmgtD1 as D1, SgmgtD2 as D2, Sgnht as Nht};
    let base = settings(data, method);
    // (h, σ_θ, σ_ξ, c, T_ξ); SGNHT's σ_p (its A) is 1 on every data set at full batch.
    let (h, sigma_theta, sigma_xi, c, resample_xi) = match (data, method) {
        (P, Nht) => (0.05, 0.0, 0.0, 1.0, 0),
        (P, D1) => (0.1, 0.01, 0.01, 5.0, 0),
        (P, D2) => (0.07, 0.1, 0.1, 5.0, 0),
        (R, Nht) => (0.07, 0.0, 0.0, 1.0, 0),
        (R, D1) => (0.2, 0.01, 0.1, 5.0, 100),
        (R, D2) => (0.5, 0.1, 0.1, 5.0, 100),
        (C, Nht) => (0.02, 0.0, 0.0, 1.0, 0),
        (C, D1) => (0.07, 0.01, 0.01, 5.0, 100),
        (C, D2) => (0.1, 0.01, 0.01, 5.0, 0),
        (B, Nht) => (0.05, 0.0, 0.0, 1.0, 0),
        (B, D1) => (0.2, 0.1, 0.1, 5.0, 0),
        (B, D2) => (0.3, 0.1, 0.1, 5.0, 100),
        _ => return base,
    };
    Settings {
        h,
        sigma_p: 1.0,
        sigma_theta,
        sigma_xi,
        c,
        resample_xi,
        ..base
    }
}

/// Picks one estimator's median out of an [`EssMedians`].
pub type EssField = fn(&EssMedians) -> f64;

/// The four estimators in table order, with their names.
pub const ESTIMATORS: [(&str, EssField); 4] = [
    ("Geyer", |e| e.geyer),
    ("coda", |e| e.coda),
    ("first-dip", |e| e.first_dip),
    ("Sokal", |e| e.sokal),
];

/// The four estimators' medians over the weights for one run and one number of kept draws.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EssMedians {
    /// Geyer's initial monotone sequence ([`ess_unsplit`]).
    pub geyer: f64,
    /// coda's AR spectral ESS ([`ess_spectral_ar`]).
    pub coda: f64,
    /// The first-dip rule of the MGHMC code ([`ess_first_dip`], threshold 0.01).
    pub first_dip: f64,
    /// n / Sokal's windowed τ ([`tau_windowed`], c = 5).
    pub sokal: f64,
}

impl EssMedians {
    /// The medians over the weights of each estimator on `draws[j][..kept]`.
    pub fn of(draws: &[Vec<f64>], kept: usize) -> Self {
        let per = |f: &dyn Fn(&[f64]) -> f64| -> f64 {
            let v: Vec<f64> = draws.iter().map(|x| f(&x[..kept])).collect();
            quantile(&v, 0.5).unwrap_or(f64::NAN)
        };
        EssMedians {
            geyer: per(&|x| ess_unsplit(&[x]).map_or(f64::NAN, |e| e.ess)),
            coda: per(&|x| ess_spectral_ar(x).map_or(f64::NAN, |e| e.ess)),
            first_dip: per(&|x| ess_first_dip(x, FIRST_DIP).unwrap_or(f64::NAN)),
            sokal: per(&|x| tau_windowed(x, SOKAL_C).map_or(f64::NAN, |w| x.len() as f64 / w.tau)),
        }
    }
}

/// One (data set, method, reading, kept) row of [`ess_readings`].
#[derive(Clone, Debug)]
pub struct ReadingRow {
    /// Data set.
    pub data: DataSet,
    /// Method.
    pub method: Method,
    /// Reading.
    pub reading: Reading,
    /// Updates per stored draw.
    pub thin: usize,
    /// Kept draws.
    pub kept: usize,
    /// Settings.
    pub settings: Settings,
    /// Each finished run's medians.
    pub runs: Vec<EssMedians>,
    /// Runs that diverged.
    pub diverged: usize,
}

impl ReadingRow {
    /// Mean and sd over the runs of one estimator.
    pub fn estimate(&self, f: EssField) -> Option<(f64, f64)> {
        (!self.runs.is_empty()).then(|| mean_sd(&self.runs.iter().map(f).collect::<Vec<_>>()))
    }
}

/// Runs every reading of [`READINGS`] for Table 1's ESS methods on every data set (Pima only
/// and a 1000-draw reading in quick mode), `opts.chains` runs each, and writes
/// `blr-ess-readings.csv`.
pub fn ess_readings(opts: &RunOptions) -> Result<Vec<ReadingRow>, ExperimentError> {
    opts.prepare()?;
    let data_sets: Vec<DataSet> = if opts.quick {
        vec![DataSet::Pima]
    } else {
        DataSet::ALL.to_vec()
    };
    let problems: Vec<Problem> = data_sets
        .into_iter()
        .map(Problem::load)
        .collect::<Result<_, _>>()?;
    let (burn_draws, kept): (usize, &[usize]) = if opts.quick {
        (200, &[800])
    } else {
        (BURN_DRAWS, &KEPT)
    };
    let max_kept = *kept.iter().max().unwrap_or(&0);
    let mut configs = Vec::new();
    for (k, problem) in problems.iter().enumerate() {
        for method in SWEEP_METHODS {
            for (r, reading) in READINGS.iter().enumerate() {
                let s = if reading.batch == 0 {
                    full_batch_settings(problem.data, method)
                } else {
                    settings(problem.data, method)
                };
                configs.push((k, method, r, *reading, s));
            }
        }
    }
    // The progress bar counts updates; a Caravan per-epoch run has the most (292 per draw).
    let outs = opts.par_chains(
        &configs,
        (burn_draws + max_kept) * 100,
        "blr --ess-readings",
        |i, &(k, method, _, reading, s), c, pb| {
            let problem = &problems[k];
            let thin = reading.thin(problem);
            let protocol = Protocol {
                thin,
                keep_draws: true,
                ..Protocol::every_step(
                    (burn_draws + max_kept) * thin,
                    burn_draws * thin,
                    0,
                    batch_rows(problem, reading.batch),
                )
            };
            run_chain(
                problem,
                method,
                s,
                protocol,
                opts.chain_seed(7000 + i, c),
                pb,
            )
            .map(|o| {
                kept.iter()
                    .map(|&m| EssMedians::of(&o.draws, m))
                    .collect::<Vec<_>>()
            })
        },
    );
    let mut rows = Vec::new();
    for (&(k, method, _, reading, s), outs) in configs.iter().zip(outs) {
        for (m, &kept) in kept.iter().enumerate() {
            let mut row = ReadingRow {
                data: problems[k].data,
                method,
                reading,
                thin: reading.thin(&problems[k]),
                kept,
                settings: s,
                runs: Vec::new(),
                diverged: 0,
            };
            for r in &outs {
                match r {
                    Ok(v) => row.runs.push(v[m]),
                    Err(_) => row.diverged += 1,
                }
            }
            rows.push(row);
        }
    }
    readings_csv(&rows).write_csv(&opts.out.join("blr-ess-readings.csv"))?;
    reading_fit(&rows).write_csv(&opts.out.join("blr-ess-readings-fit.csv"))?;
    Ok(rows)
}

/// [`ess_readings`]' rows with every digit: per estimator the mean and sd over the runs.
pub fn readings_csv(rows: &[ReadingRow]) -> Table {
    let mut header: Vec<String> = [
        "data",
        "method",
        "reading",
        "updates_per_draw",
        "kept",
        "settings",
    ]
    .map(String::from)
    .to_vec();
    for (name, _) in ESTIMATORS {
        header.push(format!("{name}_mean"));
        header.push(format!("{name}_sd"));
    }
    header.extend(["paper", "runs", "diverged"].map(String::from));
    let mut t = Table::new(header);
    for row in rows {
        let mut cells = vec![
            row.data.letter().to_string(),
            row.method.label().to_string(),
            row.reading.label(),
            row.thin.to_string(),
            row.kept.to_string(),
            row.settings.describe(row.method),
        ];
        for (_, f) in ESTIMATORS {
            let (m, s) = row.estimate(f).unwrap_or((f64::NAN, f64::NAN));
            cells.push(m.to_string());
            cells.push(s.to_string());
        }
        cells.push(paper_ess(row.data, row.method).map_or(String::new(), |p| p.to_string()));
        cells.push(row.runs.len().to_string());
        cells.push(row.diverged.to_string());
        t.row(cells);
    }
    t
}

/// The table of [`ess_readings`].
pub fn readings_table(rows: &[ReadingRow]) -> Table {
    let mut t = Table::new([
        "data",
        "method",
        "reading",
        "updates/draw",
        "kept",
        "settings",
        "Geyer",
        "coda",
        "first-dip",
        "Sokal",
        "paper",
        "diverged",
    ]);
    let cell = |row: &ReadingRow, f: EssField| {
        row.estimate(f).map_or("–".into(), |(m, s)| {
            format!("{} ± {}", sig(m, 3), sig(s, 2))
        })
    };
    for row in rows {
        let mut cells = vec![
            row.data.letter().to_string(),
            row.method.label().to_string(),
            row.reading.label(),
            row.thin.to_string(),
            row.kept.to_string(),
            row.settings.describe(row.method),
        ];
        cells.extend(ESTIMATORS.map(|(_, f)| cell(row, f)));
        cells.push(paper_ess(row.data, row.method).map_or("–".into(), |p| p.to_string()));
        cells.push(format!(
            "{}/{}",
            row.diverged,
            row.diverged + row.runs.len()
        ));
        t.row(cells);
    }
    t
}

/// For each (data set, method) with a Table 1 ESS: the (reading, kept, estimator) whose mean is
/// closest to the paper's value on a log scale, and its ratio to the paper.
pub fn closest_readings(rows: &[ReadingRow]) -> Table {
    let mut t = Table::new([
        "data",
        "method",
        "paper",
        "closest reading",
        "kept",
        "estimator",
        "ours",
        "ours/paper",
    ]);
    let mut keys: Vec<(DataSet, Method)> = Vec::new();
    for row in rows {
        if !keys.contains(&(row.data, row.method)) {
            keys.push((row.data, row.method));
        }
    }
    for (data, method) in keys {
        let Some(paper) = paper_ess(data, method) else {
            continue;
        };
        let best = rows
            .iter()
            .filter(|r| r.data == data && r.method == method)
            .flat_map(|r| {
                ESTIMATORS
                    .into_iter()
                    .filter_map(move |(n, f)| r.estimate(f).map(|(m, _)| (r, n, m)))
            })
            .filter(|(_, _, m)| m.is_finite() && *m > 0.0)
            .min_by(|a, b| {
                (a.2 / paper)
                    .ln()
                    .abs()
                    .total_cmp(&(b.2 / paper).ln().abs())
            });
        if let Some((r, name, m)) = best {
            t.row([
                data.letter().to_string(),
                method.label().to_string(),
                paper.to_string(),
                r.reading.label(),
                r.kept.to_string(),
                name.to_string(),
                sig(m, 4),
                sig(m / paper, 3),
            ]);
        }
    }
    t
}

/// How well each (reading, kept, estimator) reproduces Table 1 as a whole: over the nine
/// (data set, method) cells with a printed ESS, the median, smallest and largest ours/paper and
/// how many cells lie within a factor 1.25 — one reading for the whole table, rather than the best of
/// 32 candidates per cell ([`closest_readings`], which overfits by construction).
pub fn reading_fit(rows: &[ReadingRow]) -> Table {
    let mut t = Table::new([
        "reading",
        "kept",
        "estimator",
        "cells",
        "median ours/paper",
        "min",
        "max",
        "within ×1.25",
    ]);
    let mut fits = Vec::new();
    for reading in READINGS {
        for kept in KEPT {
            for (name, f) in ESTIMATORS {
                let ratios: Vec<f64> = rows
                    .iter()
                    .filter(|r| r.reading == reading && r.kept == kept)
                    .filter_map(|r| {
                        let paper = paper_ess(r.data, r.method)?;
                        r.estimate(f).map(|(m, _)| m / paper)
                    })
                    .collect();
                if ratios.is_empty() {
                    continue;
                }
                let median = quantile(&ratios, 0.5).unwrap_or(f64::NAN);
                let within = ratios
                    .iter()
                    .filter(|x| (x.ln()).abs() <= 1.25f64.ln())
                    .count();
                fits.push((reading, kept, name, ratios, median, within));
            }
        }
    }
    fits.sort_by(|a, b| {
        b.5.cmp(&a.5)
            .then(a.4.ln().abs().total_cmp(&b.4.ln().abs()))
    });
    for (reading, kept, name, ratios, median, within) in fits {
        let min = ratios.iter().copied().fold(f64::INFINITY, f64::min);
        let max = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        t.row([
            reading.label(),
            kept.to_string(),
            name.to_string(),
            ratios.len().to_string(),
            sig(median, 3),
            sig(min, 3),
            sig(max, 3),
            format!("{within}/{}", ratios.len()),
        ]);
    }
    t
}

/// Independent runs per configuration of [`ess_audit`].
pub const AUDIT_RUNS: usize = 200;
/// Draws discarded, then kept, per audit run (every update stored).
pub const AUDIT_DRAWS: (usize, usize) = (1000, 4000);
/// The audit's samplers on Pima at full batch: (dynamics, h, A).
pub const AUDIT_CONFIGS: [(Dynamics, f64, f64); 4] = [
    (Dynamics::Sgnht, 0.03, 1.0),
    (Dynamics::Sgnht, 0.05, 1.0),
    (Dynamics::Sghmc, 0.03, 1.0),
    (Dynamics::Sghmc, 0.05, 1.0),
];

/// One audit configuration's per-weight results.
#[derive(Clone, Debug)]
pub struct AuditRow {
    /// Sampler.
    pub dynamics: Dynamics,
    /// Step.
    pub h: f64,
    /// SGNHT's diffusion or SGHMC's friction A.
    pub a: f64,
    /// Per weight: the true ESS from the replicates.
    pub truth: Vec<f64>,
    /// Per weight: the mean over runs of each estimator on one run.
    pub estimates: Vec<EssMedians>,
    /// Per weight: the mean over runs of coda's AR order.
    pub coda_order: Vec<f64>,
    /// Runs.
    pub runs: usize,
    /// Kept draws per run.
    pub kept: usize,
}

/// Keeps θ after burn-in.
struct KeepTheta(DrawCollector);

impl<S: ChainState<f64>> Observer<S, f64> for KeepTheta {
    type Stop = Infallible;
    fn observe(
        &mut self,
        step: u64,
        sampler: &mut S,
        stats: &StepStats<f64>,
    ) -> ControlFlow<Infallible> {
        let ControlFlow::Continue(()) = self.0.observe(step, sampler, stats);
        ControlFlow::Continue(())
    }
}

/// The ESS audit: [`AUDIT_RUNS`] (quick: 24) independent full-gradient runs of each
/// [`AUDIT_CONFIGS`] sampler on Pima's training posterior from random starts θ₀ ~ N(0, I),
/// p₀ ~ N(0, I), every update stored; per weight the true ESS ([`ess_from_replicates`]) and the
/// mean over runs of each estimator. Writes `blr-ess-audit.csv` (per weight).
pub fn ess_audit(opts: &RunOptions) -> Result<Vec<AuditRow>, ExperimentError> {
    opts.prepare()?;
    let problem = Problem::load(DataSet::Pima)?;
    let d = problem.model.dim();
    let runs = if opts.quick { 24 } else { AUDIT_RUNS };
    let (burn, kept) = if opts.quick { (500, 2000) } else { AUDIT_DRAWS };
    let run_opts = RunOptions {
        chains: runs,
        ..opts.clone()
    };
    let configs: Vec<(Dynamics, f64, f64)> = AUDIT_CONFIGS.to_vec();
    let outs = run_opts.par_chains(
        &configs,
        burn + kept,
        "blr --ess-audit",
        |i, &(dynamics, h, a), c, pb| {
            let seed = opts.chain_seed(8000 + i, c);
            let mut rng = Pcg64::new(seed as u128, 0xa0d1);
            let theta: Vec<f64> = (0..d).map(|_| standard_normal_f64(&mut rng)).collect();
            let p: Vec<f64> = (0..d).map(|_| standard_normal_f64(&mut rng)).collect();
            let mut start = Start { theta, p, rng };
            let mut grad = problem
                .model
                .stochastic_gradient(problem.model.len(), seed ^ 0x5eed);
            let mut keep = KeepTheta(DrawCollector::new(d).burn_in(burn).with_capacity(kept));
            let mut progress = Progress::new(pb, &mut keep);
            run_dynamics(
                (dynamics, DynamicsSettings::new(h, a, Integrator::Euler)),
                &mut start,
                &mut grad,
                burn + kept,
                &mut progress,
            )
            .map_err(|e| e.to_string())?;
            drop(progress);
            Ok::<Vec<Vec<f64>>, String>((0..d).map(|j| keep.0.column(j)).collect())
        },
    );
    let mut rows = Vec::new();
    for (&(dynamics, h, a), outs) in configs.iter().zip(outs) {
        let chains: Vec<Vec<Vec<f64>>> = outs
            .into_iter()
            .collect::<Result<_, _>>()
            .map_err(ExperimentError::Invalid)?;
        let mut row = AuditRow {
            dynamics,
            h,
            a,
            truth: Vec::new(),
            estimates: Vec::new(),
            coda_order: Vec::new(),
            runs,
            kept,
        };
        for j in 0..d {
            let weight: Vec<&[f64]> = chains.iter().map(|c| c[j].as_slice()).collect();
            row.truth.push(
                ess_from_replicates(&weight)
                    .map_err(|e| ExperimentError::Invalid(format!("replicate ESS: {e}")))?,
            );
            let per_run: Vec<EssMedians> = weight
                .iter()
                .map(|x| EssMedians::of(&[x.to_vec()], kept))
                .collect();
            let mean = |f: EssField| per_run.iter().map(f).sum::<f64>() / per_run.len() as f64;
            row.estimates.push(EssMedians {
                geyer: mean(|e| e.geyer),
                coda: mean(|e| e.coda),
                first_dip: mean(|e| e.first_dip),
                sokal: mean(|e| e.sokal),
            });
            row.coda_order.push(
                weight
                    .iter()
                    .map(|x| ess_spectral_ar(x).map_or(f64::NAN, |e| e.order as f64))
                    .sum::<f64>()
                    / runs as f64,
            );
        }
        rows.push(row);
    }
    audit_table(&rows, true).write_csv(&opts.out.join("blr-ess-audit.csv"))?;
    Ok(rows)
}

/// The audit's table: per configuration the median over the weights of the true ESS and of
/// each estimator's mean, and of each estimator's ratio to the truth (per weight, unrounded,
/// with `per_weight`: the CSV).
pub fn audit_table(rows: &[AuditRow], per_weight: bool) -> Table {
    let mut t = Table::new([
        "sampler",
        "h",
        "A",
        "weight",
        "true ESS",
        "Geyer",
        "coda",
        "first-dip",
        "Sokal",
        "coda order",
        "Geyer/true",
        "coda/true",
        "first-dip/true",
        "Sokal/true",
    ]);
    let name = |d: Dynamics| match d {
        Dynamics::Sghmc => "SGHMC",
        Dynamics::Sgnht => "SGNHT",
        Dynamics::MSgnht => "mSGNHT",
    };
    for row in rows {
        let d = row.truth.len();
        let mut emit = |weight: String, idx: &[usize]| {
            let med = |f: &dyn Fn(usize) -> f64| {
                let v: Vec<f64> = idx.iter().map(|&j| f(j)).collect();
                quantile(&v, 0.5).unwrap_or(f64::NAN)
            };
            let e = &row.estimates;
            // The CSV (per weight) keeps every digit; the printed summary rounds.
            let num = |x: f64, digits: usize| {
                if per_weight {
                    x.to_string()
                } else {
                    sig(x, digits)
                }
            };
            t.row([
                name(row.dynamics).to_string(),
                row.h.to_string(),
                row.a.to_string(),
                weight,
                num(med(&|j| row.truth[j]), 4),
                num(med(&|j| e[j].geyer), 4),
                num(med(&|j| e[j].coda), 4),
                num(med(&|j| e[j].first_dip), 4),
                num(med(&|j| e[j].sokal), 4),
                num(med(&|j| row.coda_order[j]), 3),
                num(med(&|j| e[j].geyer / row.truth[j]), 3),
                num(med(&|j| e[j].coda / row.truth[j]), 3),
                num(med(&|j| e[j].first_dip / row.truth[j]), 3),
                num(med(&|j| e[j].sokal / row.truth[j]), 3),
            ]);
        };
        if per_weight {
            for j in 0..d {
                emit(j.to_string(), &[j]);
            }
        }
        emit("median".to_string(), &(0..d).collect::<Vec<_>>());
    }
    t
}

/// What `blr --ess-readings` prints: every row, then the reading closest to each Table 1 value.
pub fn report(rows: &[ReadingRow], opts: &RunOptions) -> String {
    format!(
        "BLR: Table 1's median ESS under other readings, {} run(s) per row, {} draws discarded before the kept ones (in stored draws)\n{}\nEach reading against the whole of Table 1 (9 cells):\n{}\nClosest reading to each Table 1 value (log scale; the best of 32 candidates per cell):\n{}",
        opts.chains,
        if opts.quick { 200 } else { BURN_DRAWS },
        readings_table(rows),
        reading_fit(rows),
        closest_readings(rows)
    )
}

/// What `blr --ess-audit` prints: the medians over Pima's weights.
pub fn audit_report(rows: &[AuditRow], opts: &RunOptions) -> String {
    let (runs, kept) = rows.first().map_or((0, 0), |r| (r.runs, r.kept));
    format!(
        "BLR ESS audit: full-gradient chains on Pima, {runs} independent runs of {kept} kept draws each (seed {}); medians over the weights (per weight in blr-ess-audit.csv)\n{}",
        opts.seed,
        audit_table(rows, false)
    )
}
