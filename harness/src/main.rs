//! Command-line entry point of the harness: parses the arguments and dispatches to one experiment per subcommand (each prints its own report), or to the demo.

use clap::{Args, Parser, Subcommand, ValueEnum};
use harness::demo::{self, DemoConfig, SamplerKind};
use harness::experiments::{
    ExperimentError, RunOptions, blr, blr_2d, bnn, calibration, cv, double_well, double_well_kl,
    gaussian_mean, lda, multi_well, normal_1d, normal_gamma,
};
use harness::export::{self, DrawsOptions};
use harness::models::multi_well::GradientNoise;
use sgmcmc::prelude::Integrator;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    version,
    about = "Benchmark models and the papers' experiments for the sgmcmc kernel"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Zhang et al. 2017 §4.2 (Table 1): Bayesian logistic regression on Pima, Ripley, Caravan
    /// and breast cancer; held-out AUROC and median ESS of SGNHT, SGMGT and SGMGT-D (--quick:
    /// Pima only, 2000 iterations, 2 runs).
    Blr(BlrArgs),
    /// Roychowdhury & Parthasarathy 2017 §4.2 (Tables 2–3): the eight samplers on a synthetic 2-d
    /// Bayesian logistic regression; per-iteration times on it, Pima and Ripley.
    #[command(name = "blr-2d")]
    Blr2d(RunsArgs),
    /// Ding et al. 2014 §5 and Li et al. 2016 §5: Bayesian neural networks on the 8×8 digits,
    /// every sampler tuned on a validation split (--quick: SGNHT and mSGNHT-S, 5000 iterations);
    /// with --depth, Li et al. 2016 Fig. 4 (mSGNHT-E vs mSGNHT-S on depth 2–4); with
    /// --schedules, constant vs polynomial vs cyclical step sizes.
    Bnn(BnnArgs),
    /// Calibrated minibatches: Bayesian logistic regression with minibatches of 8, 32 and 128 rows at the
    /// full-batch step size, every sampler with and without the online gradient-noise estimate
    /// (diagonal, dense), posterior means and sds against a full-batch HMC reference (--quick:
    /// SGHMC and SGNHT at b = 32, 1/20 of the steps).
    Calibration(CalibrationArgs),
    /// Control-variate gradients (Baker et al. 2019; SVRG, Dubey et al. 2016) on Bayesian
    /// logistic regression: gradient variance, SGLD/SGHMC/SGNHT with and without them at b = 32
    /// against a full-batch HMC reference, cost per step, test log-loss against passes through
    /// the data, on Pima, breast cancer and a synthetic N = 20 000 set (--quick: Pima, 1/5 of
    /// the steps).
    Cv(CvArgs),
    /// Sample a Bayesian linear regression with minibatch gradients; print the posterior beside
    /// the exact one.
    Demo(DemoArgs),
    /// Our summary (mean, sd, ESS, split-R̂) of draws written with --draws: each FILE is one
    /// chain of the same run, as CSV on standard output (tools/arviz compares it with ArviZ).
    Summarize {
        /// The chains' CSV files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Drop this many draws from the start of every chain.
        #[arg(long, default_value_t = 0)]
        skip: usize,
    },
    /// The IMQ kernel Stein discrepancy (Gorham & Mackey 2017) of a sample given its scores
    /// ∇log p, printed with 17 significant digits (tools/arviz/ksd_check.py checks it against
    /// NumPy).
    Ksd {
        /// CSV of the points, one row of d values per draw (a header line is skipped).
        points: PathBuf,
        /// CSV of the scores ∇log p at those points, in the same layout.
        scores: PathBuf,
        /// The IMQ kernel's c.
        #[arg(long, default_value_t = 1.0)]
        c: f64,
        /// The IMQ kernel's β, in (−1, 0).
        #[arg(long, default_value_t = -0.5, allow_hyphen_values = true)]
        beta: f64,
    },
    /// Checks the firmware's on-device diagnostics (its `draw` and `diagnostics` lines) against
    /// the harness's estimators on the same draws; exit status 1 if one differs by more than
    /// 10 % (run by tools/firmware.sh).
    FirmwareDiagnostics {
        /// A log of `sgmcmc-firmware` (text, or decoded by defmt-print).
        log: PathBuf,
    },
    /// Ding et al. 2014 §3 (Fig. 1, 4): fixed friction ξ ∈ {0.1, 1, 10} vs SGNHT on the double well.
    DoubleWell {
        #[command(flatten)]
        common: CommonArgs,
        /// Integrator (the paper's Alg. 1 is Euler).
        #[arg(long, value_enum, default_value = "euler")]
        integrator: IntegratorArg,
    },
    /// Li et al. 2016 Fig. 1: KL divergence of mSGNHT-Euler vs mSGNHT-splitting across h.
    DoubleWellKl {
        #[command(flatten)]
        common: CommonArgs,
    },
    /// Ding et al. 2014 §5.1 (Fig. 2, 5): SGHMC vs SGNHT on a Gaussian mean with minibatches.
    GaussianMean {
        #[command(flatten)]
        common: CommonArgs,
        /// Integrator (the paper's Alg. 1 is Euler).
        #[arg(long, value_enum, default_value = "euler")]
        integrator: IntegratorArg,
    },
    /// Ding et al. 2014 §5 and Li et al. 2016 §5: semi-collapsed LDA (30 topics, minibatch 100)
    /// on synthetic corpora drawn from LDA, ICML-sized and 100× larger; held-out perplexity of
    /// every sampler tuned on validation, topic recovery, the true topics' perplexity (--quick:
    /// SGNHT and mSGNHT-S, ICML-sized, 600 iterations); with --kjv, the King James Bible.
    Lda(LdaArgs),
    /// Zhang et al. 2017 §4.1 (Fig. 3): SGNHT vs SGMGT vs SGMGT-D (a = 2) on a five-mode 2-d potential.
    MultiWell {
        #[command(flatten)]
        common: CommonArgs,
        /// Gradient noise: per-step ∇U + N(0, 2B/h) as in Ding et al. 2014 §3, or
        /// per-evaluation ∇U + N(0, 2B) as Zhang et al. 2017 §4.1 prints it.
        #[arg(long, value_enum, default_value = "per-step")]
        gradient_noise: GradientNoiseArg,
    },
    /// Roychowdhury & Parthasarathy 2017 §4.1 (Table 1): HMC, SGHMC, SGNHT, SG-NPHMC and their
    /// MCEM variants on the mean and precision of a 1-d Gaussian.
    #[command(name = "normal-1d")]
    Normal1d(RunsArgs),
    /// Ding et al. 2014 App. E (Table 1): SGHMC vs SGNHT on a Normal–Gamma posterior, scored
    /// by joint and marginal density RMSEs and two τ estimators over simulated data sets.
    NormalGamma {
        #[command(flatten)]
        common: CommonArgs,
        /// Integrator (the paper's Alg. 1 is Euler).
        #[arg(long, value_enum, default_value = "euler")]
        integrator: IntegratorArg,
        /// Simulated data sets (1 to 1024) [default: 24, or 3 with --quick].
        #[arg(long, value_parser = chain_count)]
        data_sets: Option<usize>,
    },
}

#[derive(Args, Clone)]
struct CommonArgs {
    /// Base seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Independent chains per configuration (run in parallel; 1 to 1024).
    #[arg(long, default_value_t = 1, value_parser = chain_count)]
    chains: usize,
    /// Output directory for CSV files and PNG figures.
    #[arg(long, default_value = "harness/out")]
    out: PathBuf,
    /// CI-sized run (seconds) instead of the paper-sized one.
    #[arg(long)]
    quick: bool,
    #[command(flatten)]
    draws: DrawsArgs,
}

/// `--draws DIR` and `--draws-every N`: write every chain's draws (harness::export).
#[derive(Args, Clone)]
struct DrawsArgs {
    /// Write every chain's draws and per-step statistics to DIR as CmdStan-style CSV files
    /// (one per chain), which ArviZ's from_cmdstan reads (tools/arviz/).
    #[arg(long, value_name = "DIR")]
    draws: Option<PathBuf>,
    /// With --draws: write every N-th step only.
    #[arg(long, value_name = "N", default_value_t = 1, requires = "draws",
          value_parser = clap::value_parser!(u64).range(1..))]
    draws_every: u64,
}

impl DrawsArgs {
    fn apply(&self, mut o: RunOptions) -> RunOptions {
        o.draws = self.draws.as_ref().map(|dir| DrawsOptions {
            dir: dir.clone(),
            every: self.draws_every,
        });
        o
    }
}

/// The most chains (or runs) one configuration may ask for: every chain keeps its draws in
/// memory, so an unbounded count (`--chains 100000`) grew memory until killed.
const MAX_CHAINS: usize = 1024;

/// `--chains` / `--runs`: an integer from 1 to [`MAX_CHAINS`] (clap names the flag).
fn chain_count(s: &str) -> Result<usize, String> {
    let n: usize = s
        .parse()
        .map_err(|_| format!("`{s}` is not a whole number"))?;
    if (1..=MAX_CHAINS).contains(&n) {
        Ok(n)
    } else {
        Err(format!("must be from 1 to {MAX_CHAINS}, got {n}"))
    }
}

impl CommonArgs {
    fn options(&self) -> RunOptions {
        self.draws.apply(RunOptions::new(
            self.seed,
            self.chains,
            &self.out,
            self.quick,
        ))
    }
}

/// The options of the experiments that run a few independent runs per method.
#[derive(Args)]
struct RunsArgs {
    /// Base seed (of the chains; the data sets are fixed).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Independent runs per method (and data set; 1 to 1024) [default: 5, or 2 with --quick].
    #[arg(long, visible_alias = "chains", value_parser = chain_count)]
    runs: Option<usize>,
    /// Output directory for CSV files and PNG figures.
    #[arg(long, default_value = "harness/out")]
    out: PathBuf,
    /// CI-sized run (seconds) instead of the paper-sized one.
    #[arg(long)]
    quick: bool,
    #[command(flatten)]
    draws: DrawsArgs,
}

impl RunsArgs {
    fn options(&self) -> RunOptions {
        let runs = self.runs.unwrap_or(if self.quick { 2 } else { 5 });
        self.draws
            .apply(RunOptions::new(self.seed, runs, &self.out, self.quick))
    }
}

/// The options of an experiment that runs one chain per setting.
#[derive(Args)]
struct SeedArgs {
    /// Base seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Output directory for CSV files and PNG figures.
    #[arg(long, default_value = "harness/out")]
    out: PathBuf,
    /// CI-sized run (seconds) instead of the paper-sized one.
    #[arg(long)]
    quick: bool,
    #[command(flatten)]
    draws: DrawsArgs,
}

impl SeedArgs {
    fn options(&self) -> RunOptions {
        self.draws
            .apply(RunOptions::new(self.seed, 1, &self.out, self.quick))
    }
}

#[derive(Args)]
struct BnnArgs {
    #[command(flatten)]
    common: SeedArgs,
    /// Instead of the table: mSGNHT-E against mSGNHT-S on networks of depth 2–4 (Li et al. 2016,
    /// Fig. 4) over a range of step sizes.
    #[arg(long, conflicts_with_all = ["schedules", "timing"])]
    depth: bool,
    /// Instead of the table: constant, polynomial and cyclical step sizes (Zhang et al. 2020)
    /// for SGLD, SGHMC and SGNHT.
    #[arg(long, conflicts_with = "timing")]
    schedules: bool,
    /// Instead of the table: each sampler's cost per iteration, gradient and sampler apart, on
    /// one thread (beside blackjax's if tools/peer_bench/bnn.sh has run).
    #[arg(long)]
    timing: bool,
}

#[derive(Args)]
struct CalibrationArgs {
    /// Base seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Output directory for CSV files and PNG figures.
    #[arg(long, default_value = "harness/out")]
    out: PathBuf,
    /// CI-sized run (seconds) instead of the full one.
    #[arg(long)]
    quick: bool,
    /// The data sets (comma-separated; all four by default).
    #[arg(long, value_enum, value_delimiter = ',')]
    data: Vec<DataArg>,
    /// Only redraw the figures from the calibration.csv in --out (no sampling).
    #[arg(long)]
    replot: bool,
}

/// A data set of `calibration`.
#[derive(Clone, Copy, ValueEnum)]
enum DataArg {
    Pima,
    BreastCancer,
    Ripley,
    Caravan,
}

impl CalibrationArgs {
    fn options(&self) -> RunOptions {
        RunOptions::new(self.seed, 1, &self.out, self.quick)
    }
    fn data(&self) -> Vec<harness::models::logistic_regression::DataSet> {
        use harness::models::logistic_regression::DataSet;
        if self.data.is_empty() {
            return calibration::DATA.to_vec();
        }
        self.data
            .iter()
            .map(|d| match d {
                DataArg::Pima => DataSet::Pima,
                DataArg::BreastCancer => DataSet::BreastCancer,
                DataArg::Ripley => DataSet::Ripley,
                DataArg::Caravan => DataSet::Caravan,
            })
            .collect()
    }
}

#[derive(Args)]
struct CvArgs {
    /// Base seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Output directory for CSV files and PNG figures.
    #[arg(long, default_value = "harness/out")]
    out: PathBuf,
    /// CI-sized run (seconds) instead of the full one.
    #[arg(long)]
    quick: bool,
    /// The data sets (comma-separated; all three by default, Pima alone with --quick).
    #[arg(long, value_enum, value_delimiter = ',')]
    data: Vec<CvDataArg>,
}

/// A data set of `cv`.
#[derive(Clone, Copy, ValueEnum)]
enum CvDataArg {
    Pima,
    BreastCancer,
    Synthetic,
}

impl CvArgs {
    fn options(&self) -> RunOptions {
        RunOptions::new(self.seed, 1, &self.out, self.quick)
    }
    fn data(&self) -> Vec<cv::Data> {
        if self.data.is_empty() {
            return if self.quick {
                vec![cv::Data::Pima]
            } else {
                cv::Data::ALL.to_vec()
            };
        }
        self.data
            .iter()
            .map(|d| match d {
                CvDataArg::Pima => cv::Data::Pima,
                CvDataArg::BreastCancer => cv::Data::BreastCancer,
                CvDataArg::Synthetic => cv::Data::Synthetic,
            })
            .collect()
    }
}

#[derive(Args)]
struct LdaArgs {
    #[command(flatten)]
    common: SeedArgs,
    /// Instead of the synthetic corpora: the King James Bible (Debian's bible-kjv, public
    /// domain), one document per chapter, without known topics.
    #[arg(long)]
    kjv: bool,
}

#[derive(Args)]
struct BlrArgs {
    #[command(flatten)]
    runs: RunsArgs,
    /// Run the step-size search on a validation split of the training data instead.
    #[arg(long)]
    tune: bool,
    /// Instead of sampling: the held-out AUROC of the posterior mode on this many random
    /// re-splits of each data set (how much the split alone moves the AUROC).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    splits: Option<u64>,
    /// Instead of Table 1: median ESS against the minibatch size (16, 64, 256, all rows) for
    /// SGNHT and SGMGT-D, each minibatch with its own validation search.
    #[arg(long)]
    batch_sweep: bool,
    /// Instead of Table 1: its median ESS under other readings of the protocol (a draw stored
    /// per update, per epoch, per 100 updates; 4000 or 5000 kept; full batch) with four ESS
    /// estimators (Geyer, coda's AR spectrum, the first-dip rule, Sokal's window).
    #[arg(long)]
    ess_readings: bool,
    /// Instead of Table 1: the ESS estimators against the true ESS (variance of the means of
    /// 200 independent runs) on full-gradient SGNHT and SGHMC chains of the Pima posterior.
    #[arg(long)]
    ess_audit: bool,
    /// Instead of Table 1: Pima's step sizes (and SGNHT's friction) chosen by the kernel Stein
    /// discrepancy of short runs (Coullon, South & Nemeth 2023), against the validation
    /// search's choice and the range it accepts (reads harness/results/blr/blr-tune.csv).
    #[arg(long)]
    ksd_tune: bool,
}

impl BlrArgs {
    fn mode(&self) -> blr::Mode {
        if self.ess_audit {
            return blr::Mode::EssAudit;
        }
        if self.ksd_tune {
            return blr::Mode::KsdTune;
        }
        if self.ess_readings {
            return blr::Mode::EssReadings;
        }
        match (self.splits, self.batch_sweep, self.tune) {
            (Some(n), _, _) => blr::Mode::Splits(n as usize),
            (None, true, _) => blr::Mode::BatchSweep,
            (None, false, true) => blr::Mode::Tune,
            (None, false, false) => blr::Mode::Table,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum SamplerArg {
    Sgld,
    Sghmc,
    Sgnht,
    Msgnht,
}

#[derive(Clone, Copy, ValueEnum)]
enum IntegratorArg {
    Euler,
    Splitting,
}

impl From<IntegratorArg> for Integrator {
    fn from(a: IntegratorArg) -> Self {
        match a {
            IntegratorArg::Euler => Integrator::Euler,
            IntegratorArg::Splitting => Integrator::Splitting,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum GradientNoiseArg {
    PerStep,
    PerEvaluation,
}

impl From<GradientNoiseArg> for GradientNoise {
    fn from(a: GradientNoiseArg) -> Self {
        match a {
            GradientNoiseArg::PerStep => GradientNoise::PerStep,
            GradientNoiseArg::PerEvaluation => GradientNoise::PerEvaluation,
        }
    }
}

#[derive(Args)]
struct DemoArgs {
    /// Sampler.
    #[arg(long, value_enum, default_value = "msgnht")]
    sampler: SamplerArg,
    /// Integrator (SGHMC, SGNHT, mSGNHT).
    #[arg(long, value_enum, default_value = "splitting")]
    integrator: IntegratorArg,
    /// Step size h (> 0).
    #[arg(long, default_value_t = DemoConfig::default().h)]
    h: f64,
    /// Kept steps.
    #[arg(long, default_value_t = DemoConfig::default().steps)]
    steps: usize,
    /// Seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// The demo's settings from its flags, or the message naming the bad flag.
fn demo_config(args: &DemoArgs) -> Result<DemoConfig, String> {
    if !(args.h.is_finite() && args.h > 0.0) {
        return Err(format!("--h must be a finite number > 0, got {}", args.h));
    }
    if args.steps == 0 {
        return Err("--steps must be at least 1".into());
    }
    Ok(DemoConfig {
        sampler: match args.sampler {
            SamplerArg::Sgld => SamplerKind::Sgld,
            SamplerArg::Sghmc => SamplerKind::Sghmc,
            SamplerArg::Sgnht => SamplerKind::Sgnht,
            SamplerArg::Msgnht => SamplerKind::MSgnht,
        },
        integrator: args.integrator.into(),
        h: args.h,
        steps: args.steps,
        seed: args.seed,
        ..DemoConfig::default()
    })
}

fn run_demo(args: DemoArgs) -> ExitCode {
    let config = match demo_config(&args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    match demo::run(config) {
        Ok(report) => {
            println!("{report}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}. Try a smaller --h.");
            ExitCode::FAILURE
        }
    }
}

/// When `main` started: the files in the output folder modified since are this run's.
static STARTED: std::sync::OnceLock<std::time::SystemTime> = std::sync::OnceLock::new();

/// "Wrote 4 CSV files and 2 figures to DIR": what this run left in `out` (files modified since
/// [`STARTED`]), so a run that draws no figure does not claim one.
fn written_note(out: &std::path::Path) -> String {
    let started = STARTED.get().copied().unwrap_or(std::time::UNIX_EPOCH);
    let (mut csv, mut figures) = (0usize, 0usize);
    for entry in std::fs::read_dir(out).into_iter().flatten().flatten() {
        let fresh = entry
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|t| t >= started);
        if !fresh {
            continue;
        }
        match entry.path().extension().and_then(|e| e.to_str()) {
            Some("csv") => csv += 1,
            Some("png" | "svg") => figures += 1,
            _ => {}
        }
    }
    let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    match (csv, figures) {
        (0, 0) => format!("Wrote no CSV file or figure to {}", out.display()),
        (c, 0) => format!(
            "Wrote {} (no figure) to {}",
            plural(c, "CSV file"),
            out.display()
        ),
        (c, f) => format!(
            "Wrote {} and {} to {}",
            plural(c, "CSV file"),
            plural(f, "figure"),
            out.display()
        ),
    }
}

fn finish(result: Result<String, ExperimentError>, out: &std::path::Path) -> ExitCode {
    // A chain that could not write its draws (--draws) fails the run after its report.
    let result = result.and_then(|text| match export::take_error() {
        None => Ok(text),
        Some(e) => {
            println!("{text}");
            Err(ExperimentError::Io(format!("writing the draws: {e}")))
        }
    });
    match result {
        Ok(text) => {
            println!("{text}");
            println!("{}", written_note(out));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `harness summarize`: reads the chains, prints our summary of every parameter as CSV.
fn summarize(files: &[PathBuf], skip: usize) -> ExitCode {
    match export::summarize_files(files, skip) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A CSV of numbers (a first line that does not parse is a header): its values row-major and
/// the row length.
fn read_rows(path: &std::path::Path) -> Result<(Vec<f64>, usize), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let (mut values, mut width) = (Vec::new(), None);
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let row: Result<Vec<f64>, _> = line.split(',').map(|v| v.trim().parse::<f64>()).collect();
        match row {
            Ok(row) => {
                if *width.get_or_insert(row.len()) != row.len() {
                    return Err(format!(
                        "{}:{}: a row of another length",
                        path.display(),
                        i + 1
                    ));
                }
                values.extend(row);
            }
            Err(_) if i == 0 => {}
            Err(e) => return Err(format!("{}:{}: {e}", path.display(), i + 1)),
        }
    }
    let width = width.ok_or_else(|| format!("{}: no rows", path.display()))?;
    Ok((values, width))
}

fn ksd(
    points: &std::path::Path,
    scores: &std::path::Path,
    kernel: harness::diagnostics::Imq,
) -> ExitCode {
    let result = read_rows(points).and_then(|(x, d)| {
        let (b, db) = read_rows(scores)?;
        if db != d {
            return Err(format!("{d} columns of points, {db} of scores"));
        }
        harness::diagnostics::imq_ksd(&x, &b, d, kernel).map_err(|e| e.to_string())
    });
    match result {
        Ok(v) => {
            println!("{v:.17e}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn firmware_diagnostics(log: &std::path::Path) -> ExitCode {
    let checked = std::fs::read_to_string(log)
        .map_err(|e| format!("{}: {e}", log.display()))
        .and_then(|text| harness::diagnostics::check_device_log(&text));
    match checked {
        Ok((report, ok)) => {
            print!("{report}");
            if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    // (Truncated to whole seconds: some file systems keep coarse modification times.)
    let now = std::time::SystemTime::now();
    let whole = now
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| std::time::UNIX_EPOCH + std::time::Duration::from_secs(d.as_secs()))
        .unwrap_or(now);
    let _ = STARTED.set(whole);
    let cli = Cli::parse();
    let (result, o) = match cli.command {
        None => {
            return run_demo(DemoArgs {
                sampler: SamplerArg::Msgnht,
                integrator: IntegratorArg::Splitting,
                h: DemoConfig::default().h,
                steps: DemoConfig::default().steps,
                seed: 1,
            });
        }
        Some(Command::Demo(a)) => return run_demo(a),
        Some(Command::Summarize { files, skip }) => return summarize(&files, skip),
        Some(Command::FirmwareDiagnostics { log }) => return firmware_diagnostics(&log),
        Some(Command::Ksd {
            points,
            scores,
            c,
            beta,
        }) => return ksd(&points, &scores, harness::diagnostics::Imq { c, beta }),
        Some(Command::Blr(a)) => {
            let o = a.runs.options();
            (blr::cli(&o, a.mode()), o)
        }
        Some(Command::Blr2d(a)) => {
            let o = a.options();
            (blr_2d::cli(&o), o)
        }
        Some(Command::Bnn(a)) => {
            let o = a.common.options();
            if a.depth {
                (bnn::depth_cli(&o), o)
            } else if a.schedules {
                (bnn::schedules_cli(&o), o)
            } else if a.timing {
                (bnn::timing_cli(&o), o)
            } else {
                (bnn::cli(&o), o)
            }
        }
        Some(Command::Calibration(a)) => {
            let o = a.options();
            if a.replot {
                let r = calibration::figures(&o.out).map(|()| String::new());
                (r, o)
            } else {
                (calibration::cli(&o, &a.data()), o)
            }
        }
        Some(Command::Cv(a)) => {
            let o = a.options();
            (cv::cli(&o, &a.data()), o)
        }
        Some(Command::Lda(a)) => {
            let o = a.common.options();
            if a.kjv {
                (lda::kjv_cli(&o), o)
            } else {
                (lda::cli(&o), o)
            }
        }
        Some(Command::DoubleWell { common, integrator }) => {
            let o = common.options();
            (double_well::cli(&o, integrator.into()), o)
        }
        Some(Command::DoubleWellKl { common }) => {
            let o = common.options();
            (double_well_kl::cli(&o), o)
        }
        Some(Command::GaussianMean { common, integrator }) => {
            let o = common.options();
            (gaussian_mean::cli(&o, integrator.into()), o)
        }
        Some(Command::MultiWell {
            common,
            gradient_noise,
        }) => {
            let o = common.options();
            (multi_well::cli(&o, gradient_noise.into()), o)
        }
        Some(Command::Normal1d(a)) => {
            let o = a.options();
            (normal_1d::cli(&o), o)
        }
        Some(Command::NormalGamma {
            common,
            integrator,
            data_sets,
        }) => {
            let o = common.options();
            (normal_gamma::cli(&o, integrator.into(), data_sets), o)
        }
    };
    finish(result, &o.out)
}

/// The command line under random argument vectors: parsing and the checks that run before any
/// work never panic, and whatever they accept is within the documented bounds.
#[cfg(test)]
mod tests {
    use super::*;

    /// Words an argument vector is made of: every subcommand and flag, and values that are
    /// typical, out of range, huge, negative, non-numeric or empty.
    const WORDS: [&str; 61] = [
        "--kjv",
        "--replot",
        "calibration",
        "cv",
        "breast-cancer,synthetic",
        "--data",
        "pima,caravan",
        "blr",
        "bnn",
        "lda",
        "summarize",
        "--draws",
        "--draws-every",
        "blr-2d",
        "demo",
        "double-well",
        "double-well-kl",
        "gaussian-mean",
        "multi-well",
        "normal-1d",
        "normal-gamma",
        "--chains",
        "--runs",
        "--seed",
        "--splits",
        "--quick",
        "--tune",
        "--batch-sweep",
        "--ksd-tune",
        "--depth",
        "--schedules",
        "--timing",
        "--h",
        "--steps",
        "--sampler",
        "--integrator",
        "--out",
        "--gradient-noise",
        "--data-sets",
        "0",
        "1",
        "2",
        "1024",
        "1025",
        "100000",
        "-1",
        "0.05",
        "1e308",
        "nan",
        "inf",
        "-inf",
        "18446744073709551615",
        "18446744073709551616",
        "sgld",
        "msgnht",
        "euler",
        "splitting",
        "per-step",
        "x",
        "",
        "--",
    ];

    /// Checks one argument vector; returns whether clap accepted it.
    fn check(args: &[&str]) -> bool {
        let Ok(cli) = Cli::try_parse_from(std::iter::once("harness").chain(args.iter().copied()))
        else {
            return false;
        };
        let bounded = |o: &RunOptions| {
            (1..=MAX_CHAINS).contains(&o.chains) && o.draws.as_ref().is_none_or(|d| d.every >= 1)
        };
        match cli.command {
            None => {}
            Some(Command::Demo(a)) => {
                if let Ok(c) = demo_config(&a) {
                    assert!(c.h.is_finite() && c.h > 0.0 && c.steps > 0, "{args:?}");
                }
            }
            Some(Command::Blr(a)) => {
                assert!(bounded(&a.runs.options()), "{args:?}");
                if let blr::Mode::Splits(n) = a.mode() {
                    assert!(n >= 1, "{args:?}");
                }
            }
            Some(Command::Bnn(a)) => assert!(bounded(&a.common.options()), "{args:?}"),
            Some(Command::Lda(a)) => assert!(bounded(&a.common.options()), "{args:?}"),
            Some(Command::Calibration(a)) => {
                assert!(bounded(&a.options()), "{args:?}");
                assert!(!a.data().is_empty(), "{args:?}");
            }
            Some(Command::Cv(a)) => {
                assert!(bounded(&a.options()), "{args:?}");
                assert!(!a.data().is_empty(), "{args:?}");
            }
            Some(Command::Summarize { files, .. }) => assert!(!files.is_empty(), "{args:?}"),
            Some(Command::FirmwareDiagnostics { log }) => {
                assert!(!log.as_os_str().is_empty(), "{args:?}")
            }
            Some(Command::Ksd { c, beta, .. }) => assert!(c > 0.0 && beta < 0.0, "{args:?}"),
            Some(Command::Blr2d(a)) | Some(Command::Normal1d(a)) => {
                assert!(bounded(&a.options()), "{args:?}")
            }
            Some(Command::DoubleWell { common, .. })
            | Some(Command::DoubleWellKl { common })
            | Some(Command::GaussianMean { common, .. })
            | Some(Command::MultiWell { common, .. })
            | Some(Command::NormalGamma { common, .. }) => {
                assert!(bounded(&common.options()), "{args:?}")
            }
        }
        true
    }

    /// `CLI_CASES` random vectors of 1–6 words (default 200 000; the table used 10⁶).
    #[test]
    fn random_command_lines_never_panic_and_stay_in_bounds() {
        let cases: u64 = std::env::var("CLI_CASES")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(200_000);
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut accepted = 0u64;
        for _ in 0..cases {
            let len = 1 + (next() % 6) as usize;
            let args: Vec<&str> = (0..len)
                .map(|_| WORDS[(next() % WORDS.len() as u64) as usize])
                .collect();
            accepted += u64::from(check(&args));
        }
        // The vocabulary makes valid command lines common enough to exercise the checks.
        assert!(accepted > cases / 50, "{accepted} of {cases} accepted");
        println!("{cases} command lines, {accepted} accepted");
    }
}
