//! The samplers' noise path: standard normals from many xoshiro lanes by a branch-free Box–Muller that vectorises.
//!
//! [`crate::rng::fill_lane_normals`] keys a multi-lane generator from the caller's RNG (two
//! `next_u64`; nothing is kept between calls, so a step's
//! noise is a function of the caller's RNG state alone) and fills the slice two lanes-wide
//! rounds at a time, in a fraction of a scalar ziggurat's time per normal
//! (`docs/performance-notes.md`). `f32`
//! draws the bit-identical stream on every build without `std` (portable, `x86-64-v3`,
//! `native`): the lane count is fixed, the arithmetic unfused and the square root correctly
//! rounded. With `std`, the polynomials' multiply-adds are fused where the code runs with FMA (a
//! build whose target features include it, and a dispatching build's AVX2 and AVX-512 copies),
//! which changes the last bits: one more stream, the same on every such CPU (`fused_noise`).
//! `f64` draws the Box–Muller on every build with AVX2 and on every x86-64 build with the `std`
//! feature (whose dispatched copies, `crate::dispatch`, draw it at every level); without either (the
//! portable x86-64 build, AArch64, microcontrollers)
//! its Box–Muller on two-wide vectors is slower than a scalar ziggurat, so there the `f64` noise
//! is the ziggurat on one lane of the same generator. Method, accuracy (ulp errors of the
//! polynomials, tail reach |z| ≤ 6.66 for `f32` and ≤ 8.49 for `f64`) and tests: `docs/rng.md`,
//! *Vectorised normals*.
//!
//! ```
//! use rand_pcg::Pcg64;
//! use sgmcmc::rng::fill_lane_normals;
//!
//! let mut rng = Pcg64::new(1, 2);
//! let mut z = [0.0f32; 100];
//! fill_lane_normals(&mut rng, &mut z);
//! assert!(z.iter().all(|x| x.abs() < 6.7));
//! ```

pub(crate) mod poly;
#[cfg(test)]
mod tests;
mod xoshiro;

pub(crate) use xoshiro::{LANES32, LANES64};
pub use xoshiro::{Xoshiro128x16, Xoshiro256x8};

use crate::dispatch::Isa;
use rand_core::Rng;

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Xoshiro128x16 {}
    impl Sealed for super::Xoshiro256x8 {}
}

/// A multi-lane generator of standard normals of type `T`: 16 xoshiro128++ lanes for `f32`, 8
/// xoshiro256+ lanes for `f64` (sealed; reached as `T::NormalLanes`; see
/// [`crate::rng::fill_lane_normals`]).
///
/// Keyed once from the caller's RNG, it fills slices round by round. Successive fills continue
/// one stream as long as every fill but the last has a length that is a multiple of
/// [`ROUND`](Self::ROUND) (a shorter fill discards the rest of its last round), so a loop may
/// draw its noise block by block.
///
/// ```
/// use rand_pcg::Pcg64;
/// use sgmcmc::Real;
/// use sgmcmc::rng::NormalLanes;
///
/// let mut rng = Pcg64::new(3, 4);
/// let mut lanes = <f32 as Real>::NormalLanes::keyed(&mut rng);
/// let mut z = [0.0f32; 96];
/// lanes.fill(&mut z[..64]); // a multiple of ROUND = 32
/// lanes.fill(&mut z[64..]);
/// ```
#[doc(hidden)] // plumbing of `Real` and the samplers; users draw with `rng::fill_lane_normals`
pub trait NormalLanes<T>: Clone + core::fmt::Debug + sealed::Sealed {
    /// Normals per round (two per lane).
    const ROUND: usize;
    /// A fill may be rounded up to a multiple of this length without changing the values it
    /// writes or the stream after it: [`ROUND`](Self::ROUND) for Box–Muller, whose short fills
    /// discard the rest of their last round; 1 for the `f64` ziggurat of targets without AVX2,
    /// which draws exactly as many normals as asked.
    const GRAIN: usize;
    /// A generator keyed from `rng` (two `next_u64`).
    fn keyed<R: Rng + ?Sized>(rng: &mut R) -> Self;
    /// Fills `out` with the next standard normals of the stream.
    fn fill(&mut self, out: &mut [T]);
}

/// Whether rounds are transformed two at a time per loop iteration: on AVX-512, whose 32
/// registers hold both rounds' chains, so the polynomials' latency overlaps; not elsewhere (two
/// rounds of 16 lanes spill AVX2's 16 registers). Either way the values and their order are the
/// same. A build with AVX-512 does so always; a dispatching build (`crate::dispatch`) does for
/// `f32` when the step runs its AVX-512 copy (for `f64` its generic AVX-512 copy was slower
/// batched: `docs/performance-notes.md`).
#[inline(always)]
fn batched(dispatched_too: bool, level: Option<Isa>) -> bool {
    cfg!(target_feature = "avx512f") || (dispatched_too && level == Some(Isa::Avx512))
}

/// Whether the noise's polynomials fuse their multiply-adds here: in a build whose own target
/// features include FMA with `std` ([`poly::NATIVE_FMA`]), and in a dispatching build's AVX2 and
/// AVX-512 copies (`crate::dispatch`), whose CPUs all have FMA. A dispatching binary therefore
/// draws one noise stream on every CPU with AVX2 and FMA, and the unfused one on older CPUs
/// (`docs/rng.md`, *Run-time dispatch*): unfused, the Box–Muller took about a sixth longer
/// than fused, which kept the dispatched steps 1.1–1.3× as slow as native ones.
/// `level` is [`dispatched_level`], read once per fill; the copy that runs was chosen by the
/// same level, so a fused fill never runs in the baseline copy (where it would be a library
/// call per multiply-add: correct, slow) unless [`crate::dispatch::set_max`] raced with a step.
#[inline(always)]
fn fused_noise(level: Option<Isa>) -> bool {
    poly::NATIVE_FMA || level >= Some(Isa::Avx2)
}

/// The level the running copy was chosen for, in a dispatching build (a relaxed atomic load);
/// `None` in a build that does not dispatch, where nothing is read.
#[inline(always)]
fn dispatched_level() -> Option<Isa> {
    crate::dispatch::DISPATCHES.then(crate::dispatch::active)
}

/// The first N values of `from` as an array (N ≤ `from.len()` always holds at the call sites;
/// shorter input leaves zeros).
#[inline(always)]
fn copy_array<T: Copy + Default, const N: usize>(from: &[T]) -> [T; N] {
    let mut out = [T::default(); N];
    for (o, x) in out.iter_mut().zip(from) {
        *o = *x;
    }
    out
}

/// [`NormalLanes`] for one generator: whole batches of rounds straight into `out` (each round
/// is its cosine halves, then its sine halves), the rest round by round through a stack buffer.
macro_rules! normal_lanes {
    ($t:ident, $gen:ty, $lanes:expr, $dispatched_batch:expr, $(#[$fill:meta])*) => {
        impl NormalLanes<$t> for $gen {
            const ROUND: usize = 2 * $lanes;
            const GRAIN: usize = 2 * $lanes;
            #[cfg_attr(feature = "std", inline(always))]
            #[cfg_attr(not(feature = "std"), inline)]
            fn keyed<R: Rng + ?Sized>(rng: &mut R) -> Self {
                <$gen>::keyed(rng)
            }
            $(#[$fill])*
            fn fill(&mut self, out: &mut [$t]) {
                fill_through!($t, self, out)
            }
        }

        impl $gen {
            /// [`NormalLanes::fill`]'s work, inlined into whichever copy runs it, fused or not
            /// as [`fused_noise`] says for that copy.
            #[inline(always)]
            fn fill_here(&mut self, out: &mut [$t]) {
                let level = dispatched_level();
                let batched = batched($dispatched_batch, level);
                if fused_noise(level) {
                    self.fill_rounds::<true>(out, batched)
                } else {
                    self.fill_rounds::<false>(out, batched)
                }
            }

            /// [`Self::fill_here`] with the polynomials' multiply-adds fused or not, two rounds
            /// per iteration when `batched`.
            #[inline(always)]
            fn fill_rounds<const FUSED: bool>(&mut self, out: &mut [$t], batched: bool) {
                let rest = if batched {
                    let mut block = [[[0.0 as $t; $lanes]; 2]; 2];
                    let (batches, rest) = out.as_chunks_mut::<{ 2 * $lanes * 2 }>();
                    for batch in batches {
                        self.rounds::<FUSED, 2>(&mut block);
                        *batch = copy_array(block.as_flattened().as_flattened());
                    }
                    rest
                } else {
                    out
                };
                // (Element loops, not `copy_from_slice`: for these short copies that is a call
                // of `memmove`, a tenth of a small step.)
                let (rounds, part) = rest.as_chunks_mut::<{ 2 * $lanes }>();
                for round in rounds {
                    let mut one = [[[0.0 as $t; $lanes]; 2]; 1];
                    self.rounds::<FUSED, 1>(&mut one);
                    *round = copy_array(one.as_flattened().as_flattened());
                }
                if !part.is_empty() {
                    let mut one = [[[0.0 as $t; $lanes]; 2]; 1];
                    self.rounds::<FUSED, 1>(&mut one);
                    for (x, z) in part.iter_mut().zip(one.as_flattened().as_flattened()) {
                        *x = *z;
                    }
                }
            }
        }
    };
}

/// How a fill runs: the `f32` one in place, inlined into the step (its lanes vectorise there,
/// and a call would be a tenth of a d = 17 step); the `f64` one out of line, in the widest copy
/// the CPU has when the build dispatches ([`crate::dispatch::run_outlined`]). Inlined into a
/// large step, LLVM kept the eight xoshiro256+ lanes in the step's frame and stepped them one
/// lane at a time (scalar `rol`, no `vprolq`): natively SGMGT-D Euler at d = 1024 took 1.3×
/// and HMC 1.15× as long (`docs/performance-notes.md`).
macro_rules! fill_through {
    (f32, $gen:expr, $out:expr) => {
        $gen.fill_here($out)
    };
    (f64, $gen:expr, $out:expr) => {
        crate::dispatch::run_outlined(FillF64 {
            lanes: $gen,
            out: $out,
        })
    };
}

/// The `f64` fill as a [`crate::dispatch::Kernel`] (see [`fill_through`]).
#[cfg(any(target_feature = "avx2", all(feature = "std", target_arch = "x86_64")))]
struct FillF64<'a> {
    lanes: &'a mut Xoshiro256x8,
    out: &'a mut [f64],
}

#[cfg(any(target_feature = "avx2", all(feature = "std", target_arch = "x86_64")))]
impl crate::dispatch::Kernel for FillF64<'_> {
    type Output = ();
    #[inline(always)]
    fn run<A: crate::arith::Arith>(self) {
        self.lanes.fill_here(self.out)
    }
}

normal_lanes!(
    f32,
    Xoshiro128x16,
    LANES32,
    true,
    #[cfg_attr(feature = "std", inline(always))]
    #[cfg_attr(not(feature = "std"), inline)]
);
#[cfg(any(target_feature = "avx2", all(feature = "std", target_arch = "x86_64")))]
normal_lanes!(f64, Xoshiro256x8, LANES64, false, #[inline(always)]);

/// `f64` on targets without AVX2 (the portable x86-64 build, microcontrollers): the ziggurat of
/// [`crate::rng::standard_normal_f64`] on lane 0 of the generator, stepped as one xoshiro256++.
/// Two-wide SSE2 vectors (and no vector 64-bit rotate) make the `f64` Box–Muller slower than the
/// scalar ziggurat there (`docs/performance-notes.md`), and a core without a double-precision
/// FPU gains nothing from lanes. The stream therefore differs
/// from the AVX2 builds' (see `docs/rng.md`, *Determinism*).
#[cfg(not(any(target_feature = "avx2", all(feature = "std", target_arch = "x86_64"))))]
impl NormalLanes<f64> for Xoshiro256x8 {
    const ROUND: usize = 2 * LANES64;
    const GRAIN: usize = 1;
    #[cfg_attr(feature = "std", inline(always))]
    #[cfg_attr(not(feature = "std"), inline)]
    fn keyed<R: Rng + ?Sized>(rng: &mut R) -> Self {
        <Xoshiro256x8>::keyed(rng)
    }
    #[cfg_attr(feature = "std", inline(always))]
    #[cfg_attr(not(feature = "std"), inline)]
    fn fill(&mut self, out: &mut [f64]) {
        let mut words = xoshiro::LaneZero(self);
        for x in out.iter_mut() {
            *x = crate::ziggurat::standard_normal_f64(&mut words);
        }
    }
}
