//! A firmware that runs SGNHT with the Euler scheme and the identity mass, and nothing else, beside a hand-written scalar SGNHT-Euler step: what it links, and how the two compare in size.
//!
//! The sampler is built as a firmware fixes one combination at compile time
//! (`with_integrator(Euler)`, `with_mass(IdentityMass)`); [`crate_step`] takes its step and
//! [`reference_step`] the cost curve's hand-written reference of the same update
//! (`src/curve/reference.rs`). `tools/flash_report.py` lists every function the ELF holds (no
//! symbol of the splitting scheme, of a diagonal or dense mass, of the run-time mass or
//! integrator dispatch may appear) and compares the code each step function reaches through
//! calls, apart from what both share (the ziggurat, libm, compiler-builtins, `core`). The
//! binary is built, not run.

#![no_std]
#![no_main]

#[allow(dead_code)] // the moment checks' constants
#[path = "../common.rs"]
mod common;
mod model;
#[allow(dead_code)] // the other firmware's printers
#[path = "../out.rs"]
mod out;
#[allow(dead_code)] // the other references
#[path = "../curve/reference.rs"]
mod reference;

use core::hint::black_box;
use cortex_m_rt::entry;
use model::{Model, rng};
use rand_pcg::Pcg32;
use reference::Ziggurat;
use sgmcmc::prelude::*;

const D: usize = 3;

/// One crate step.
#[unsafe(no_mangle)]
#[inline(never)]
pub fn crate_step(
    sampler: &mut Sgnht<'_, f32, Euler, IdentityMass>,
    model: &mut Model,
    rng: &mut Pcg32,
) -> bool {
    sampler.step(model, rng).is_ok()
}

/// One reference step.
#[unsafe(no_mangle)]
#[inline(never)]
pub fn reference_step(
    step: &reference::Sgnht<f32>,
    state: (&mut [f32], &mut [f32], &mut f32, &mut [f32]),
    model: &mut Model,
    rng: &mut Pcg32,
) {
    let (theta, p, xi, g) = state;
    step.euler(theta, p, xi, g, model, &mut Ziggurat(rng));
}

#[entry]
fn main() -> ! {
    let h = black_box(0.1f32);
    let (mut theta, mut p, mut work) = ([0.0f32; D], [0.0f32; D], [0.0f32; 2 * D]);
    let params = SgnhtParams::new(h).with_integrator(Euler);
    let mut xi = params.initial_thermostat();
    let mut ok = match Sgnht::resume(
        params,
        &mut theta,
        &mut p,
        core::slice::from_mut(&mut xi),
        &mut work,
    )
    .and_then(|s| Ok(s.with_mass(IdentityMass)?))
    {
        Ok(mut s) => crate_step(&mut s, &mut Model, &mut rng()),
        Err(_) => false,
    };
    let (mut theta, mut p, mut g, mut xi) = ([0.0f32; D], [0.0f32; D], [0.0f32; D], 1.0f32);
    let step = reference::Sgnht::new(h, 1.0);
    reference_step(
        &step,
        (&mut theta, &mut p, &mut xi, &mut g),
        &mut Model,
        &mut rng(),
    );
    ok &= xi.is_finite();
    common::finish(ok)
}
