//! Command-line entry point of the harness: `host-tests demo` samples a benchmark model.

use clap::{Parser, Subcommand, ValueEnum};
use harness::demo::{self, DemoConfig, SamplerKind};
use sgmcmc::Integrator;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    version,
    about = "Benchmark models and accuracy checks for the sgmcmc kernel"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Sample a Bayesian linear regression with minibatch gradients; print the posterior beside
    /// the exact one.
    Demo(DemoArgs),
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

#[derive(clap::Args)]
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    let args = match cli.command {
        Some(Command::Demo(a)) => a,
        None => DemoArgs {
            sampler: SamplerArg::Msgnht,
            integrator: IntegratorArg::Splitting,
            h: DemoConfig::default().h,
            steps: DemoConfig::default().steps,
            seed: 1,
        },
    };
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
        integrator: match args.integrator {
            IntegratorArg::Euler => Integrator::Euler,
            IntegratorArg::Splitting => Integrator::Splitting,
        },
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
