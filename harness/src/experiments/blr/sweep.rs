//! `blr --batch-sweep`: how the median ESS of Table 1's ESS methods depends on the minibatch size, each minibatch with its own validation search.

use super::problem::Problem;
use super::report::pm;
use super::result::BlrRow;
use super::run::{Protocol, run_chain};
use super::tune::{TUNE_SIGMA_P, batch_rows, push_grid, search, search_groups};
use super::{BATCH, Method, Settings, paper_ess, problems, protocol_length, settings};
use crate::experiments::common::{ExperimentError, RunOptions, sig};
use crate::models::logistic_regression::DataSet;
use crate::plot::{Chart, Scale, Series, line_chart};
use crate::report::Table;

/// Minibatch sizes of [`batch_sweep`]: the paper's 16, two larger, and every training row
/// (written 0 here).
pub const SWEEP_BATCHES: [usize; 4] = [16, 64, 256, 0];

/// The step sizes [`batch_sweep`] tries: [`TUNE_STEPS`](super::TUNE_STEPS) and larger ones, which less gradient
/// noise may allow.
pub const SWEEP_STEPS: [f64; 14] = [
    0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.03, 0.05, 0.07, 0.1, 0.15, 0.2, 0.3, 0.5,
];

/// Runs per setting in [`batch_sweep`]'s validation search (at most; `--runs` if fewer).
pub const SWEEP_SEARCH_RUNS: usize = 3;

/// The methods whose ESS Table 1 reports.
pub const SWEEP_METHODS: [Method; 3] = [Method::Sgnht, Method::SgmgtD1, Method::SgmgtD2];

/// The families [`batch_sweep`] searches for a data set and method: the table's [`settings`]
/// with h over [`SWEEP_STEPS`], and for SGNHT each A of [`TUNE_SIGMA_P`] (its friction must
/// carry the gradient noise, which the minibatch size changes).
pub fn sweep_grid(data: DataSet, method: Method) -> Vec<Vec<Settings>> {
    let base = settings(data, method);
    let family = |s: Settings| -> Vec<Settings> {
        SWEEP_STEPS.iter().map(|&h| Settings { h, ..s }).collect()
    };
    match method {
        Method::Sgnht => TUNE_SIGMA_P
            .iter()
            .map(|&sigma_p| family(Settings { sigma_p, ..base }))
            .collect(),
        _ => vec![family(base)],
    }
}

/// One (data set, method, minibatch) of [`batch_sweep`].
#[derive(Clone, Debug)]
pub struct SweepRow {
    /// Minibatch rows (the training rows for a full batch).
    pub batch: usize,
    /// Training rows N.
    pub rows: usize,
    /// The runs at the setting the validation search chose (no runs if none was stable).
    pub row: BlrRow,
}

impl SweepRow {
    /// Iterations kept per run × n/N, capped at the iterations kept: the ESS of one independent
    /// draw per N/n iterations.
    pub fn ess_scale(&self, kept: usize) -> f64 {
        kept as f64 * (self.batch as f64 / self.rows as f64).min(1.0)
    }
}

/// How the median ESS depends on the minibatch size: for each data set (Pima only in quick
/// mode), each method of [`SWEEP_METHODS`] and each minibatch of [`SWEEP_BATCHES`], the
/// validation search of [`tune`](super::tune) (rule [`choose`](super::choose), grid
/// [`sweep_grid`]) picks the settings, then `opts.chains` runs of the protocol at that minibatch
/// on the real split give the row.
/// Only the minibatch (and with it the chosen h, and SGNHT's A) changes between rows.
/// Writes `blr-batch-sweep.csv` and `blr-batch-sweep-<data>.png`.
pub fn batch_sweep(opts: &RunOptions) -> Result<Vec<SweepRow>, ExperimentError> {
    opts.prepare()?;
    let (iterations, burn_in) = protocol_length(opts);
    let problems = problems(opts)?;
    let validation: Vec<Problem> = problems
        .iter()
        .map(Problem::validation)
        .collect::<Result<_, _>>()?;
    let mut cells = Vec::new();
    for (k, problem) in validation.iter().enumerate() {
        for method in SWEEP_METHODS {
            // A minibatch as large as the fit split is the full batch, run once as 0.
            for batch in SWEEP_BATCHES
                .into_iter()
                .filter(|&b| b < problem.model.len())
            {
                push_grid(
                    &mut cells,
                    k,
                    method,
                    batch,
                    sweep_grid(problem.data, method),
                );
            }
        }
    }
    let search_opts = RunOptions {
        chains: opts.chains.min(SWEEP_SEARCH_RUNS),
        ..opts.clone()
    };
    let results = search(
        &validation,
        &cells,
        &search_opts,
        5000,
        "blr --batch-sweep (search)",
    );
    // The chosen cell of every group; its minibatch in rows of the training split.
    let chosen: Vec<(usize, Method, usize, Option<Settings>)> = search_groups(&cells, &results)
        .into_iter()
        .map(|(range, pick)| {
            let c = cells[range.start];
            let batch = batch_rows(&problems[c.problem], c.batch);
            (c.problem, c.method, batch, pick.map(|i| cells[i].settings))
        })
        .collect();
    // Only the groups with a choice run.
    let runs: Vec<(usize, (usize, Method, usize, Settings))> = chosen
        .iter()
        .enumerate()
        .filter_map(|(g, &(k, m, batch, s))| s.map(|s| (g, (k, m, batch, s))))
        .collect();
    let outs = opts.par_chains(
        &runs,
        iterations,
        "blr --batch-sweep",
        |_, &(g, (k, method, batch, s)), c, pb| {
            let protocol = Protocol::every_step(iterations, burn_in, 0, batch);
            let seed = opts.chain_seed(9000 + g, c);
            run_chain(&problems[k], method, s, protocol, seed, pb)
        },
    );
    let rows: Vec<SweepRow> = chosen
        .iter()
        .enumerate()
        .map(|(g, &(k, method, batch, s))| {
            let problem = &problems[k];
            let settings = s.unwrap_or_else(|| settings(problem.data, method));
            let mut row = BlrRow {
                data: problem.data,
                method,
                settings,
                runs: Vec::new(),
                diverged: Vec::new(),
                theta_noise_excess: settings.sigma_theta
                    * problem.median_gradient_noise_at(settings.h, batch),
            };
            let ran = runs.iter().position(|(i, _)| *i == g);
            for r in ran.map_or(&[][..], |i| &outs[i]) {
                match r {
                    Ok(run) => row.runs.push(run.clone()),
                    Err(e) => row.diverged.push(*e),
                }
            }
            SweepRow {
                batch,
                rows: problem.model.len(),
                row,
            }
        })
        .collect();
    sweep_table(&rows, iterations - burn_in).write_csv(&opts.out.join("blr-batch-sweep.csv"))?;
    sweep_plot(opts, &rows, iterations - burn_in)?;
    Ok(rows)
}

/// The table of [`batch_sweep`]: per data set, method and minibatch, the chosen settings, the
/// median ESS (mean ± sd over the runs) beside kept × n/N and Table 1's value (at n = 16),
/// sd/Laplace, the θ channel's excess σ_θB, AUROC and divergences.
pub fn sweep_table(rows: &[SweepRow], kept: usize) -> Table {
    let mut t = Table::new([
        "data (N)",
        "method",
        "n",
        "settings",
        "median ESS",
        "coda ESS",
        "kept·n/N",
        "ESS paper (n = 16)",
        "sd/Laplace",
        "σ_θB",
        "AUROC",
        "diverged",
    ]);
    for r in rows {
        let row = &r.row;
        let f = |x: Option<f64>, digits: usize| x.map_or("–".to_string(), |v| sig(v, digits));
        t.row([
            format!("{} ({})", row.data.letter(), r.rows),
            row.method.label().to_string(),
            if r.batch >= r.rows {
                format!("{} (all)", r.batch)
            } else {
                r.batch.to_string()
            },
            if row.runs.is_empty() && row.diverged.is_empty() {
                "no stable setting".into()
            } else {
                row.settings.describe(row.method)
            },
            pm(row.median_ess(), 3),
            pm(row.median_ess_coda(), 3),
            sig(r.ess_scale(kept), 3),
            if r.batch == BATCH {
                f(paper_ess(row.data, row.method), 4)
            } else {
                "–".into()
            },
            f(row.sd_ratio(), 3),
            sig(row.theta_noise_excess, 2),
            pm(row.auroc(), 3),
            format!(
                "{}/{}",
                row.diverged.len(),
                row.diverged.len() + row.runs.len()
            ),
        ]);
    }
    t
}

/// `blr-batch-sweep-<data>.png`: median ESS against the minibatch size, a curve per method and
/// the dashed kept·n/N reference, one chart per data set.
fn sweep_plot(opts: &RunOptions, rows: &[SweepRow], kept: usize) -> Result<(), ExperimentError> {
    for ds in DataSet::ALL {
        let of_data: Vec<&SweepRow> = rows.iter().filter(|r| r.row.data == ds).collect();
        if of_data.is_empty() {
            continue;
        }
        let mut series: Vec<Series> = SWEEP_METHODS
            .into_iter()
            .enumerate()
            .map(|(j, method)| {
                let pts = of_data
                    .iter()
                    .filter(|r| r.row.method == method)
                    .filter_map(|r| r.row.median_ess().map(|(m, _)| (r.batch as f64, m)))
                    .collect();
                Series::new(method.label(), pts, j + 1)
            })
            .collect();
        let mut reference: Vec<(f64, f64)> = of_data
            .iter()
            .map(|r| (r.batch as f64, r.ess_scale(kept)))
            .collect();
        reference.sort_by(|a, b| a.0.total_cmp(&b.0));
        reference.dedup();
        series.push(Series::truth(
            format!("{kept}·n/N: one draw per N/n iterations"),
            reference,
        ));
        let title = format!(
            "BLR {} (N = {}): median ESS of {kept} kept draws against the minibatch size",
            ds.name(),
            of_data[0].rows
        );
        line_chart(
            &opts.out.join(format!("blr-batch-sweep-{}.png", ds.name())),
            &Chart {
                title: &title,
                x_label: "minibatch size n",
                y_label: "median ESS",
                x_scale: Scale::Log,
                y_scale: Scale::Log,
            },
            &series,
        )?;
    }
    Ok(())
}

/// The text the CLI prints: the protocol and [`sweep_table`].
pub fn report(rows: &[SweepRow], opts: &RunOptions) -> String {
    let (iterations, burn_in) = protocol_length(opts);
    format!(
        "BLR: median ESS against the minibatch size n, {iterations} iterations, {burn_in} burn-in, {} run(s) per row; settings from a validation search at each n ({} run(s) per setting)\n{}",
        opts.chains,
        opts.chains.min(SWEEP_SEARCH_RUNS),
        sweep_table(rows, iterations - burn_in)
    )
}
