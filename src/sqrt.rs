//! Correctly rounded square roots of whole lane arrays: one of the crate's two audited `unsafe` modules (x86-64 SIMD intrinsics; the other is `dispatch`).
//!
//! [`sqrt_lanes32`] and [`sqrt_lanes64`] root a slice in place with the IEEE 754 square root on
//! every path: the SSE/AVX/AVX-512 `sqrtps`/`sqrtpd` instructions on x86-64 without `std`,
//! `std`'s `sqrt` with it, `libm` elsewhere (e.g. Cortex-M) and for the tails, so the noise is
//! bit-identical whichever path a build takes. Why intrinsics (`core` has no square root that
//! vectorises, and the Newton iteration they replace was slow: `docs/performance-notes.md`):
//! `docs/rng.md`, *Vectorised normals*. Tests: `noise::tests` (bit-exact against
//! `libm` at every length 1…67).
//!
//! Audit: the only `unsafe` blocks are in `sqrt32`/`sqrt64` (one scalar SSE/SSE2 square root,
//! no memory access) and `sqrt_chunk32`/`sqrt_chunk64`. Each calls intrinsics
//! of a feature the `cfg` guarantees is enabled at compile time (SSE2 is part of every x86-64
//! target; AVX and AVX-512F only when the build enables them), and each unaligned load or store
//! (`loadu`/`storeu`) covers exactly the `W` elements of a `chunks_exact_mut(W)` chunk, so no
//! access leaves the slice.
#![allow(unsafe_code)]

/// Lanes per `f32` square-root instruction of this build (also the chunk of [`sqrt_lanes32`]).
#[cfg(all(target_arch = "x86_64", not(feature = "std")))]
const W32: usize = if cfg!(target_feature = "avx512f") {
    16
} else if cfg!(target_feature = "avx") {
    8
} else {
    4
};

/// Lanes per `f64` square-root instruction of this build.
#[cfg(all(target_arch = "x86_64", not(feature = "std")))]
const W64: usize = W32 / 2;

/// `x[i] ← √x[i]` for every element, correctly rounded (any input: negative gives NaN).
#[inline(always)]
pub(crate) fn sqrt_lanes32(x: &mut [f32]) {
    #[cfg(feature = "std")]
    for v in x.iter_mut() {
        *v = v.sqrt();
    }
    #[cfg(all(target_arch = "x86_64", not(feature = "std")))]
    {
        let mut chunks = x.chunks_exact_mut(W32);
        for c in &mut chunks {
            sqrt_chunk32(c);
        }
        for v in chunks.into_remainder() {
            *v = libm::sqrtf(*v);
        }
    }
    #[cfg(not(any(feature = "std", target_arch = "x86_64")))]
    for v in x.iter_mut() {
        *v = libm::sqrtf(*v);
    }
}

/// `x[i] ← √x[i]` in `f64` (see [`sqrt_lanes32`]).
#[inline(always)]
pub(crate) fn sqrt_lanes64(x: &mut [f64]) {
    #[cfg(feature = "std")]
    for v in x.iter_mut() {
        *v = v.sqrt();
    }
    #[cfg(all(target_arch = "x86_64", not(feature = "std")))]
    {
        let mut chunks = x.chunks_exact_mut(W64);
        for c in &mut chunks {
            sqrt_chunk64(c);
        }
        for v in chunks.into_remainder() {
            *v = libm::sqrt(*v);
        }
    }
    #[cfg(not(any(feature = "std", target_arch = "x86_64")))]
    for v in x.iter_mut() {
        *v = libm::sqrt(*v);
    }
}

/// √x of one `f32`, correctly rounded: the SSE `sqrtss` intrinsic on x86-64, libm elsewhere
/// (the same IEEE 754 value either way). The math shim's square root ([`crate::Real::sqrt`]):
/// libm's own x86 `sqrtf` is inline assembly, which LLVM cannot vectorise, so a square root in
/// a per-coordinate body (the branch-free monomial-gamma flow) kept the whole loop scalar.
#[inline(always)]
pub(crate) fn sqrt32(x: f32) -> f32 {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_cvtss_f32, _mm_set_ss, _mm_sqrt_ss};
        // SAFETY: SSE is part of every x86-64 target; no memory is accessed.
        unsafe { _mm_cvtss_f32(_mm_sqrt_ss(_mm_set_ss(x))) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        libm::sqrtf(x)
    }
}

/// √x of one `f64` (see [`sqrt32`]): SSE2's `sqrtsd` on x86-64, libm elsewhere.
#[inline(always)]
pub(crate) fn sqrt64(x: f64) -> f64 {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_cvtsd_f64, _mm_set_sd, _mm_setzero_pd, _mm_sqrt_sd};
        // SAFETY: SSE2 is part of every x86-64 target; no memory is accessed.
        unsafe { _mm_cvtsd_f64(_mm_sqrt_sd(_mm_setzero_pd(), _mm_set_sd(x))) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        libm::sqrt(x)
    }
}

/// One register of `f32` lanes; `c.len() == W32` (a `chunks_exact_mut(W32)` chunk).
#[cfg(all(target_arch = "x86_64", not(feature = "std")))]
#[inline(always)]
fn sqrt_chunk32(c: &mut [f32]) {
    debug_assert_eq!(c.len(), W32);
    let p = c.as_mut_ptr();
    #[cfg(target_feature = "avx512f")]
    {
        use core::arch::x86_64::{_mm512_loadu_ps, _mm512_sqrt_ps, _mm512_storeu_ps};
        // SAFETY: AVX-512F is enabled for this build (cfg); `p` points to W32 = 16 f32.
        unsafe { _mm512_storeu_ps(p, _mm512_sqrt_ps(_mm512_loadu_ps(p))) }
    }
    #[cfg(all(target_feature = "avx", not(target_feature = "avx512f")))]
    {
        use core::arch::x86_64::{_mm256_loadu_ps, _mm256_sqrt_ps, _mm256_storeu_ps};
        // SAFETY: AVX is enabled for this build (cfg); `p` points to W32 = 8 f32.
        unsafe { _mm256_storeu_ps(p, _mm256_sqrt_ps(_mm256_loadu_ps(p))) }
    }
    #[cfg(not(target_feature = "avx"))]
    {
        use core::arch::x86_64::{_mm_loadu_ps, _mm_sqrt_ps, _mm_storeu_ps};
        // SAFETY: SSE is part of every x86-64 target; `p` points to W32 = 4 f32.
        unsafe { _mm_storeu_ps(p, _mm_sqrt_ps(_mm_loadu_ps(p))) }
    }
}

/// One register of `f64` lanes; `c.len() == W64`.
#[cfg(all(target_arch = "x86_64", not(feature = "std")))]
#[inline(always)]
fn sqrt_chunk64(c: &mut [f64]) {
    debug_assert_eq!(c.len(), W64);
    let p = c.as_mut_ptr();
    #[cfg(target_feature = "avx512f")]
    {
        use core::arch::x86_64::{_mm512_loadu_pd, _mm512_sqrt_pd, _mm512_storeu_pd};
        // SAFETY: AVX-512F is enabled for this build (cfg); `p` points to W64 = 8 f64.
        unsafe { _mm512_storeu_pd(p, _mm512_sqrt_pd(_mm512_loadu_pd(p))) }
    }
    #[cfg(all(target_feature = "avx", not(target_feature = "avx512f")))]
    {
        use core::arch::x86_64::{_mm256_loadu_pd, _mm256_sqrt_pd, _mm256_storeu_pd};
        // SAFETY: AVX is enabled for this build (cfg); `p` points to W64 = 4 f64.
        unsafe { _mm256_storeu_pd(p, _mm256_sqrt_pd(_mm256_loadu_pd(p))) }
    }
    #[cfg(not(target_feature = "avx"))]
    {
        use core::arch::x86_64::{_mm_loadu_pd, _mm_sqrt_pd, _mm_storeu_pd};
        // SAFETY: SSE2 is part of every x86-64 target; `p` points to W64 = 2 f64.
        unsafe { _mm_storeu_pd(p, _mm_sqrt_pd(_mm_loadu_pd(p))) }
    }
}
