//! `blr`'s Table 1: the printed table and its headline, the CSV files (`blr.csv`, `blr-runs.csv`) and the trace plots.

use super::result::BlrResult;
use super::{BATCH, paper_auroc, paper_ess, trace_weight};
use crate::experiments::common::{ExperimentError, RunOptions, sig};
use crate::models::logistic_regression::DataSet;
use crate::plot::{Chart, Scale, Series, line_chart};
use crate::report::Table;

/// Writes `blr.csv` (the table), `blr-runs.csv` (every run) and `blr-trace-<data>.png` (one
/// weight's trace in the first run of each method).
pub(super) fn write_outputs(opts: &RunOptions, r: &BlrResult) -> Result<(), ExperimentError> {
    csv_table(r).write_csv(&opts.out.join("blr.csv"))?;
    let mut runs = Table::new([
        "data",
        "method",
        "run",
        "auroc",
        "median_ess",
        "median_ess_first_dip",
        "median_ess_coda",
        "sd_ratio_to_laplace",
        "temperature",
    ]);
    for row in &r.rows {
        for (i, run) in row.runs.iter().enumerate() {
            runs.row([
                row.data.letter().to_string(),
                row.method.label().to_string(),
                i.to_string(),
                format!("{}", run.auroc),
                format!("{}", run.median_ess),
                format!("{}", run.median_ess_first_dip),
                format!("{}", run.median_ess_coda),
                format!("{}", run.sd_ratio),
                format!("{}", run.temperature),
            ]);
        }
    }
    runs.write_csv(&opts.out.join("blr-runs.csv"))?;
    let sets: Vec<DataSet> = DataSet::ALL
        .into_iter()
        .filter(|d| r.rows.iter().any(|row| row.data == *d))
        .collect();
    for ds in sets {
        let (_, name) = trace_weight(ds);
        let series: Vec<Series> = r
            .rows
            .iter()
            .filter(|row| row.data == ds && !row.runs.is_empty())
            .enumerate()
            .map(|(i, row)| {
                let pts = row.runs[0]
                    .trace
                    .iter()
                    .enumerate()
                    .map(|(t, &w)| (t as f64, w))
                    .collect();
                Series::new(row.method.label(), pts, i + 1)
            })
            .collect();
        let title = format!(
            "BLR {} ({}): trace of the weight of {name}, run 1 (burn-in {})",
            ds.name(),
            ds.letter(),
            r.burn_in
        );
        line_chart(
            &opts.out.join(format!("blr-trace-{}.png", ds.name())),
            &Chart {
                title: &title,
                x_label: "iteration",
                y_label: "weight",
                x_scale: Scale::Linear,
                y_scale: Scale::Linear,
            },
            &series,
        )?;
    }
    Ok(())
}

/// "mean ± sd" with `digits` significant digits, or "–".
pub(super) fn pm(x: Option<(f64, f64)>, digits: usize) -> String {
    x.map_or("–".into(), |(m, s)| {
        format!("{} ± {}", sig(m, digits), sig(s, 2))
    })
}

/// Our numbers beside Table 1's, one row per data set and method.
pub fn table(r: &BlrResult) -> Table {
    let mut t = Table::new([
        "data (D)",
        "method",
        "settings",
        "AUROC",
        "paper AUROC",
        "median ESS",
        "coda ESS",
        "first-dip ESS",
        "paper ESS",
        "sd/Laplace",
        "temp.",
        "σ_θB",
        "diverged",
    ]);
    for row in &r.rows {
        t.row([
            format!("{} ({})", row.data.letter(), row.data.dim()),
            row.method.label().to_string(),
            row.settings.describe(row.method),
            pm(row.auroc(), 3),
            paper_auroc(row.data, row.method).map_or("–".into(), |x| format!("{x:.2}")),
            row.median_ess()
                .map_or("–".into(), |(m, s)| format!("{m:.0} ± {s:.0}")),
            row.median_ess_coda()
                .map_or("–".into(), |(m, s)| format!("{m:.0} ± {s:.0}")),
            row.median_ess_first_dip()
                .map_or("–".into(), |(m, s)| format!("{m:.0} ± {s:.0}")),
            paper_ess(row.data, row.method).map_or("–".into(), |x| format!("{x:.0}")),
            row.sd_ratio().map_or("–".into(), |x| sig(x, 3)),
            row.temperature().map_or("–".into(), |x| sig(x, 3)),
            if row.theta_noise_excess > 0.0 {
                sig(row.theta_noise_excess, 2)
            } else {
                "–".into()
            },
            format!(
                "{}/{}",
                row.diverged.len(),
                row.runs.len() + row.diverged.len()
            ),
        ]);
    }
    t
}

/// The table as machine-readable CSV columns.
fn csv_table(r: &BlrResult) -> Table {
    let mut t = Table::new([
        "data",
        "weights",
        "method",
        "h",
        "sigma_p",
        "sigma_theta",
        "sigma_xi",
        "c",
        "runs",
        "auroc_mean",
        "auroc_sd",
        "paper_auroc",
        "median_ess_mean",
        "median_ess_sd",
        "median_ess_first_dip_mean",
        "median_ess_coda_mean",
        "paper_median_ess",
        "sd_ratio_to_laplace",
        "temperature",
        "sigma_theta_times_b",
        "diverged",
    ]);
    let f = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v}"));
    for row in &r.rows {
        let s = row.settings;
        t.row([
            row.data.letter().to_string(),
            row.data.dim().to_string(),
            row.method.label().to_string(),
            format!("{}", s.h),
            format!("{}", s.sigma_p),
            format!("{}", s.sigma_theta),
            format!("{}", s.sigma_xi),
            format!("{}", s.c),
            row.runs.len().to_string(),
            f(row.auroc().map(|x| x.0)),
            f(row.auroc().map(|x| x.1)),
            f(paper_auroc(row.data, row.method)),
            f(row.median_ess().map(|x| x.0)),
            f(row.median_ess().map(|x| x.1)),
            f(row.median_ess_first_dip().map(|x| x.0)),
            f(row.median_ess_coda().map(|x| x.0)),
            f(paper_ess(row.data, row.method)),
            f(row.sd_ratio()),
            f(row.temperature()),
            format!("{}", row.theta_noise_excess),
            row.diverged.len().to_string(),
        ]);
    }
    t
}

/// The text the CLI prints: the protocol and [`table`].
pub fn report(r: &BlrResult) -> String {
    format!(
        "Bayesian logistic regression (Zhang et al. 2017 §4.2, Table 1): minibatch {BATCH}, {} iterations, {} burn-in, {} run(s); AUROC on the held-out split (mean ± sd over runs), median ESS over the weights (Geyer; coda's AR spectral ESS beside it; mean ± sd over runs), temp. = mean kinetic temperature after burn-in\n{}",
        r.iterations,
        r.burn_in,
        r.runs,
        table(r)
    )
}
