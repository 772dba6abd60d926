//! Random variates: uniforms, ziggurat normals, the samplers' vectorised normals, Gamma and Poisson draws.
//!
//! Everything takes any [`rand_core::Rng`] and allocates nothing. The `f64` functions draw with
//! `next_u64`; the `f32` ones only with `next_u32`, in `f32` arithmetic only. On vector targets
//! (x86, AArch64, WebAssembly simd128) the samplers draw their noise with [`fill_lane_normals`]
//! (the vectorised Box–Muller on xoshiro lanes, keyed from your RNG at every step); on a scalar
//! core ([`SCALAR_CORE`]: Cortex-M and every other target without wide SIMD) they draw each normal
//! where they use it, one ziggurat draw at a time from your RNG. [`fill_step_normals`] is either,
//! as this build's samplers draw it; their occasional single normals go through [`crate::Real`]
//! (`T::standard_normal(rng)`). The other functions are for your own draws (minibatch indices,
//! initial states). Methods, exactness, accuracy and which builds share a stream: `docs/rng.md`.
//!
//! ```
//! use rand_pcg::Pcg64;
//! use sgmcmc::rng::{fill_standard_normal, gamma, uniform_f64};
//!
//! let mut rng = Pcg64::new(1, 2);
//! let mut z = [0.0f32; 4];
//! fill_standard_normal(&mut rng, &mut z);
//! assert!(uniform_f64(&mut rng) < 1.0 && gamma(&mut rng, 2.0f64) > 0.0);
//! ```

#[doc(hidden)] // the samplers' lanes as a stateful generator: plumbing
pub use crate::noise::NormalLanes;
pub use crate::variates::{
    fill_lane_normals, fill_standard_normal, fill_step_normals, gamma, poisson,
};
pub use crate::ziggurat::{
    standard_normal_f32, standard_normal_f64, uniform_f32, uniform_f64, uniform_open_f32,
    uniform_open_f64,
};

/// Whether this build is a *scalar core*: its samplers draw their noise one ziggurat normal at
/// a time from the caller's generator, where the step uses it, and run their passes as plain
/// loops with one accumulator per sum (every target without wide SIMD: Cortex-M, RISC-V, …;
/// any build with `--cfg sgmcmc_scalar_core`). `false` on x86, AArch64 and WebAssembly's
/// simd128, whose samplers draw the keyed Box–Muller lanes ([`fill_lane_normals`]). Builds of
/// one kind draw the same chains; the two kinds draw different ones (`docs/rng.md`,
/// *Determinism*).
pub const SCALAR_CORE: bool = crate::lanes::SCALAR_CORE;
