//! The crate's streaming diagnostics on the device: an SGHMC chain's first coordinate into running moments, batch means and a windowed ESS, every draw and every estimate printed as bits for the host to recompute.
//!
//! `harness firmware-diagnostics <log>` (run by `tools/firmware.sh`) reads the `draw` lines,
//! recomputes the estimates with the harness's own estimators (direct batch means of the same
//! batches; the FFT-based Geyer ESS on the same window) and checks the device's against them.

use crate::Posterior;
use crate::common::Float;
use crate::out;
use rand_pcg::Pcg32;
use sgmcmc::diagnostics::{BatchMeans, RunningMoments, WindowedEss};
use sgmcmc::prelude::*;

/// Draws of the chain after its burn-in.
pub const DRAWS: usize = 6000;
const BURN: usize = 500;
/// Batch-means slots and the ESS window.
const SLOTS: usize = 64;
const WINDOW: usize = 256;

/// Runs the chain in type `T`, printing each draw and then the estimates; `false` if a step or
/// an estimate failed.
pub fn run<T: Float>(seed: u64) -> bool {
    let (mut theta, mut p, mut work) = ([T::ZERO; 3], [T::ZERO; 3], [T::ZERO; 6]);
    let params = SghmcParams::new(T::from_f32(0.1)).with_friction(T::ONE);
    let Ok(mut sghmc) = Sghmc::new(params, &mut theta, &mut p, &mut work) else {
        out::failure(
            ("", "diagnostics", T::NAME),
            "the sampler rejected its buffers",
        );
        return false;
    };
    let mut model = Posterior::Gaussian;
    let mut rng = Pcg32::new(seed, 0x0d1a_6e05);
    let mut moments = RunningMoments::<T>::new();
    let mut batches = BatchMeans::<T, SLOTS>::new();
    let mut window = WindowedEss::<T, WINDOW>::new();
    for step in 0..BURN + DRAWS {
        if sghmc.step(&mut model, &mut rng).is_err() {
            out::failure(("", "diagnostics", T::NAME), "step error");
            return false;
        }
        if step < BURN {
            continue;
        }
        let x = sghmc.position().first().copied().unwrap_or(T::ZERO);
        let pushed = moments.push(x).is_ok() && batches.push(x).is_ok() && window.push(x).is_ok();
        if !pushed {
            out::failure(("", "diagnostics", T::NAME), "a draw was refused");
            return false;
        }
        out::draw(T::NAME, x.to_bits_u64());
    }
    let estimates = [
        moments.mean(),
        moments.variance(),
        batches.mcse(),
        batches.ess(),
        window.ess(),
    ];
    let mut bits = [0u64; 5];
    for (b, e) in bits.iter_mut().zip(estimates) {
        match e {
            Ok(v) => *b = v.to_bits_u64(),
            Err(_) => {
                out::failure(("", "diagnostics", T::NAME), "an estimate failed");
                return false;
            }
        }
    }
    out::diagnostics(
        T::NAME,
        (
            DRAWS as u32,
            batches.batches() as u32,
            batches.batch_size() as u32,
            window.len() as u32,
        ),
        bits,
    );
    true
}
