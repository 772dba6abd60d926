//! Command-line entry point of the harness: one subcommand per experiment, plus the demo.

use clap::{Args, Parser, Subcommand, ValueEnum};
use harness::demo::{self, DemoConfig, SamplerKind};
use harness::experiments::{self, ExperimentError, RunOptions};
use harness::models::multi_well::GradientNoise;
use sgmcmc::Integrator;
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
    /// and breast cancer; held-out AUROC and median ESS of SGNHT, SGMGT and SGMGT-D.
    Blr(BlrArgs),
    /// Roychowdhury & Parthasarathy 2017 §4.2 (Tables 2–3): the eight samplers on a synthetic 2-d
    /// Bayesian logistic regression; per-iteration times on it, Pima and Ripley.
    #[command(name = "blr-2d")]
    Blr2d(McemArgs),
    /// Sample a Bayesian linear regression with minibatch gradients; print the posterior beside
    /// the exact one.
    Demo(DemoArgs),
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
    /// Zhang et al. 2017 §4.1 (Fig. 3): SGNHT vs SGMGT vs SGMGT-D (a = 2) on a five-mode 2-d potential.
    MultiWell {
        #[command(flatten)]
        common: CommonArgs,
        /// Gradient noise: per-step ∇U + N(0, 2B/h) as in Ding et al. 2014 §3, or
        /// per-evaluation ∇U + N(0, 2B) as 001 §4.1 prints it.
        #[arg(long, value_enum, default_value = "per-step")]
        gradient_noise: GradientNoiseArg,
    },
    /// Roychowdhury & Parthasarathy 2017 §4.1 (Table 1): HMC, SGHMC, SGNHT, SG-NPHMC and their
    /// MCEM variants on the mean and precision of a 1-d Gaussian.
    #[command(name = "normal-1d")]
    Normal1d(McemArgs),
    /// Ding et al. 2014 App. E (Table 1): SGHMC vs SGNHT on a Normal–Gamma posterior.
    NormalGamma {
        #[command(flatten)]
        common: CommonArgs,
        /// Integrator (the paper's Alg. 1 is Euler).
        #[arg(long, value_enum, default_value = "euler")]
        integrator: IntegratorArg,
    },
}

#[derive(Args, Clone)]
struct CommonArgs {
    /// Base seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Independent chains per configuration (run in parallel).
    #[arg(long, default_value_t = 1)]
    chains: usize,
    /// Output directory for CSV files and PNG figures.
    #[arg(long, default_value = "host-tests/out")]
    out: PathBuf,
    /// CI-sized run (seconds) instead of the paper-sized one.
    #[arg(long)]
    quick: bool,
}

impl CommonArgs {
    fn options(&self) -> RunOptions {
        RunOptions {
            seed: self.seed,
            chains: self.chains,
            out: self.out.clone(),
            quick: self.quick,
            progress: true,
        }
    }
}

#[derive(Args)]
struct BlrArgs {
    /// Base seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Independent runs per data set and method [default: 5, or 2 with --quick].
    #[arg(long, visible_alias = "chains")]
    runs: Option<usize>,
    /// Output directory for CSV files and PNG figures.
    #[arg(long, default_value = "host-tests/out")]
    out: PathBuf,
    /// Pima only, 2000 iterations, 2 runs (seconds) instead of the paper-sized run.
    #[arg(long)]
    quick: bool,
    /// Run the step-size search on a validation split of the training data instead.
    #[arg(long)]
    tune: bool,
    /// Instead of sampling: the held-out AUROC of the posterior mode on this many random
    /// re-splits of each data set (how much the split alone moves the AUROC).
    #[arg(long)]
    splits: Option<usize>,
    /// Instead of Table 1: median ESS against the minibatch size (16, 64, 256, all rows) for
    /// SGNHT and SGMGT-D, each minibatch with its own validation search.
    #[arg(long)]
    batch_sweep: bool,
}

#[derive(Args)]
struct McemArgs {
    /// Base seed (of the chains; the data sets are fixed).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Independent runs per method [default: 5, or 2 with --quick].
    #[arg(long, visible_alias = "chains")]
    runs: Option<usize>,
    /// Output directory for CSV files and PNG figures.
    #[arg(long, default_value = "host-tests/out")]
    out: PathBuf,
    /// CI-sized run (seconds) instead of the paper-sized one.
    #[arg(long)]
    quick: bool,
}

impl McemArgs {
    fn options(&self) -> RunOptions {
        RunOptions {
            seed: self.seed,
            chains: self.runs.unwrap_or(if self.quick { 2 } else { 5 }),
            out: self.out.clone(),
            quick: self.quick,
            progress: true,
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

fn run_demo(args: DemoArgs) -> ExitCode {
    if !(args.h.is_finite() && args.h > 0.0) {
        eprintln!("error: --h must be a finite number > 0, got {}", args.h);
        return ExitCode::from(2);
    }
    if args.steps == 0 {
        eprintln!("error: --steps must be at least 1");
        return ExitCode::from(2);
    }
    let config = DemoConfig {
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

fn finish(result: Result<String, ExperimentError>, out: &std::path::Path) -> ExitCode {
    match result {
        Ok(text) => {
            println!("{text}");
            println!("CSV files and figures are in {}", out.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        None => run_demo(DemoArgs {
            sampler: SamplerArg::Msgnht,
            integrator: IntegratorArg::Splitting,
            h: DemoConfig::default().h,
            steps: DemoConfig::default().steps,
            seed: 1,
        }),
        Some(Command::Demo(a)) => run_demo(a),
        Some(Command::Blr(a)) => {
            let o = RunOptions {
                seed: a.seed,
                chains: a
                    .runs
                    .unwrap_or(if a.quick { 2 } else { experiments::blr::RUNS }),
                out: a.out,
                quick: a.quick,
                progress: true,
            };
            let r = if let Some(n) = a.splits {
                experiments::blr::run_split_spread(&o, n).map(|t| {
                    format!("BLR: held-out AUROC of the posterior mode on our split and on {n} random re-splits with the same held-out fraction (seeds {}…)\n{t}", o.seed + 1)
                })
            } else if a.batch_sweep {
                experiments::blr::batch_sweep(&o).map(|rows| {
                    let (iterations, burn_in) = if o.quick {
                        (experiments::blr::QUICK_ITERATIONS, experiments::blr::QUICK_BURN_IN)
                    } else {
                        (experiments::blr::ITERATIONS, experiments::blr::BURN_IN)
                    };
                    format!(
                        "BLR: median ESS against the minibatch size n, {iterations} iterations, {burn_in} burn-in, {} run(s) per row; settings from a validation search at each n ({} run(s) per setting)\n{}",
                        o.chains,
                        o.chains.min(experiments::blr::SWEEP_SEARCH_RUNS),
                        experiments::blr::sweep_table(&rows, iterations - burn_in)
                    )
                })
            } else if a.tune {
                experiments::blr::tune(&o).map(|t| {
                    format!("BLR step-size search on a validation split of the training data, {} run(s) per setting\n{t}", o.chains)
                })
            } else {
                experiments::blr::run(&o).map(|r| {
                    format!(
                        "Bayesian logistic regression (Zhang et al. 2017 §4.2, Table 1): minibatch {}, {} iterations, {} burn-in, {} run(s); AUROC on the held-out split (mean ± sd over runs), median ESS over the weights (mean ± sd over runs), temp. = mean kinetic temperature after burn-in\n{}",
                        experiments::blr::BATCH,
                        r.iterations,
                        r.burn_in,
                        r.runs,
                        experiments::blr::table(&r)
                    )
                })
            };
            finish(r, &o.out)
        }
        Some(Command::Blr2d(a)) => {
            let o = a.options();
            let r = experiments::blr_2d::run(&o).map(|r| {
                format!(
                    "{}\nTable 2 (RMSE about the reference posterior mean; mean ± sd over runs):\n{}\nTable 3 (ms per iteration, fastest of 3 single-threaded timing chains):\n{}\nTuning candidates (mean score of 2 chains each):\n{}",
                    experiments::blr_2d::header(&r),
                    experiments::blr_2d::table(&r),
                    experiments::blr_2d::times_table(&r),
                    experiments::mcem::tuning_table(&r.tuning)
                )
            });
            finish(r, &o.out)
        }
        Some(Command::DoubleWell { common, integrator }) => {
            let o = common.options();
            let r = experiments::double_well::run(&o, integrator.into()).map(|r| {
                format!(
                    "Double well (Ding et al. 2014 §3, Fig. 1), h = {}, B = {}, {} samples per chain, {} chain(s)\n{}",
                    experiments::double_well::H,
                    experiments::double_well::B,
                    r.runs[0].steps,
                    o.chains,
                    experiments::double_well::table(&r)
                )
            });
            finish(r, &o.out)
        }
        Some(Command::DoubleWellKl { common }) => {
            let o = common.options();
            let r = experiments::double_well_kl::run(&o).map(|rows| {
                format!(
                    "Double well, KL vs step size (Li et al. 2016 Fig. 1; the paper plots mSGNHT-S below mSGNHT-E at every h)\n{}",
                    experiments::double_well_kl::table(&rows)
                )
            });
            finish(r, &o.out)
        }
        Some(Command::GaussianMean { common, integrator }) => {
            let o = common.options();
            let r = experiments::gaussian_mean::run(&o, integrator.into()).map(|r| {
                format!(
                    "Gaussian mean (Ding et al. 2014 §5.1): N = {}, minibatch {}; the paper shows SGNHT accurate at every (h, A), SGHMC only at small h and large A\n{}",
                    experiments::gaussian_mean::N,
                    experiments::gaussian_mean::BATCH,
                    experiments::gaussian_mean::table(&r)
                )
            });
            finish(r, &o.out)
        }
        Some(Command::MultiWell {
            common,
            gradient_noise,
        }) => {
            let o = common.options();
            let r = experiments::multi_well::run_with_noise(&o, gradient_noise.into())
                .map(|r| experiments::multi_well::report(&r, &o));
            finish(r, &o.out)
        }
        Some(Command::Normal1d(a)) => {
            let o = a.options();
            let r = experiments::normal_1d::run(&o).map(|r| {
                format!(
                    "{}\n{}\nTuning candidates (mean score of 2 chains each):\n{}",
                    experiments::normal_1d::header(&r),
                    experiments::normal_1d::table(&r),
                    experiments::mcem::tuning_table(&r.tuning)
                )
            });
            finish(r, &o.out)
        }
        Some(Command::NormalGamma { common, integrator }) => {
            let o = common.options();
            let r = experiments::normal_gamma::run(&o, integrator.into()).map(|runs| {
                format!(
                    "Normal–Gamma (Ding et al. 2014 App. E, Table 1): N = {}, minibatch {}\n{}",
                    experiments::normal_gamma::N,
                    experiments::normal_gamma::BATCH,
                    experiments::normal_gamma::table(&runs)
                )
            });
            finish(r, &o.out)
        }
    }
}
