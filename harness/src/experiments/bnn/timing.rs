//! `bnn --timing`: what an iteration of each sampler costs on the 64-100-10 network, the gradient and the sampler's own work apart, beside blackjax on the same model (`tools/peer_bench/bnn.sh`).
//!
//! One thread, one sampler at a time: [`WARM_UP`] iterations, then [`TIMED`] iterations whose
//! gradient calls are timed one by one; the sampler's share is the rest of the wall time. The
//! harness is built as shipped (the portable build, no `target-cpu`): its per-coordinate
//! kernels then run at the portable figures of `docs/performance.md`.

use super::{Method, Setting, Timed, WIDTH, data, network, with_sampler};
use crate::experiments::common::{ExperimentError, RunOptions, Start, sig};
use crate::models::bnn::Bnn;
use rand_pcg::Pcg64;
use sgmcmc::prelude::*;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Iterations run before the timed ones.
pub const WARM_UP: usize = 200;
/// Timed iterations per sampler and minibatch size.
pub const TIMED: usize = 3000;
/// Minibatch sizes timed.
pub const TIMING_BATCHES: [usize; 2] = [20, 100];

/// One sampler's cost per iteration, in µs: the gradient, and the rest of the step.
#[derive(Clone, Debug)]
pub struct Cost {
    /// Sampler.
    pub method: Method,
    /// Minibatch size.
    pub batch: usize,
    /// µs per gradient evaluation.
    pub gradient: f64,
    /// µs per iteration outside the gradient.
    pub sampler: f64,
}

/// The settings timed (a mid-grid step; the cost does not depend on it).
fn setting(method: Method) -> Setting {
    match method {
        Method::Sgld => Setting { h: 1e-5, a: 0.0 },
        Method::Psgld => Setting { h: 3e-2, a: 0.0 },
        _ => Setting { h: 3e-3, a: 1.0 },
    }
}

/// One sampler's cost over `iterations` steps.
fn time_one(
    bnn: &Bnn<'_>,
    method: Method,
    batch: usize,
    iterations: usize,
) -> Result<Cost, ExperimentError> {
    let mut rng = Pcg64::new(7, 0x71);
    let mut theta = bnn.arch.initial(&mut rng);
    let mut model = Timed {
        inner: bnn.stochastic_gradient(batch, 11),
        seconds: 0.0,
    };
    let mut start = Start::new(&theta, 3, 0x71);
    // [`WARM_UP`] untimed steps, then `iterations` timed ones: (gradient s, total s).
    let clock = |sampler: &mut AnySampler<'_, f64>, rng: &mut Pcg64| -> Result<_, RunError> {
        sampler.run(&mut model, rng, WARM_UP as u64, &mut ())?;
        model.seconds = 0.0;
        let t = Instant::now();
        sampler.run(&mut model, rng, iterations as u64, &mut ())?;
        Ok((model.seconds, t.elapsed().as_secs_f64()))
    };
    let (gradient, total) = with_sampler(
        (method, setting(method)),
        (&mut theta, &mut start.p),
        &mut start.rng,
        clock,
    )
    .map_err(|e| ExperimentError::Invalid(format!("bnn --timing: {e}")))?
    .map_err(|e| ExperimentError::Step("bnn --timing".into(), e.error))?;
    let per = 1e6 / iterations as f64;
    Ok(Cost {
        method,
        batch,
        gradient: gradient * per,
        sampler: (total - gradient) * per,
    })
}

/// Every sampler at every minibatch of [`TIMING_BATCHES`] (quick: 300 timed iterations), one
/// after the other on this thread. Writes `bnn-timing.csv`.
pub fn timing(opts: &RunOptions) -> Result<Vec<Cost>, ExperimentError> {
    opts.prepare()?;
    let (train, _, _) = data()?;
    let bnn = network(&train, 1)?;
    let iterations = if opts.quick { 300 } else { TIMED };
    let mut costs = Vec::new();
    for &batch in &TIMING_BATCHES {
        for method in Method::ALL {
            costs.push(time_one(&bnn, method, batch, iterations)?);
        }
    }
    let mut w = csv::Writer::from_path(opts.out.join("bnn-timing.csv"))?;
    w.write_record(["sampler", "batch", "gradient_us", "sampler_us"])?;
    for c in &costs {
        w.write_record([
            c.method.label().to_string(),
            c.batch.to_string(),
            c.gradient.to_string(),
            c.sampler.to_string(),
        ])?;
    }
    w.flush()?;
    Ok(costs)
}

/// blackjax's figures from `tools/peer_bench/bnn.sh`, if its CSV is at `path`: (sampler,
/// batch) → (gradient µs, whole step µs).
fn peer_costs(path: &Path) -> Vec<(String, usize, f64, f64)> {
    let Ok(mut r) = csv::Reader::from_path(path) else {
        return Vec::new();
    };
    r.records()
        .filter_map(Result::ok)
        .filter_map(|rec| {
            Some((
                rec.get(0)?.to_string(),
                rec.get(1)?.parse().ok()?,
                rec.get(2)?.parse().ok()?,
                rec.get(3)?.parse().ok()?,
            ))
        })
        .collect()
}

/// Where blackjax's figures are read from: `$BNN_PEER_CSV` if set (`tools/peer_bench/bnn.sh`
/// sets it), else where that script's full run writes them.
pub fn peer_csv() -> PathBuf {
    std::env::var_os("BNN_PEER_CSV").map_or_else(
        || {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../tools/peer_bench/out/bnn_blackjax.csv")
        },
        PathBuf::from,
    )
}

/// The timing table, with blackjax's columns where `peer` has its figures.
pub fn timing_table(costs: &[Cost], peer: &Path) -> String {
    let peers = peer_costs(peer);
    let mut s = format!(
        "Cost per iteration on the 64-{WIDTH}-10 ReLU network (7510 parameters, f64), one \
         thread, µs; blackjax from {}\n\n",
        if peers.is_empty() {
            "— (run tools/peer_bench/bnn.sh)".to_string()
        } else {
            peer.display().to_string()
        }
    );
    s += "| sampler | batch | gradient | sampler | step | sampler / gradient | blackjax gradient | blackjax step | blackjax step / ours |\n";
    s += "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for c in costs {
        let key = c.method.label().to_lowercase();
        let peer = peers
            .iter()
            .find(|p| p.0 == key && p.1 == c.batch)
            .map(|p| (p.2, p.3));
        let step = c.gradient + c.sampler;
        let (pg, ps, ratio) = peer.map_or(("—".into(), "—".into(), "—".into()), |(g, st)| {
            (sig(g, 3), sig(st, 3), format!("{:.1}", st / step))
        });
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {:.2} | {pg} | {ps} | {ratio} |",
            c.method.label(),
            c.batch,
            sig(c.gradient, 3),
            sig(c.sampler, 3),
            sig(step, 3),
            c.sampler / c.gradient
        );
    }
    s
}

/// `harness bnn --timing`.
pub fn timing_cli(opts: &RunOptions) -> Result<String, ExperimentError> {
    let costs = timing(opts)?;
    Ok(timing_table(&costs, &peer_csv()))
}
