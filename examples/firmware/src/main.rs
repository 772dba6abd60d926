//! Firmware check of every sampler family on a Cortex-M core: a 3-d Gaussian posterior with known moments, mean and variance within their Monte Carlo error, reported over semihosting.
//!
//! Each case runs one sampler (SGLD, SGHMC, SGNHT, mSGNHT, SGMGT-D, HMC) in `f32` and, with the
//! `f64` feature, in `f64`, from θ = 0 for a burn-in, then `BATCHES` batches of `PER_BATCH`
//! steps (HMC: `HMC_PER_BATCH` proposals of ten leapfrog steps); each batch averages θᵢ and
//! (θᵢ − μᵢ)² in the sampler's own float type (at most 5000 terms:
//! the rounding, below 10⁻⁴ relative in `f32`, is far under the Monte Carlo error). The
//! posterior mean and variance of each coordinate are the averages of the batch averages, and
//! their standard errors the batch means' spread / √B. A check passes when
//! |estimate − truth| ≤ Z · SE with Z = 5: with B = 20 batches the studentised error has 19
//! degrees of freedom, P(|t₁₉| > 5) = 7.9·10⁻⁵, so over the 72 checks of a run (6 samplers ×
//! 2 types × 3 coordinates × 2 moments) a correct build fails with probability < 6·10⁻³; the
//! seeds are fixed, so a run is deterministic either way.
//!
//! The truth is the posterior N(μ, diag σ²), except for SGLD, whose Euler–Maruyama chain on a
//! Gaussian has the exact stationary variance σ²/(1 − h/(2σ²)) (v = (1 − h/σ²)²v + 2h), used as
//! its target; the splitting schemes' O(h²) variance error at these steps (< 0.5 %) and HMC's
//! Metropolis-corrected chain need no correction.
//!
//! Output: one line per case and coordinate (`PASS`/`FAIL`, the estimates and their
//! tolerances), the stack one step of each sampler used (`stack.rs`: painted, one step,
//! scanned), then `sgmcmc-firmware: ok` and exit status 0, or
//! `sgmcmc-firmware: FAILED` and status 1 (semihosting `SYS_EXIT`; QEMU passes it on).

#![no_std]
#![no_main]

mod out;
mod stack;

use cortex_m_rt::entry;
use cortex_m_semihosting::debug;
use out::Line;
use rand_pcg::Pcg32;
use sgmcmc::prelude::*;

/// The two float types, with a name and a way to print through `f32` (so an `f32`-only build
/// formats no `f64`).
trait Float: Real {
    const NAME: &'static str;
    fn show(self) -> f32;
}
impl Float for f32 {
    const NAME: &'static str = "f32";
    fn show(self) -> f32 {
        self
    }
}
#[cfg(feature = "f64")]
impl Float for f64 {
    const NAME: &'static str = "f64";
    fn show(self) -> f32 {
        self as f32
    }
}

/// The posterior: N(μ, diag σ²) in three coordinates (exact in `f32`).
const MEAN: [f32; DIM] = [1.0, -0.5, 0.25];
const VAR: [f32; DIM] = [1.0, 0.5, 2.0];
const DIM: usize = 3;

/// Steps before the first batch, batches, steps per batch (HMC: proposals per batch; each is ten
/// leapfrog steps and its draws are nearly independent).
const BURN: usize = 2_000;
const BATCHES: usize = 20;
const PER_BATCH: usize = if cfg!(feature = "quick") {
    1_250
} else {
    5_000
};
const HMC_PER_BATCH: usize = if cfg!(feature = "quick") { 125 } else { 500 };
/// Standard errors a moment may deviate.
const Z: f32 = 5.0;

/// ∇U(θ) = (θ − μ)/σ² and U(θ) = ½ Σ (θ − μ)²/σ², in the sampler's type.
fn model<T: Real>() -> impl Energy<T> {
    Model::new(
        |theta: &[T], g: &mut [T]| {
            for i in 0..DIM.min(theta.len()).min(g.len()) {
                let (m, v) = (T::from_f32(MEAN[i]), T::from_f32(VAR[i]));
                g[i] = (theta[i] - m) / v;
            }
        },
        |theta: &[T]| {
            let mut u = T::ZERO;
            for (i, &t) in theta.iter().enumerate().take(DIM) {
                let d = t - T::from_f32(MEAN[i]);
                u += T::HALF * d * d / T::from_f32(VAR[i]);
            }
            u
        },
    )
}

/// Runs `sampler` and checks its moments against N(μ, diag `target_var`); prints one line.
fn check<T: Float, S: Sampler<T, M>, M>(
    name: &str,
    sampler: &mut S,
    model: &mut M,
    target_var: [T; DIM],
    (seed, per_batch): (u64, usize),
) -> bool {
    let mut rng = Pcg32::new(seed, 0xa02b_dbf7_bb3c_0a7a);
    // The stack one step uses: painted, one step, scanned.
    let sp = stack::paint();
    let step_ok = sampler.step(model, &mut rng).is_ok();
    let step_stack = stack::used_since(sp);
    if !step_ok {
        fail(name, T::NAME, "first step error");
        return false;
    }
    for _ in 0..BURN.min(per_batch) {
        if sampler.step(model, &mut rng).is_err() {
            fail(name, T::NAME, "step error in burn-in");
            return false;
        }
    }
    let mut batch_mean = [[T::ZERO; DIM]; BATCHES];
    let mut batch_var = [[T::ZERO; DIM]; BATCHES];
    let inv = T::ONE / T::from_usize(per_batch);
    for b in 0..BATCHES {
        let (mut s1, mut s2) = ([T::ZERO; DIM], [T::ZERO; DIM]);
        for _ in 0..per_batch {
            if sampler.step(model, &mut rng).is_err() {
                fail(name, T::NAME, "step error");
                return false;
            }
            for (i, &t) in sampler.position().iter().enumerate().take(DIM) {
                let d = t - T::from_f32(MEAN[i]);
                s1[i] += t;
                s2[i] += d * d;
            }
        }
        for i in 0..DIM {
            batch_mean[b][i] = s1[i] * inv;
            batch_var[b][i] = s2[i] * inv;
        }
    }
    let mut ok = true;
    for i in 0..DIM {
        let (m, m_se) = mean_se(batch_mean.iter().map(|b| b[i]));
        let (v, v_se) = mean_se(batch_var.iter().map(|b| b[i]));
        let (dm, dv) = (m - T::from_f32(MEAN[i]), v - target_var[i]);
        let z = T::from_f32(Z);
        let pass = dm.abs() <= z * m_se && dv.abs() <= z * v_se;
        ok &= pass;
        Line::new()
            .text(if pass { "PASS " } else { "FAIL " })
            .text(name)
            .text(" ")
            .text(T::NAME)
            .text(" θ")
            .uint(i as u32)
            .text(": mean ")
            .fixed4(m.show())
            .text(" (μ ")
            .fixed4(MEAN[i])
            .text(", ±")
            .fixed4((z * m_se).show())
            .text("), var ")
            .fixed4(v.show())
            .text(" (σ² ")
            .fixed4(target_var[i].show())
            .text(", ±")
            .fixed4((z * v_se).show())
            .text(")")
            .emit();
    }
    Line::new()
        .text("stack ")
        .text(name)
        .text(" ")
        .text(T::NAME)
        .text(": ")
        .uint(step_stack as u32)
        .text(" bytes for one step")
        .emit();
    ok
}

/// The mean of the batch values and its standard error.
fn mean_se<T: Real>(values: impl Iterator<Item = T> + Clone) -> (T, T) {
    let n = T::from_usize(BATCHES);
    let mean = values.clone().fold(T::ZERO, |a, x| a + x) / n;
    let ss = values.fold(T::ZERO, |a, x| a + (x - mean) * (x - mean));
    (mean, (ss / (n * (n - T::ONE))).sqrt())
}

/// Prints `FAIL <name> <type>: <what>`.
fn fail(name: &str, ty: &str, what: &str) {
    Line::new()
        .text("FAIL ")
        .text(name)
        .text(" ")
        .text(ty)
        .text(": ")
        .text(what)
        .emit();
}

/// Every sampler family in type `T`; `true` when every check passed.
fn run_all<T: Float>(seed: u64) -> bool {
    let var = VAR.map(T::from_f32);
    let mut m = model::<T>();
    let mut ok = true;
    let mut work = [T::ZERO; 4 * DIM];

    // SGLD, h = 0.05: the Euler–Maruyama chain's own stationary variance (module docs).
    {
        let h = T::from_f32(0.05);
        let sgld_var = var.map(|v| v / (T::ONE - h / (T::TWO * v)));
        let mut theta = [T::ZERO; DIM];
        match Sgld::new(SgldParams::new(h), &mut theta, &mut work[..2 * DIM]) {
            Ok(mut s) => ok &= check("sgld", &mut s, &mut m, sgld_var, (seed, PER_BATCH)),
            Err(_) => ok = report_build_error("sgld"),
        }
    }
    // SGHMC, SGNHT, mSGNHT: splitting (A–B–O–B–A), h = 0.1, friction / diffusion 1.
    {
        let mut theta = [T::ZERO; DIM];
        let mut p = [T::ZERO; DIM];
        let params = SghmcParams::new(T::from_f32(0.1)).with_friction(T::ONE);
        match Sghmc::new(params, &mut theta, &mut p, &mut work[..2 * DIM]) {
            Ok(mut s) => ok &= check("sghmc", &mut s, &mut m, var, (seed + 1, PER_BATCH)),
            Err(_) => ok = report_build_error("sghmc"),
        }
    }
    {
        let mut theta = [T::ZERO; DIM];
        let mut p = [T::ZERO; DIM];
        let params = SgnhtParams::new(T::from_f32(0.1)).with_diffusion(T::ONE);
        let mut xi = params.initial_thermostat();
        match Sgnht::new(params, &mut theta, &mut p, &mut xi, &mut work[..2 * DIM]) {
            Ok(mut s) => ok &= check("sgnht", &mut s, &mut m, var, (seed + 2, PER_BATCH)),
            Err(_) => ok = report_build_error("sgnht"),
        }
    }
    {
        let mut theta = [T::ZERO; DIM];
        let mut p = [T::ZERO; DIM];
        let params = SgnhtParams::new(T::from_f32(0.1)).with_diffusion(T::ONE);
        let mut xi = [params.initial_thermostat(); DIM];
        match MSgnht::new(params, &mut theta, &mut p, &mut xi, &mut work[..2 * DIM]) {
            Ok(mut s) => ok &= check("msgnht", &mut s, &mut m, var, (seed + 3, PER_BATCH)),
            Err(_) => ok = report_build_error("msgnht"),
        }
    }
    // SGMGT-D with its defaults (softened monomial-gamma kinetics, a = 1), splitting, h = 0.05.
    {
        let mut theta = [T::ZERO; DIM];
        let mut p = [T::ZERO; DIM];
        let mut xi = [T::ZERO; DIM];
        let params = SgmgtParams::sgmgt_d(T::from_f32(0.05));
        match Sgmgt::new(params, &mut theta, &mut p, &mut xi, &mut work[..2 * DIM]) {
            Ok(mut s) => ok &= check("sgmgt-d", &mut s, &mut m, var, (seed + 4, PER_BATCH)),
            Err(_) => ok = report_build_error("sgmgt-d"),
        }
    }
    // HMC: 10 leapfrog steps of 0.15 per proposal (Metropolis-corrected: exact moments).
    {
        let (mut theta, mut p) = ([T::ZERO; DIM], [T::ZERO; DIM]);
        let params = HmcParams::new(T::from_f32(0.15)).with_leapfrog_steps(10);
        match Hmc::new(params, &mut theta, &mut p, &mut work) {
            Ok(mut s) => ok &= check("hmc", &mut s, &mut m, var, (seed + 5, HMC_PER_BATCH)),
            Err(_) => ok = report_build_error("hmc"),
        }
    }
    ok
}

fn report_build_error(name: &str) -> bool {
    Line::new()
        .text("FAIL ")
        .text(name)
        .text(": the sampler rejected its buffers or parameters")
        .emit();
    false
}

#[entry]
fn main() -> ! {
    #[cfg_attr(not(feature = "f64"), allow(unused_mut))]
    let mut ok = run_all::<f32>(100);
    #[cfg(feature = "f64")]
    {
        ok &= run_all::<f64>(200);
    }
    if ok {
        Line::new().text("sgmcmc-firmware: ok").emit();
        debug::exit(debug::EXIT_SUCCESS);
    } else {
        Line::new().text("sgmcmc-firmware: FAILED").emit();
        debug::exit(debug::EXIT_FAILURE);
    }
    loop {}
}

/// A panic is a failure: report it and exit with status 1. (No build links a panic path today
/// — `tools/panic_sites.py` fails CI if one comes back — so this is never reached; it prints
/// without `core::fmt` so as not to pull in the formatting machinery itself.)
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    Line::new().text("sgmcmc-firmware: panic").emit();
    debug::exit(debug::EXIT_FAILURE);
    loop {}
}
