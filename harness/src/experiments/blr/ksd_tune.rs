//! `blr --ksd-tune`: Pima's step sizes (and SGNHT's friction) chosen by the kernel Stein discrepancy of short runs (Coullon, South & Nemeth 2023), against the range the validation search accepts.
//!
//! For each method of [`Method::ALL`] the settings other than h stay at the validation search's
//! choice ([`settings`]`(Pima, method)`), and h runs over [`TUNE_STEPS`], the validation
//! search's own grid. Every candidate runs `opts.chains` short chains on the validation search's
//! fit split ([`Problem::validation`]) with the experiment's minibatch of [`BATCH`] rows, from
//! the random starts [`run_chain`] uses; the kept draws of all chains are pooled, the full-data
//! score −∇U of the fit split's posterior is evaluated at each, and
//! [`ksd_search`](crate::diagnostics::ksd_search) scores them with the IMQ KSD (c = 1, β = −½)
//! and picks the smallest. A run that diverges makes its candidate infinitely bad. The chains of
//! one method use the same seeds at every h (common random numbers: the comparison across h is
//! not blurred by the starts). SGNHT also gets a joint search over (h, A) on
//! [`TUNE_STEPS`] × [`TUNE_SIGMA_P`] — the friction search the issue asks for.
//!
//! The reference is the validation search's table, `harness/results/blr/blr-tune.csv`
//! ([`validation_table_path`], written by `blr --tune --runs 3`): for the chosen family (the
//! settings other than h), the h values whose cells [`acceptable`] admits (stable, within 0.02
//! of the best validation AUROC, sd ratio within the tolerance the search settled on) and, more
//! loosely, those [`competitive`] admits (stable and within 0.02 of the best AUROC). The
//! experiment refuses a table whose choice is not [`settings`]'s, so the two cannot drift apart.
//!
//! Because the paper leaves the run length, burn-in, thinning and kernel scale to the user,
//! [`KSD_READINGS`] reruns the search under other readings of them; the report gives each one's
//! picks.
//!
//! Two selection rules read the same runs. The paper's ([`KsdSearch::best`]): the smallest KSD
//! among the candidates whose chains all finished. And, for the protocols marked
//! [`KsdProtocol::with_margin`] (the main one and the 5000-iteration one), a reading labelled
//! "… + margin" with the validation search's one-step stability margin
//! ([`KsdSearch::best_with_margin`]): a candidate is eligible only if no chain diverged at it
//! nor at the next larger h of its family (for SGNHT's (h, A) search, the same A). It costs no
//! run: the margin only changes which finished candidate wins.
//!
//! "The range our validation search picks" has two readings in the report: per method, the h
//! values [`acceptable`] admits in its chosen family (the narrow one); and the span of the h
//! values the validation search chose across the five methods ([`validation_span`], 0.005–0.05
//! on Pima).

use super::problem::Problem;
use super::result::RunOut;
use super::run::{Protocol, run_chain};
use super::tune::{TuneCell, TuneMeans, acceptable, choose, competitive};
use super::{BATCH, Method, Settings, TUNE_SIGMA_P, TUNE_STEPS, settings};
use crate::diagnostics::{Imq, KsdSearch, ShortRun, ksd_search};
use crate::experiments::common::{ExperimentError, RunOptions, sig};
use crate::models::logistic_regression::DataSet;
use crate::report::Table;
use std::path::{Path, PathBuf};

/// How each candidate's short runs are made and scored.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KsdProtocol {
    /// What the report calls this reading.
    pub label: &'static str,
    /// Iterations per chain, burn-in included.
    pub iterations: usize,
    /// Iterations discarded at the start of each chain.
    pub burn_in: usize,
    /// Keep every `thin`-th draw after burn-in.
    pub thin: usize,
    /// The IMQ kernel.
    pub kernel: Imq,
    /// Whether the same runs are also read with the stability margin, as a reading of their own
    /// ("`label` + margin"; [`KsdSearch::best_with_margin`]).
    pub with_margin: bool,
}

/// Iterations of a short run: a fifth of the validation search's 5000, so the whole search
/// (70 settings × 5 chains × 1000) runs the iterations of about 23 of the 430 Pima cells of
/// `blr --tune --runs 3` (3 × 5000 each).
pub const KSD_ITERATIONS: usize = 1000;
/// Burn-in of a short run: the validation protocol's fraction (1000 of 5000).
pub const KSD_BURN_IN: usize = 200;
/// Thinning of the kept draws: every second one, as Coullon et al.'s grid search thins.
pub const KSD_THIN: usize = 2;
/// Iterations per chain in quick mode.
pub const QUICK_KSD_ITERATIONS: usize = 300;

/// The main reading: [`KSD_ITERATIONS`], [`KSD_BURN_IN`], [`KSD_THIN`], Gorham & Mackey's and
/// Coullon et al.'s kernel (c = 1, β = −½), read with and without the stability margin; quick
/// mode: [`QUICK_KSD_ITERATIONS`] with the same fraction of burn-in.
pub fn ksd_protocol(opts: &RunOptions) -> KsdProtocol {
    let iterations = if opts.quick {
        QUICK_KSD_ITERATIONS
    } else {
        KSD_ITERATIONS
    };
    KsdProtocol {
        label: "main",
        iterations,
        burn_in: iterations / 5,
        thin: KSD_THIN,
        kernel: Imq::default(),
        with_margin: true,
    }
}

/// Other readings of the paper's recipe (full mode only), each changing one thing of the main
/// protocol: no burn-in (the paper scores the whole run, from a start near the mode; ours start
/// at random), no thinning, heavier thinning, the validation search's full run length, and a
/// kernel scale c = 0.1, below the posterior sds (0.15–0.20 on the fit split; the report prints
/// them), where c = 1 is 5–7 of them and the kernel varies little across the posterior. The
/// 5000-iteration one is also read with the stability margin.
pub const KSD_READINGS: [KsdProtocol; 5] = [
    KsdProtocol {
        label: "no burn-in",
        iterations: KSD_ITERATIONS,
        burn_in: 0,
        thin: KSD_THIN,
        kernel: Imq { c: 1.0, beta: -0.5 },
        with_margin: false,
    },
    KsdProtocol {
        label: "thin 1",
        iterations: KSD_ITERATIONS,
        burn_in: KSD_BURN_IN,
        thin: 1,
        kernel: Imq { c: 1.0, beta: -0.5 },
        with_margin: false,
    },
    KsdProtocol {
        label: "thin 8",
        iterations: KSD_ITERATIONS,
        burn_in: KSD_BURN_IN,
        thin: 8,
        kernel: Imq { c: 1.0, beta: -0.5 },
        with_margin: false,
    },
    KsdProtocol {
        label: "5000 iterations, thin 10",
        iterations: 5000,
        burn_in: 1000,
        thin: 10,
        kernel: Imq { c: 1.0, beta: -0.5 },
        with_margin: true,
    },
    KsdProtocol {
        label: "c = 0.1",
        iterations: KSD_ITERATIONS,
        burn_in: KSD_BURN_IN,
        thin: KSD_THIN,
        kernel: Imq { c: 0.1, beta: -0.5 },
        with_margin: false,
    },
];

/// One method's step-size search under one protocol, beside the validation search's verdict.
#[derive(Clone, Debug)]
pub struct KsdTuneRow {
    /// The method.
    pub method: Method,
    /// Its validation-chosen settings (h is searched).
    pub settings: Settings,
    /// Every h of [`TUNE_STEPS`] with its KSD (+∞ if a chain diverged).
    pub ksd: Vec<(f64, f64)>,
    /// The h the reading's rule picks: the smallest KSD, among the candidates with no diverged
    /// chain (the paper's rule) or, with the margin, among those whose next larger h had none
    /// either; none if no candidate is eligible.
    pub ksd_h: Option<f64>,
    /// The validation search's h ([`settings`]).
    pub validation_h: f64,
    /// The h values of the chosen family that [`acceptable`] admits.
    pub acceptable_h: Vec<f64>,
    /// The h values of the chosen family that [`competitive`] admits.
    pub competitive_h: Vec<f64>,
}

impl KsdTuneRow {
    /// Is the KSD pick one of the validation-acceptable step sizes?
    pub fn within_acceptable(&self) -> bool {
        self.ksd_h.is_some_and(|h| self.acceptable_h.contains(&h))
    }

    /// How much worse by the KSD the validation search's h is than the KSD pick: their KSD
    /// ratio (≥ 1; ∞ if the validation h diverged in the short runs).
    pub fn validation_ksd_ratio(&self) -> Option<f64> {
        let at = |h: f64| self.ksd.iter().find(|c| c.0 == h).map(|c| c.1);
        Some(at(self.validation_h)? / at(self.ksd_h?)?)
    }

    /// Is the KSD pick one of the stable and competitive step sizes?
    pub fn within_competitive(&self) -> bool {
        self.ksd_h.is_some_and(|h| self.competitive_h.contains(&h))
    }

    /// Is the KSD pick within the span of the validation search's choices over the five
    /// methods ([`validation_span`])?
    pub fn within_span(&self) -> bool {
        let (lo, hi) = validation_span();
        self.ksd_h.is_some_and(|h| (lo..=hi).contains(&h))
    }
}

/// The smallest and largest h the validation search chose on Pima across [`Method::ALL`]
/// ([`settings`]): the looser reading of "the range our validation search picks".
pub fn validation_span() -> (f64, f64) {
    Method::ALL
        .iter()
        .map(|&m| settings(DataSet::Pima, m).h)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), h| {
            (lo.min(h), hi.max(h))
        })
}

/// SGNHT's joint search over (h, A).
#[derive(Clone, Debug)]
pub struct FrictionSearch {
    /// Every (h, A) with its KSD.
    pub ksd: Vec<((f64, f64), f64)>,
    /// The (h, A) the reading's rule picks (the margin, if any, within each A).
    pub ksd_pick: Option<(f64, f64)>,
    /// The validation search's (h, A).
    pub validation: (f64, f64),
    /// The (h, A) cells [`acceptable`] admits, over all of SGNHT's families.
    pub acceptable: Vec<(f64, f64)>,
}

/// The searches under one protocol and selection rule: a reading.
#[derive(Clone, Debug)]
pub struct KsdTune {
    /// The protocol.
    pub protocol: KsdProtocol,
    /// Whether the picks apply the stability margin ([`KsdSearch::best_with_margin`]); the
    /// paper's rule ([`KsdSearch::best`]) if not.
    pub margin: bool,
    /// Chains pooled per candidate.
    pub chains: usize,
    /// One row per method of [`Method::ALL`].
    pub rows: Vec<KsdTuneRow>,
    /// SGNHT's (h, A) search.
    pub friction: FrictionSearch,
    /// Wall time of the runs and KSDs, seconds (reported, never tested); a margin reading shares
    /// its runs, and this time, with the protocol's plain reading.
    pub seconds: f64,
    /// The smallest and largest marginal sd of the fit split's Laplace approximation: the
    /// posterior's scale, against which the kernel's c is read.
    pub laplace_sd: (f64, f64),
}

impl KsdTune {
    /// What the report calls this reading: the protocol's label, with " + margin" for the
    /// stability margin.
    pub fn label(&self) -> String {
        if self.margin {
            format!("{} + margin", self.protocol.label)
        } else {
            self.protocol.label.to_string()
        }
    }

    /// How many of the five methods' picks [`acceptable`] admits.
    pub fn count_acceptable(&self) -> usize {
        self.rows.iter().filter(|r| r.within_acceptable()).count()
    }

    /// How many of the five methods' picks lie in [`validation_span`].
    pub fn count_in_span(&self) -> usize {
        self.rows.iter().filter(|r| r.within_span()).count()
    }
}

/// The validation search's table the comparison reads: `harness/results/blr/blr-tune.csv`.
pub fn validation_table_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("results/blr/blr-tune.csv")
}

/// One Pima row of `blr-tune.csv`.
#[derive(Clone, Debug)]
struct ValidationCell {
    method: Method,
    /// The settings other than h, as [`Settings::describe`] prints them.
    family: String,
    h: f64,
    cell: TuneCell,
    marked: bool,
}

/// [`Settings::describe`] without its leading `h=… `, and h.
fn split_h(described: &str) -> Option<(f64, String)> {
    let (h, rest) = described.split_once(' ')?;
    Some((h.strip_prefix("h=")?.parse().ok()?, rest.to_string()))
}

/// The Pima rows of the validation search's table, with families numbered per method in order
/// of appearance.
fn read_validation(path: &Path) -> Result<Vec<ValidationCell>, ExperimentError> {
    let bad = |what: String| ExperimentError::Invalid(format!("{}: {what}", path.display()));
    let mut reader = csv::Reader::from_path(path).map_err(|e| bad(e.to_string()))?;
    let mut out: Vec<ValidationCell> = Vec::new();
    for record in reader.records() {
        let r = record.map_err(|e| bad(e.to_string()))?;
        if r.get(0) != Some(DataSet::Pima.letter()) {
            continue;
        }
        let field = |i: usize| r.get(i).unwrap_or("");
        let method = *Method::ALL
            .iter()
            .find(|m| m.label() == field(1))
            .ok_or_else(|| bad(format!("unknown method {}", field(1))))?;
        let (h, family) = split_h(field(2)).ok_or_else(|| bad(format!("settings {}", field(2))))?;
        let diverged: usize = field(3)
            .split('/')
            .next()
            .and_then(|k| k.parse().ok())
            .ok_or_else(|| bad(format!("diverged {}", field(3))))?;
        let number = |i: usize| field(i).parse::<f64>().ok();
        let means = match (number(4), number(5), number(6), number(7)) {
            (Some(auroc), Some(ess), Some(sd_ratio), Some(temperature)) => Some(TuneMeans {
                auroc,
                ess,
                sd_ratio,
                temperature,
            }),
            _ => None,
        };
        let mut families: Vec<&str> = Vec::new();
        for c in out.iter().filter(|c| c.method == method) {
            if !families.contains(&c.family.as_str()) {
                families.push(&c.family);
            }
        }
        let index = families
            .iter()
            .position(|f| *f == family)
            .unwrap_or(families.len());
        out.push(ValidationCell {
            method,
            family,
            h,
            cell: TuneCell {
                family: index,
                diverged,
                means,
            },
            marked: !field(8).is_empty(),
        });
    }
    Ok(out)
}

/// The pooled kept draws of a candidate's chains with the full-data score at each, or why a
/// chain failed.
fn pool(problem: &Problem, chains: &[Result<RunOut, String>]) -> Result<ShortRun, String> {
    let d = problem.model.dim();
    let (mut draws, mut scores) = (Vec::new(), Vec::new());
    let mut g = vec![0.0; d];
    for chain in chains {
        let out = chain.as_ref().map_err(Clone::clone)?;
        let n = out.draws.first().map_or(0, Vec::len);
        for t in 0..n {
            let w: Vec<f64> = (0..d).map(|j| out.draws[j][t]).collect();
            problem.model.gradient(&w, &mut g);
            draws.extend_from_slice(&w);
            scores.extend(g.iter().map(|x| -x));
        }
    }
    Ok(ShortRun::new(draws, scores, d))
}

/// The settings every candidate runs: each method's chosen family over [`TUNE_STEPS`], and
/// SGNHT's over [`TUNE_SIGMA_P`] too.
fn candidates() -> Vec<(Method, Settings)> {
    let mut out = Vec::new();
    for method in Method::ALL {
        let base = settings(DataSet::Pima, method);
        let frictions: Vec<f64> = if method == Method::Sgnht {
            TUNE_SIGMA_P.to_vec()
        } else {
            vec![base.sigma_p]
        };
        for sigma_p in frictions {
            for h in TUNE_STEPS {
                out.push((method, Settings { h, sigma_p, ..base }));
            }
        }
    }
    out
}

/// Runs the search under the main protocol ([`ksd_protocol`]) and, in full mode, under every
/// one of [`KSD_READINGS`]; returns one reading per protocol and rule (the margin readings right
/// after their protocol's plain one). Writes `blr-ksd-tune.csv` (the summary: one row per
/// reading and method), `blr-ksd-tune-readings.csv` (one row per reading: the picks and both
/// in-range counts) and `blr-ksd-tune-cells.csv` (every candidate's KSD, per protocol) into
/// `opts.out`.
pub fn ksd_tune(opts: &RunOptions) -> Result<Vec<KsdTune>, ExperimentError> {
    opts.prepare()?;
    let validation = read_validation(&validation_table_path())?;
    let problem = Problem::load(DataSet::Pima)?.validation()?;
    let mut protocols = vec![ksd_protocol(opts)];
    if !opts.quick {
        protocols.extend(KSD_READINGS);
    }
    let mut out = Vec::new();
    for protocol in protocols {
        out.extend(search(opts, &problem, &validation, protocol)?);
    }
    ksd_tune_table(&out).write_csv(&opts.out.join("blr-ksd-tune.csv"))?;
    readings_table(&out).write_csv(&opts.out.join("blr-ksd-tune-readings.csv"))?;
    cells_table(&out).write_csv(&opts.out.join("blr-ksd-tune-cells.csv"))?;
    Ok(out)
}

/// One protocol's searches: its plain reading and, if [`KsdProtocol::with_margin`], its margin
/// reading, from the same runs.
fn search(
    opts: &RunOptions,
    problem: &Problem,
    validation: &[ValidationCell],
    protocol: KsdProtocol,
) -> Result<Vec<KsdTune>, ExperimentError> {
    let start = std::time::Instant::now();
    let configs = candidates();
    let run_protocol = Protocol {
        iterations: protocol.iterations,
        burn_in: protocol.burn_in,
        trace_weight: 0,
        batch: BATCH,
        thin: protocol.thin,
        keep_draws: true,
    };
    let outs = opts.par_chains(
        &configs,
        protocol.iterations,
        "blr --ksd-tune",
        |_, &(method, s), c, pb| {
            // Common random numbers: a method's chains have the same seeds at every setting.
            let config = 7000 + Method::ALL.iter().position(|m| *m == method).unwrap_or(0);
            run_chain(
                problem,
                method,
                s,
                run_protocol,
                opts.chain_seed(config, c),
                pb,
            )
            .map_err(|e| e.to_string())
        },
    );
    let pooled: Vec<Result<ShortRun, String>> =
        outs.iter().map(|chains| pool(problem, chains)).collect();
    let run = |&i: &usize| pooled[i].clone();
    let ksd_err = |e| ExperimentError::Invalid(format!("KSD search: {e}"));
    // A family for the margin: the settings other than h. `candidates` lists each family
    // contiguously in increasing h, as `best_with_margin` needs.
    let family = |&i: &usize| (configs[i].0, configs[i].1.sigma_p);
    let mut methods = Vec::new();
    for method in Method::ALL {
        let chosen = settings(DataSet::Pima, method);
        let indices: Vec<usize> = (0..configs.len())
            .filter(|&i| configs[i].0 == method && configs[i].1.sigma_p == chosen.sigma_p)
            .collect();
        let found: KsdSearch<usize, String> =
            ksd_search(&indices, run, protocol.kernel).map_err(ksd_err)?;
        let (acceptable_h, competitive_h) = validation_range(validation, method)?;
        methods.push((method, chosen, found, acceptable_h, competitive_h));
    }
    let sgnht: Vec<usize> = (0..configs.len())
        .filter(|&i| configs[i].0 == Method::Sgnht)
        .collect();
    let found_friction = ksd_search(&sgnht, run, protocol.kernel).map_err(ksd_err)?;
    let seconds = start.elapsed().as_secs_f64();
    let h_a = |i: usize| (configs[i].1.h, configs[i].1.sigma_p);
    let grid: Vec<&ValidationCell> = validation
        .iter()
        .filter(|c| c.method == Method::Sgnht)
        .collect();
    let cells: Vec<TuneCell> = grid.iter().map(|c| c.cell).collect();
    let a_of = |c: &ValidationCell| -> f64 {
        c.family
            .strip_prefix("A=")
            .and_then(|a| a.parse().ok())
            .unwrap_or(f64::NAN)
    };
    let friction_acceptable: Vec<(f64, f64)> = acceptable(&cells)
        .into_iter()
        .map(|i| (grid[i].h, a_of(grid[i])))
        .collect();
    let chosen_sgnht = settings(DataSet::Pima, Method::Sgnht);
    let laplace_sd = problem
        .laplace
        .sd
        .iter()
        .fold((f64::INFINITY, 0.0_f64), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        });
    let rules: &[bool] = if protocol.with_margin {
        &[false, true]
    } else {
        &[false]
    };
    let readings = rules
        .iter()
        .map(|&margin| {
            let pick = |found: &KsdSearch<usize, String>| -> Option<usize> {
                let i = if margin {
                    found.best_with_margin(family)
                } else {
                    found.best
                };
                i.map(|i| found.candidates[i].candidate)
            };
            let rows = methods
                .iter()
                .map(
                    |(method, chosen, found, acceptable_h, competitive_h)| KsdTuneRow {
                        method: *method,
                        settings: *chosen,
                        ksd: found
                            .candidates
                            .iter()
                            .map(|c| (configs[c.candidate].1.h, c.ksd))
                            .collect(),
                        ksd_h: pick(found).map(|i| configs[i].1.h),
                        validation_h: chosen.h,
                        acceptable_h: acceptable_h.clone(),
                        competitive_h: competitive_h.clone(),
                    },
                )
                .collect();
            let friction = FrictionSearch {
                ksd: found_friction
                    .candidates
                    .iter()
                    .map(|c| (h_a(c.candidate), c.ksd))
                    .collect(),
                ksd_pick: pick(&found_friction).map(h_a),
                validation: (chosen_sgnht.h, chosen_sgnht.sigma_p),
                acceptable: friction_acceptable.clone(),
            };
            KsdTune {
                protocol,
                margin,
                chains: opts.chains,
                rows,
                friction,
                seconds,
                laplace_sd,
            }
        })
        .collect();
    Ok(readings)
}

/// The h values of `method`'s validation-chosen family that [`acceptable`] and [`competitive`]
/// admit; refuses a table whose own choice is not [`settings`]'s.
fn validation_range(
    validation: &[ValidationCell],
    method: Method,
) -> Result<(Vec<f64>, Vec<f64>), ExperimentError> {
    let grid: Vec<&ValidationCell> = validation.iter().filter(|c| c.method == method).collect();
    let cells: Vec<TuneCell> = grid.iter().map(|c| c.cell).collect();
    let chosen = settings(DataSet::Pima, method);
    let (_, family) = split_h(&chosen.describe(method)).unwrap_or_default();
    let picked = choose(&cells);
    let consistent =
        picked.is_some_and(|i| grid[i].marked && grid[i].h == chosen.h && grid[i].family == family);
    if !consistent {
        return Err(ExperimentError::Invalid(format!(
            "{}: the validation table's choice for {} is not settings()'s {}; rerun blr --tune",
            validation_table_path().display(),
            method.label(),
            chosen.describe(method)
        )));
    }
    let in_family = |idx: Vec<usize>| -> Vec<f64> {
        idx.into_iter()
            .filter(|&i| grid[i].family == family)
            .map(|i| grid[i].h)
            .collect()
    };
    Ok((
        in_family(acceptable(&cells)),
        in_family(competitive(&cells)),
    ))
}

/// The KSD of the validation search's (h, A) over the KSD pick's.
fn friction_ratio(f: &FrictionSearch) -> Option<f64> {
    let at = |p: (f64, f64)| f.ksd.iter().find(|c| c.0 == p).map(|c| c.1);
    Some(at(f.validation)? / at(f.ksd_pick?)?)
}

fn list(h: &[f64]) -> String {
    if h.is_empty() {
        "–".into()
    } else {
        h.iter().map(f64::to_string).collect::<Vec<_>>().join(", ")
    }
}

fn yes_no(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

/// The summary: per reading and method, the KSD pick, the validation pick and range, and
/// whether the pick lies in it (the method's acceptable h, its stable and competitive h, and the
/// span of the five methods' validation choices, [`validation_span`]); SGNHT's (h, A) search as
/// its own row.
pub fn ksd_tune_table(searches: &[KsdTune]) -> Table {
    let mut t = Table::new([
        "protocol",
        "method",
        "fixed settings",
        "KSD h",
        "validation h",
        "validation-acceptable h",
        "stable & competitive h",
        "KSD h acceptable?",
        "KSD h competitive?",
        "KSD h in validation span?",
        "KSD(validation h) / KSD(KSD h)",
    ]);
    for s in searches {
        for r in &s.rows {
            let described = r.settings.describe(r.method);
            t.row([
                s.label(),
                r.method.label().to_string(),
                split_h(&described).map_or(described, |(_, rest)| rest),
                r.ksd_h.map_or("–".into(), |h| h.to_string()),
                r.validation_h.to_string(),
                list(&r.acceptable_h),
                list(&r.competitive_h),
                yes_no(r.within_acceptable()).into(),
                yes_no(r.within_competitive()).into(),
                yes_no(r.within_span()).into(),
                r.validation_ksd_ratio().map_or("–".into(), |x| sig(x, 3)),
            ]);
        }
        let f = &s.friction;
        let pair = |(h, a): (f64, f64)| format!("h={h} A={a}");
        let (lo, hi) = validation_span();
        t.row([
            s.label(),
            "SGNHT (h, A)".to_string(),
            "A searched".to_string(),
            f.ksd_pick.map_or("–".into(), pair),
            pair(f.validation),
            f.acceptable
                .iter()
                .map(|&p| pair(p))
                .collect::<Vec<_>>()
                .join("; "),
            String::new(),
            yes_no(f.ksd_pick.is_some_and(|p| f.acceptable.contains(&p))).into(),
            String::new(),
            yes_no(f.ksd_pick.is_some_and(|(h, _)| (lo..=hi).contains(&h))).into(),
            friction_ratio(f).map_or("–".into(), |x| sig(x, 3)),
        ]);
    }
    t
}

/// One row per reading: each method's pick, how many of the five picks each reading of "the
/// range our validation search picks" admits, and SGNHT's (h, A) pick.
pub fn readings_table(searches: &[KsdTune]) -> Table {
    let (lo, hi) = validation_span();
    let mut head = vec!["reading".to_string()];
    head.extend(Method::ALL.iter().map(|m| format!("{} h", m.label())));
    head.push("acceptable (of 5)".into());
    head.push(format!("in span {lo}–{hi} (of 5)"));
    head.push("SGNHT (h, A)".into());
    let mut t = Table::new(head);
    for s in searches {
        let mut row = vec![s.label()];
        row.extend(
            s.rows
                .iter()
                .map(|r| r.ksd_h.map_or("–".into(), |h| h.to_string())),
        );
        row.push(s.count_acceptable().to_string());
        row.push(s.count_in_span().to_string());
        row.push(
            s.friction
                .ksd_pick
                .map_or("–".into(), |(h, a)| format!("h={h} A={a}")),
        );
        t.row(row);
    }
    t
}

/// Every candidate's KSD, per protocol (a margin reading has its protocol's KSDs, so it is left
/// out).
fn cells_table(searches: &[KsdTune]) -> Table {
    let mut t = Table::new(["protocol", "method", "h", "A", "KSD"]);
    for s in searches.iter().filter(|s| !s.margin) {
        for r in &s.rows {
            if r.method == Method::Sgnht {
                continue; // in the (h, A) rows below
            }
            for &(h, ksd) in &r.ksd {
                t.row([
                    s.protocol.label.to_string(),
                    r.method.label().to_string(),
                    h.to_string(),
                    r.settings.sigma_p.to_string(),
                    sig(ksd, 4),
                ]);
            }
        }
        for &((h, a), ksd) in &s.friction.ksd {
            t.row([
                s.protocol.label.to_string(),
                Method::Sgnht.label().to_string(),
                h.to_string(),
                a.to_string(),
                sig(ksd, 4),
            ]);
        }
    }
    t
}

/// The text the CLI prints.
pub fn report(searches: &[KsdTune]) -> String {
    let mut s = String::new();
    for k in searches {
        let p = k.protocol;
        if k.margin {
            s += &format!(
                "{}: the runs of {}, each family's h eligible only if no chain diverged at it nor at the next larger h\n",
                k.label(),
                p.label
            );
            continue;
        }
        s += &format!(
            "{}: {} iterations ({} burn-in), every {} kept, {} chains pooled per setting, IMQ c = {}, β = {}; {:.1} s\n",
            p.label,
            p.iterations,
            p.burn_in,
            p.thin,
            k.chains,
            p.kernel.c,
            p.kernel.beta,
            k.seconds
        );
    }
    if let Some(k) = searches.first() {
        s += &format!(
            "posterior (Laplace) marginal sds of the fit split: {}–{}\n",
            sig(k.laplace_sd.0, 2),
            sig(k.laplace_sd.1, 2)
        );
    }
    let t = ksd_tune_table(searches);
    let (lo, hi) = validation_span();
    format!(
        "BLR step sizes on Pima by the KSD of short runs (Coullon, South & Nemeth 2023) against the validation search\n{s}{t}\n\nPicks per reading (blr-ksd-tune-readings.csv); \"acceptable\": the method's validation-acceptable h, \"span\": the validation choices' span over the five methods, {lo}–{hi}:\n{}\n\nKSD of every candidate (blr-ksd-tune-cells.csv):\n{}",
        readings_table(searches),
        cells_table(searches)
    )
}
