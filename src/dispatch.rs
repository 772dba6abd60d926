//! Run-time CPU dispatch: with the `std` feature on x86-64, every step runs in the widest instruction set the CPU has.
//!
//! A default x86-64 build (`cargo build --release`, no `RUSTFLAGS`) may only assume SSE2. With
//! the `std` feature the samplers' steps are also compiled for AVX2 + FMA (x86-64-v3) and for
//! AVX-512 (x86-64-v4); the CPU is detected once, and each step runs the widest copy it
//! supports. The copies are one source compiled three times, with the correctly rounded square
//! root and explicit lane sums, so they round alike but for one thing: the polynomials (the
//! noise's, and the kinetics' exp, tanh and ln) fuse their multiply-adds in the AVX2 and AVX-512
//! copies, whose CPUs all have FMA, and not in the baseline copy (a software fused multiply-add
//! there would cost more than it saves). So a chain is the same, bit for bit, on every CPU with
//! AVX2 and FMA — and the same as a `std` build made for such a CPU (`-C target-cpu=native`)
//! draws — and another on older CPUs (`docs/rng.md`, *Run-time dispatch*; tested by
//! `tests/value_stability.rs` at every level this CPU has). Elsewhere (no `std`, other targets, or a build whose own target features
//! already include AVX-512) there is one copy and nothing is detected.
//!
//! ```
//! use sgmcmc::dispatch::{self, Isa};
//!
//! let widest = dispatch::detected();
//! dispatch::set_max(Isa::Baseline); // e.g. to check that a chain does not depend on the CPU
//! assert_eq!(dispatch::active(), Isa::Baseline);
//! dispatch::set_max(Isa::Avx512);
//! assert_eq!(dispatch::active(), widest);
//! ```

// Audit: the only `unsafe` in this module (and the only one outside `sqrt`) is the calls of
// the `#[target_feature]` copies in `run` and `run_outlined`. Each is reached only when `active`
// names its level, which it does only when `is_x86_feature_detected!` found every feature the
// copy enables (`detect`); `set_max` can lower the level, never raise it. The copies touch no
// memory themselves: they call the kernel's safe code. The reference test is
// `tests/value_stability.rs`, which runs every sampler at each level and compares the bits with
// the pins of builds that do not dispatch (baseline) and of the fused polynomials (AVX2, AVX-512).
#![allow(unsafe_code)]

use crate::arith::{Arith, Plain};
use core::sync::atomic::{AtomicU8, Ordering};

/// An instruction-set level a step can run at, from narrowest to widest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Isa {
    /// The build's own target features (SSE2 for a default x86-64 build; whatever
    /// `-C target-cpu` or `-C target-feature` enabled otherwise).
    Baseline,
    /// AVX2, FMA, BMI1, BMI2, LZCNT and POPCNT (x86-64-v3: Intel Haswell, AMD Excavator and later).
    Avx2,
    /// AVX-512 F, BW, CD, DQ and VL on top of x86-64-v3 (x86-64-v4: Intel Skylake-SP, AMD Zen 4
    /// and later).
    Avx512,
}

impl Isa {
    const ALL: [Isa; 3] = [Isa::Baseline, Isa::Avx2, Isa::Avx512];

    /// The levels up to and including `self`, narrowest first.
    pub fn up_to(self) -> impl Iterator<Item = Isa> {
        Self::ALL.into_iter().filter(move |l| *l <= self)
    }
}

/// Whether this build has the wider copies: the `std` feature on x86-64, unless the build's own
/// target features already include AVX-512 (then its baseline is the widest copy).
pub const DISPATCHES: bool = cfg!(all(
    feature = "std",
    target_arch = "x86_64",
    not(all(
        target_feature = "avx512f",
        target_feature = "avx512bw",
        target_feature = "avx512dq",
        target_feature = "avx512vl"
    ))
));

/// The detected level plus one (0: not detected yet).
static DETECTED: AtomicU8 = AtomicU8::new(0);
/// The cap set by [`set_max`].
static MAX: AtomicU8 = AtomicU8::new(Isa::Avx512 as u8);

/// The widest level this CPU supports and this build has a copy for ([`Isa::Baseline`] when the
/// build does not dispatch, [`DISPATCHES`]). Detected once per process.
#[inline]
pub fn detected() -> Isa {
    match DETECTED.load(Ordering::Relaxed) {
        0 => detect_and_store(),
        n => level(n - 1),
    }
}

/// The first [`detected`] of a process: out of line, so that the steps' noise fills, which ask
/// for the level once per block, inline only the load (called out of line, the asking was 1.4 %
/// of a dispatched `f32` SGLD step's profile at d = 1024).
#[cold]
#[inline(never)]
fn detect_and_store() -> Isa {
    let isa = detect();
    DETECTED.store(isa as u8 + 1, Ordering::Relaxed);
    isa
}

/// The level the next step runs at: [`detected`], capped by [`set_max`].
#[inline]
pub fn active() -> Isa {
    detected().min(level(MAX.load(Ordering::Relaxed)))
}

/// Caps the level of every later step in this process (all threads): for checking that a chain
/// does not depend on the CPU, or for timing one level against another. A cap above
/// [`detected`] has no effect; `set_max(Isa::Avx512)` lifts any cap.
pub fn set_max(isa: Isa) {
    MAX.store(isa as u8, Ordering::Relaxed);
}

/// The level stored as `n`.
fn level(n: u8) -> Isa {
    match n {
        0 => Isa::Baseline,
        1 => Isa::Avx2,
        _ => Isa::Avx512,
    }
}

/// Asks the CPU (through `std`'s `is_x86_feature_detected!`, which also checks that the
/// operating system saves the wider registers).
fn detect() -> Isa {
    #[cfg(all(feature = "std", target_arch = "x86_64"))]
    if DISPATCHES {
        let v3 = std::is_x86_feature_detected!("avx2")
            && std::is_x86_feature_detected!("fma")
            && std::is_x86_feature_detected!("bmi1")
            && std::is_x86_feature_detected!("bmi2")
            && std::is_x86_feature_detected!("lzcnt")
            && std::is_x86_feature_detected!("popcnt");
        let v4 = v3
            && std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512cd")
            && std::is_x86_feature_detected!("avx512dq")
            && std::is_x86_feature_detected!("avx512vl");
        return if v4 {
            Isa::Avx512
        } else if v3 {
            Isa::Avx2
        } else {
            Isa::Baseline
        };
    }
    Isa::Baseline
}

/// A piece of work to run at the [`active`] level: a sampler's step. `run` must be
/// `#[inline(always)]`, and so must everything it calls that should use the wider instructions
/// (a function not inlined is compiled once, for the baseline).
pub(crate) trait Kernel {
    /// What the work returns.
    type Output;
    /// Does the work, with the polynomials' multiply-adds fused when `A` says so (the AVX2 and
    /// AVX-512 copies; [`crate::arith::Arith`]).
    fn run<A: Arith>(self) -> Self::Output;
}

/// Runs `kernel` in the widest copy the CPU supports (module docs).
#[inline(always)]
pub(crate) fn run<K: Kernel>(kernel: K) -> K::Output {
    #[cfg(all(feature = "std", target_arch = "x86_64"))]
    if DISPATCHES {
        match active() {
            // SAFETY: `active` names a level only if `detect` found all of its features.
            Isa::Avx512 => return unsafe { wide::avx512(kernel) },
            // SAFETY: as above.
            Isa::Avx2 => return unsafe { wide::avx2(kernel) },
            Isa::Baseline => {}
        }
    }
    kernel.run::<Plain>()
}

/// [`run`], but the kernel is kept out of line in each copy: for a piece of work that a step
/// calls and that vectorises worse inlined into the step's large body (the `f64` noise fill,
/// `crate::noise`). Each copy is one call per use; without dispatch, a call of a function
/// compiled for the build's own features.
/// (Built where the `f64` noise is the lane generator's Box–Muller, its one user.)
#[cfg(any(target_feature = "avx2", all(feature = "std", target_arch = "x86_64")))]
#[inline(always)]
pub(crate) fn run_outlined<K: Kernel>(kernel: K) -> K::Output {
    #[cfg(all(feature = "std", target_arch = "x86_64"))]
    if DISPATCHES {
        match active() {
            // SAFETY: `active` names a level only if `detect` found all of its features.
            Isa::Avx512 => return unsafe { wide::avx512_outlined(kernel) },
            // SAFETY: as above.
            Isa::Avx2 => return unsafe { wide::avx2_outlined(kernel) },
            Isa::Baseline => {}
        }
    }
    baseline_outlined(kernel)
}

/// `kernel` out of line, compiled for the build's own features.
#[cfg(any(target_feature = "avx2", all(feature = "std", target_arch = "x86_64")))]
#[inline(never)]
fn baseline_outlined<K: Kernel>(kernel: K) -> K::Output {
    kernel.run::<Plain>()
}

/// The wider copies: the kernel inlined into a function compiled for more features.
#[cfg(all(feature = "std", target_arch = "x86_64"))]
mod wide {
    use super::Kernel;
    use crate::arith::Fused;

    /// `kernel` compiled for x86-64-v3.
    #[target_feature(enable = "avx2,fma,bmi1,bmi2,lzcnt,popcnt")]
    pub(super) fn avx2<K: Kernel>(kernel: K) -> K::Output {
        kernel.run::<Fused>()
    }

    /// `kernel` compiled for x86-64-v4.
    #[target_feature(
        enable = "avx2,fma,bmi1,bmi2,lzcnt,popcnt,avx512f,avx512bw,avx512cd,avx512dq,avx512vl"
    )]
    pub(super) fn avx512<K: Kernel>(kernel: K) -> K::Output {
        kernel.run::<Fused>()
    }

    /// [`avx2`], never inlined into its caller ([`super::run_outlined`]).
    #[inline(never)]
    #[target_feature(enable = "avx2,fma,bmi1,bmi2,lzcnt,popcnt")]
    pub(super) fn avx2_outlined<K: Kernel>(kernel: K) -> K::Output {
        kernel.run::<Fused>()
    }

    /// [`avx512`], never inlined into its caller ([`super::run_outlined`]).
    #[inline(never)]
    #[target_feature(
        enable = "avx2,fma,bmi1,bmi2,lzcnt,popcnt,avx512f,avx512bw,avx512cd,avx512dq,avx512vl"
    )]
    pub(super) fn avx512_outlined<K: Kernel>(kernel: K) -> K::Output {
        kernel.run::<Fused>()
    }
}
