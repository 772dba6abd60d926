//! Which engine this build compiles: the vectorised one, or the scalar core of microcontrollers.
//!
//! The lowest module of the crate: every other one may read these two constants, and this one
//! reads nothing (`docs/rng.md`, *Which builds share a chain*).

/// Whether this build runs the vectorised engine: on targets with the SIMD units that the
/// per-coordinate loops' unrolled chunks, specialised bodies and the lane generator's noise are
/// for (x86, AArch64, WebAssembly's simd128). Elsewhere (Cortex-M and every other scalar core)
/// the build is a *scalar core* ([`SCALAR_CORE`]). `--cfg sgmcmc_scalar_core` makes any build a
/// scalar core, so a host can reproduce a microcontroller's chain bit for bit
/// (`docs/rng.md`, *Determinism*).
pub(crate) const VECTOR_TARGET: bool = !SCALAR_CORE;

/// A scalar-core build: one flat loop per pass, one accumulator per sum, and the noise drawn
/// where it is used, one ziggurat normal at a time from the caller's generator
/// (`lanes::Noise::Inline`), so that a step costs what a hand-written scalar loop of its update
/// costs whatever d is. Lanes, blocks and unrolled chunks would only multiply code and fixed
/// cost on a core that has no vectors: keying and one Box–Muller round of the lane generator
/// cost a Cortex-M4F as much as a hand-written d = 30 step, and a large body unrolled
/// eight-fold, in every specialised copy, overflowed the Cortex-M0's 256 KB of flash.
pub(crate) const SCALAR_CORE: bool = cfg!(sgmcmc_scalar_core)
    || !cfg!(any(
        target_arch = "x86_64",
        target_arch = "x86",
        target_arch = "aarch64",
        target_feature = "simd128"
    ));
