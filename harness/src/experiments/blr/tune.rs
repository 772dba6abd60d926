//! `blr`'s validation search (`blr --tune`): the grid, the selection rule and the search over validation splits that [`super::batch_sweep`] shares.

use super::problem::Problem;
use super::result::RunOut;
use super::run::{Protocol, run_chain};
use super::{BATCH, Method, Settings, problems, protocol_length, settings};
use crate::experiments::common::{ExperimentError, RunOptions, mean_sd, sig};
use crate::models::logistic_regression::DataSet;
use crate::report::Table;

/// The means over a [`tune`] cell's finished runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TuneMeans {
    /// Validation AUROC.
    pub auroc: f64,
    /// Median ESS.
    pub ess: f64,
    /// Sample sd / Laplace sd (median over the weights).
    pub sd_ratio: f64,
    /// Kinetic temperature.
    pub temperature: f64,
}

/// One cell of a [`tune`] grid: its family, how many runs diverged, and the means over the other
/// runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TuneCell {
    /// Index of the family (settings equal but for h) within the grid.
    pub family: usize,
    /// Runs that diverged.
    pub diverged: usize,
    /// Means over the runs that finished, if any did.
    pub means: Option<TuneMeans>,
}

/// Tolerances on |ln(sd ratio)| tried in turn by [`choose`]: ≈ ±10 %, ±22 %, ±50 %, any.
pub const SD_TOLERANCES: [f64; 4] = [0.1, 0.2, 0.4, f64::INFINITY];

/// The selection rule of [`tune`] over one data set and method's grid, each family in
/// increasing h:
///
/// 1. a cell is *stable* if no run diverged, neither at its h nor at the next larger h of its
///    family (a margin: the fit split is smaller than the training split, so the final run sees
///    larger gradients and gradient noise);
/// 2. it is *competitive* if also its validation AUROC is within 0.02 of the best stable cell's
///    (validation splits of 50–930 rows make smaller AUROC differences noise);
/// 3. it is *accurate* within τ if |ln(sd ratio)| ≤ τ, the sample sds matching the Laplace sds
///    (a chain can buy ESS by running hot, which the AUROC of a posterior mean hardly sees);
///    τ is the first of [`SD_TOLERANCES`] for which some competitive cell is accurate;
/// 4. among those ([`acceptable`]), the one with the largest median ESS wins. Returns its index.
pub fn choose(grid: &[TuneCell]) -> Option<usize> {
    acceptable(grid)
        .into_iter()
        .max_by(|&a, &b| ess_of(grid, a).total_cmp(&ess_of(grid, b)))
}

/// The cells [`choose`] picks among (steps 1–3 of its rule: stable, competitive, and accurate
/// within the first tolerance that admits any), in grid order: the settings the validation
/// search deems acceptable, of which it keeps the one with the largest ESS.
pub fn acceptable(grid: &[TuneCell]) -> Vec<usize> {
    let competitive = competitive(grid);
    SD_TOLERANCES
        .iter()
        .map(|&tol| {
            competitive
                .iter()
                .copied()
                .filter(|&i| means_of(grid, i).sd_ratio.ln().abs() <= tol)
                .collect::<Vec<_>>()
        })
        .find(|cells| !cells.is_empty())
        .unwrap_or_default()
}

/// The stable and competitive cells of [`choose`]'s rule (steps 1–2), in grid order.
pub fn competitive(grid: &[TuneCell]) -> Vec<usize> {
    let stable: Vec<usize> = grid
        .iter()
        .enumerate()
        .filter(|(i, c)| {
            c.diverged == 0
                && c.means.is_some()
                && grid
                    .get(i + 1)
                    .is_none_or(|next| next.family != c.family || next.diverged == 0)
        })
        .map(|(i, _)| i)
        .collect();
    let best = stable
        .iter()
        .map(|&i| means_of(grid, i).auroc)
        .fold(f64::NEG_INFINITY, f64::max);
    stable
        .into_iter()
        .filter(|&i| means_of(grid, i).auroc >= best - 0.02)
        .collect()
}

/// The means of a cell that [`competitive`] admitted (it has some).
fn means_of(grid: &[TuneCell], i: usize) -> TuneMeans {
    grid[i].means.expect("stable cells have means")
}

fn ess_of(grid: &[TuneCell], i: usize) -> f64 {
    means_of(grid, i).ess
}

/// The step sizes [`tune`] tries.
pub const TUNE_STEPS: [f64; 10] = [
    0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.03, 0.05, 0.07, 0.1,
];

/// The diffusions on p [`tune`] tries for SGNHT (its A, which is also its ξ₀: with a large
/// gradient noise B the scalar thermostat must climb from ξ₀ to ≈ A + B at a rate of order 1 per
/// time unit, which a run of 5000 h time units may not allow unless A carries the friction).
pub const TUNE_SIGMA_P: [f64; 3] = [1.0, 10.0, 100.0];
/// The softenings c of eq. 12 [`tune`] tries for SGMGT and SGMGT-D.
pub const TUNE_C: [f64; 2] = [1.0, 5.0];
/// SGMGT-D's σ_θ values [`tune`] tries.
pub const TUNE_SIGMA_THETA: [f64; 2] = [0.01, 0.1];
/// SGMGT-D's σ_ξ values [`tune`] tries.
pub const TUNE_SIGMA_XI: [f64; 2] = [0.01, 0.1];
/// Resampling periods of ξ [`tune`] tries for SGMGT and SGMGT-D: the paper's 100, and never
/// (p is always resampled every 100 steps, as in the paper).
pub const TUNE_RESAMPLE_XI: [u32; 2] = [100, 0];

/// The grid [`tune`] searches for a data set and method: families of [`Settings`] that differ
/// only in h, each in increasing h.
pub fn tune_grid(data: DataSet, method: Method) -> Vec<Vec<Settings>> {
    let base = Settings {
        resample_p: 100,
        ..settings(data, method)
    };
    let family = |s: Settings| -> Vec<Settings> {
        TUNE_STEPS.iter().map(|&h| Settings { h, ..s }).collect()
    };
    let mut out = Vec::new();
    match method {
        Method::Sgnht => {
            for sigma_p in TUNE_SIGMA_P {
                out.push(family(Settings { sigma_p, ..base }));
            }
        }
        Method::Sgmgt1 | Method::Sgmgt2 => {
            for c in TUNE_C {
                for resample_xi in TUNE_RESAMPLE_XI {
                    out.push(family(Settings {
                        sigma_p: 1.0,
                        sigma_theta: 0.0,
                        sigma_xi: 0.0,
                        c,
                        resample_xi,
                        ..base
                    }));
                }
            }
        }
        // (The corrected rows are not searched — they derive from the SGMGT-D rows — but have
        // the same grid.)
        Method::SgmgtD1 | Method::SgmgtD2 | Method::SgmgtD1Corrected | Method::SgmgtD2Corrected => {
            for c in TUNE_C {
                for resample_xi in TUNE_RESAMPLE_XI {
                    for sigma_theta in TUNE_SIGMA_THETA {
                        for sigma_xi in TUNE_SIGMA_XI {
                            out.push(family(Settings {
                                sigma_p: 1.0,
                                sigma_theta,
                                sigma_xi,
                                c,
                                resample_xi,
                                ..base
                            }));
                        }
                    }
                }
            }
        }
    }
    out
}

/// The validation search behind [`settings`]: for each data set (Pima only in quick mode) and
/// method, every setting of [`tune_grid`], `opts.chains` runs of the full protocol on
/// [`Problem::validation`] — the held-out split is never touched. Writes `blr-tune.csv`;
/// returns the table (validation AUROC, median ESS, sd ratio to the validation fit's Laplace
/// approximation, temperature; a run that diverges is counted and left out of the means; the
/// setting [`choose`] picks is marked).
pub fn tune(opts: &RunOptions) -> Result<Table, ExperimentError> {
    opts.prepare()?;
    let problems: Vec<Problem> = problems(opts)?
        .iter()
        .map(Problem::validation)
        .collect::<Result<_, _>>()?;
    let mut cells = Vec::new();
    for (k, problem) in problems.iter().enumerate() {
        for method in Method::ALL {
            push_grid(
                &mut cells,
                k,
                method,
                BATCH,
                tune_grid(problem.data, method),
            );
        }
    }
    let results = search(&problems, &cells, opts, 1000, "blr --tune");
    let mut t = Table::new([
        "data",
        "method",
        "settings",
        "diverged",
        "validation AUROC",
        "median ESS",
        "sd/Laplace",
        "temp.",
        "chosen",
    ]);
    for (range, chosen) in search_groups(&cells, &results) {
        for i in range.clone() {
            let f = |x: Option<f64>| x.map_or("–".to_string(), |v| sig(v, 4));
            let means = results[i].means;
            let c = cells[i];
            t.row([
                problems[c.problem].data.letter().to_string(),
                c.method.label().to_string(),
                c.settings.describe(c.method),
                format!("{}/{}", results[i].diverged, opts.chains),
                f(means.map(|x| x.auroc)),
                f(means.map(|x| x.ess)),
                f(means.map(|x| x.sd_ratio)),
                f(means.map(|x| x.temperature)),
                if chosen == Some(i) {
                    "←".into()
                } else {
                    String::new()
                },
            ]);
        }
    }
    t.write_csv(&opts.out.join("blr-tune.csv"))?;
    Ok(t)
}

/// One setting of a validation search: which problem, method, family, settings and minibatch.
#[derive(Clone, Copy, Debug)]
pub(super) struct SearchCell {
    pub(super) problem: usize,
    pub(super) method: Method,
    pub(super) family: usize,
    pub(super) settings: Settings,
    /// Minibatch rows; 0 for every row of the problem.
    pub(super) batch: usize,
}

/// Appends every setting of `grid` (families in order) as cells of one problem, method and
/// minibatch.
pub(super) fn push_grid(
    cells: &mut Vec<SearchCell>,
    problem: usize,
    method: Method,
    batch: usize,
    grid: Vec<Vec<Settings>>,
) {
    for (family, fam) in grid.into_iter().enumerate() {
        for settings in fam {
            cells.push(SearchCell {
                problem,
                method,
                family,
                settings,
                batch,
            });
        }
    }
}

/// Rows per minibatch of `batch` (0 for all) on `problem`.
pub(super) fn batch_rows(problem: &Problem, batch: usize) -> usize {
    if batch == 0 {
        problem.model.len()
    } else {
        batch.min(problem.model.len())
    }
}

/// Runs every cell `opts.chains` times on `problems` (validation splits) with the protocol's
/// length; configuration seeds start at `seed_base`. One [`TuneCell`] per cell.
pub(super) fn search(
    problems: &[Problem],
    cells: &[SearchCell],
    opts: &RunOptions,
    seed_base: usize,
    label: &'static str,
) -> Vec<TuneCell> {
    let (iterations, burn_in) = protocol_length(opts);
    let outs = opts.par_chains(cells, iterations, label, |i, &cell, c, pb| {
        let protocol = Protocol::every_step(
            iterations,
            burn_in,
            0,
            batch_rows(&problems[cell.problem], cell.batch),
        );
        run_chain(
            &problems[cell.problem],
            cell.method,
            cell.settings,
            protocol,
            opts.chain_seed(seed_base + i, c),
            pb,
        )
        .ok()
    });
    outs.iter()
        .zip(cells)
        .map(|(chunk, cell)| {
            let ok: Vec<&RunOut> = chunk.iter().flatten().collect();
            let avg =
                |f: fn(&RunOut) -> f64| mean_sd(&ok.iter().map(|r| f(r)).collect::<Vec<_>>()).0;
            TuneCell {
                family: cell.family,
                diverged: chunk.len() - ok.len(),
                means: (!ok.is_empty()).then(|| TuneMeans {
                    auroc: avg(|r| r.auroc),
                    ess: avg(|r| r.median_ess),
                    sd_ratio: avg(|r| r.sd_ratio),
                    temperature: avg(|r| r.temperature),
                }),
            }
        })
        .collect()
}

/// The runs of consecutive cells with one (problem, method, minibatch), each with the index
/// [`choose`] picks among them (an index into `cells`).
pub(super) fn search_groups(
    cells: &[SearchCell],
    results: &[TuneCell],
) -> Vec<(std::ops::Range<usize>, Option<usize>)> {
    let key = |c: &SearchCell| (c.problem, c.method, c.batch);
    let mut out = Vec::new();
    let mut start = 0;
    while start < cells.len() {
        let end = (start..cells.len())
            .find(|&i| key(&cells[i]) != key(&cells[start]))
            .unwrap_or(cells.len());
        let chosen = choose(&results[start..end]).map(|i| start + i);
        out.push((start..end, chosen));
        start = end;
    }
    out
}

/// The text the CLI prints: what was searched and the table [`tune`] returns.
pub fn report(table: &Table, opts: &RunOptions) -> String {
    format!(
        "BLR step-size search on a validation split of the training data, {} run(s) per setting\n{table}",
        opts.chains
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(family: usize, diverged: usize, auroc: f64, ess: f64, sd_ratio: f64) -> TuneCell {
        TuneCell {
            family,
            diverged,
            means: Some(TuneMeans {
                auroc,
                ess,
                sd_ratio,
                temperature: 1.0,
            }),
        }
    }

    #[test]
    fn choose_applies_margin_auroc_and_accuracy_rules() {
        let grid = [
            cell(0, 0, 0.90, 10.0, 0.5),   // too narrow at τ = 0.1
            cell(0, 0, 0.85, 50.0, 1.0),   // AUROC 0.05 below the best stable cell
            cell(0, 0, 0.90, 30.0, 1.05),  // accurate
            cell(0, 0, 0.89, 90.0, 1.0),   // next h diverged: no margin
            cell(0, 1, 0.95, 95.0, 1.0),   // diverged
            cell(1, 0, 0.895, 40.0, 0.95), // accurate, largest ESS
            cell(1, 0, 0.90, 45.0, 1.5),   // too wide at τ = 0.1
        ];
        assert_eq!(choose(&grid), Some(5));
        // Without accurate cells the tolerance widens: |ln 0.5| = 0.69, |ln 1.3| = 0.26.
        let loose = [grid[0], cell(0, 0, 0.9, 5.0, 1.3)];
        assert_eq!(choose(&loose), Some(1));
        let looser = [cell(0, 0, 0.9, 10.0, 0.5), cell(0, 0, 0.9, 12.0, 3.0)];
        assert_eq!(choose(&looser), Some(1));
        assert_eq!(choose(&[cell(0, 1, 0.9, 1.0, 1.0)]), None);
    }
}
