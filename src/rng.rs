//! Random variates: uniforms, ziggurat normals, the samplers' vectorised normals, Gamma and Poisson draws.
//!
//! Everything takes any [`rand_core::Rng`] and allocates nothing. The `f64` functions draw with
//! `next_u64`; the `f32` ones only with `next_u32`, in `f32` arithmetic only. Samplers draw
//! their noise with [`fill_lane_normals`] / [`NormalLanes`] (the vectorised Box–Muller on xoshiro
//! lanes, keyed from your RNG at every step) and their occasional single normals through
//! [`crate::Real`] (`T::standard_normal(rng)`); the other functions are for your own draws
//! (minibatch indices, initial states). Methods, exactness and accuracy: `docs/rng.md`.
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

pub use crate::noise::{NormalLanes, Xoshiro128x16, Xoshiro256x8};
pub use crate::variates::{fill_lane_normals, fill_standard_normal, gamma, poisson};
pub use crate::ziggurat::{
    standard_normal_f32, standard_normal_f64, uniform_f32, uniform_f64, uniform_open_f32,
    uniform_open_f64,
};
