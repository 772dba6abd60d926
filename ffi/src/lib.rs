//! A C ABI for the `sgmcmc` samplers: SGLD, SGHMC, SGNHT, mSGNHT and SGMGT (softened
//! monomial-gamma kinetics; also with per-coordinate noise estimates), each for `f32` and `f64`.
//!
//! The header `include/sgmcmc.h` declares everything here for C99 and C++; `README.md` beside
//! it describes the conventions. In short:
//!
//! * **The caller owns all memory.** Every function takes the chain's state (θ, p, ξ), the
//!   gradient buffer and scratch space as caller pointers of documented lengths, builds the
//!   sampler over them, runs `steps` steps and returns. Nothing is allocated and nothing is kept
//!   between calls: the chain's state lives entirely in the caller's buffers, the generator
//!   ([`SgmcmcRng`]) and, for SGMGT, the caller's step counter.
//! * **Status codes, never panics.** Every function returns [`SGMCMC_OK`] or a negative
//!   `SGMCMC_ERR_*` code. Pointers (null, misaligned, overlapping), lengths and parameters are
//!   checked before any slice is formed or any state is touched.
//! * **The gradient** is a C callback `void f(const T* theta, T* grad, size_t n, void* ctx)`.
//!
//! `unsafe` appears only where a caller's pointer becomes a slice or a reference (each block
//! states the caller contract it relies on), and in the `#[unsafe(no_mangle)]` attributes that
//! export the symbols.
//!
//! # Panic runtime
//!
//! The crate is `#![no_std]` and its code uses only `core`. A staticlib still needs a panic
//! handler, although no panic is reachable from this API: with the `panic-handler` feature (and
//! `panic = "abort"`) the crate defines one (an endless loop) and the library needs neither std
//! nor libc; without it, on a hosted target, std is linked for its panic runtime only.
#![no_std]
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(missing_docs)]
#![warn(clippy::all)]
// The C entry points take the parameters, the callback and every buffer as separate arguments.
#![allow(clippy::too_many_arguments)]

#[cfg(all(not(feature = "panic-handler"), not(target_os = "none")))]
extern crate std;

/// The panic handler of the freestanding build. No panic is reachable from the API (every input
/// is validated before use and the core returns errors as values); should one happen anyway,
/// the caller's thread stops here instead of unwinding into C.
#[cfg(feature = "panic-handler")]
#[panic_handler]
fn panic(_info: &core::panic::PanicInfo<'_>) -> ! {
    loop {
        core::hint::spin_loop();
    }
}

use core::convert::Infallible;
use core::ffi::c_void;
use rand_core::TryRng;
use sgmcmc::kinetic::MonomialGamma;
use sgmcmc::sampler::{
    MSgnht, Sghmc, SghmcParams, Sgld, SgldParams, Sgmgt, SgmgtParams, Sgnht, SgnhtParams,
};
use sgmcmc::{
    Buffer, ChainState, Integrator, LayoutError, Param, ParamError, Real, Sampler, StepError,
    StepStats, Workspace,
};

// ------------------------------------------------------------------------------------------
// Status codes
// ------------------------------------------------------------------------------------------

/// Success.
pub const SGMCMC_OK: i32 = 0;
/// A required pointer is null or not aligned for its type.
pub const SGMCMC_ERR_NULL: i32 = -1;
/// `n` is 0, or a buffer of the documented length would exceed `PTRDIFF_MAX` bytes.
pub const SGMCMC_ERR_LENGTH: i32 = -2;
/// Two buffers overlap (every buffer must be a distinct, non-overlapping array).
pub const SGMCMC_ERR_OVERLAP: i32 = -3;
/// The generator's state is all zero (not seeded with `sgmcmc_rng_seed`).
pub const SGMCMC_ERR_RNG_UNSEEDED: i32 = -4;
/// The initial state (θ, p or ξ) holds a NaN or ±∞; nothing was done.
pub const SGMCMC_ERR_NON_FINITE_INPUT: i32 = -5;
/// The gradient callback wrote a NaN or ±∞. The failing step was not taken: θ, p and ξ are
/// bit-for-bit those after the last completed step (`stats.steps` of them in this call).
pub const SGMCMC_ERR_NON_FINITE_GRADIENT: i32 = -6;
/// A step completed but left a NaN or ±∞ in θ, p or ξ (the chain diverged; reduce h). The
/// state is left as computed; reset it before calling again.
pub const SGMCMC_ERR_NON_FINITE_STATE: i32 = -7;
/// The step size h is not finite or not > 0.
pub const SGMCMC_ERR_BAD_STEP_SIZE: i32 = -10;
/// The friction A (SGHMC) or diffusion A / D (SGNHT, mSGNHT) is not finite or < 0.
pub const SGMCMC_ERR_BAD_FRICTION: i32 = -11;
/// SGHMC's noise estimate B̂ is not finite, < 0, or > A.
pub const SGMCMC_ERR_BAD_NOISE_ESTIMATE: i32 = -12;
/// The integrator is neither 0 (Euler) nor 1 (splitting).
pub const SGMCMC_ERR_BAD_INTEGRATOR: i32 = -13;
/// SGMGT's monomial exponent a is neither 1 nor 2.
pub const SGMCMC_ERR_BAD_MONOMIAL_EXPONENT: i32 = -14;
/// SGMGT's softening c is not finite or not > 0.
pub const SGMCMC_ERR_BAD_SOFTENING: i32 = -15;
/// SGMGT's friction rescaling γ is not finite or < 0.
pub const SGMCMC_ERR_BAD_FRICTION_SCALE: i32 = -16;
/// SGMGT's momentum diffusion σ_p is not finite or < 0.
pub const SGMCMC_ERR_BAD_MOMENTUM_DIFFUSION: i32 = -17;
/// SGMGT's θ diffusion σ_θ is not finite or < 0.
pub const SGMCMC_ERR_BAD_THETA_DIFFUSION: i32 = -18;
/// SGMGT's thermostat diffusion σ_ξ is not finite or < 0.
pub const SGMCMC_ERR_BAD_THERMOSTAT_DIFFUSION: i32 = -19;
/// Any other rejected parameter (not produced by the current core; reserved).
pub const SGMCMC_ERR_BAD_PARAMETER: i32 = -20;

/// The Euler integrator (first order).
pub const SGMCMC_EULER: i32 = 0;
/// The symmetric splitting integrator (second order).
pub const SGMCMC_SPLITTING: i32 = 1;

fn param_code(e: ParamError) -> i32 {
    let param = match e {
        ParamError::NonFinite(p) | ParamError::OutOfRange(p) => p,
        _ => return SGMCMC_ERR_BAD_PARAMETER,
    };
    match param {
        Param::StepSize => SGMCMC_ERR_BAD_STEP_SIZE,
        Param::Friction => SGMCMC_ERR_BAD_FRICTION,
        Param::NoiseEstimate => SGMCMC_ERR_BAD_NOISE_ESTIMATE,
        Param::MonomialExponent => SGMCMC_ERR_BAD_MONOMIAL_EXPONENT,
        Param::Softening => SGMCMC_ERR_BAD_SOFTENING,
        Param::FrictionScale => SGMCMC_ERR_BAD_FRICTION_SCALE,
        Param::MomentumDiffusion => SGMCMC_ERR_BAD_MOMENTUM_DIFFUSION,
        Param::ThetaDiffusion => SGMCMC_ERR_BAD_THETA_DIFFUSION,
        Param::ThermostatDiffusion => SGMCMC_ERR_BAD_THERMOSTAT_DIFFUSION,
        _ => SGMCMC_ERR_BAD_PARAMETER,
    }
}

fn layout_code(e: LayoutError) -> i32 {
    match e {
        LayoutError::Empty | LayoutError::LengthMismatch { .. } => SGMCMC_ERR_LENGTH,
        LayoutError::InvalidValue {
            buffer: Buffer::NoiseEstimates,
            ..
        } => SGMCMC_ERR_BAD_NOISE_ESTIMATE,
        _ => SGMCMC_ERR_NON_FINITE_INPUT,
    }
}

fn step_code(e: StepError) -> i32 {
    match e {
        StepError::NonFiniteGradient { .. } => SGMCMC_ERR_NON_FINITE_GRADIENT,
        _ => SGMCMC_ERR_NON_FINITE_STATE,
    }
}

fn integrator(code: i32) -> Result<Integrator, i32> {
    match code {
        SGMCMC_EULER => Ok(Integrator::Euler),
        SGMCMC_SPLITTING => Ok(Integrator::Splitting),
        _ => Err(SGMCMC_ERR_BAD_INTEGRATOR),
    }
}

// ------------------------------------------------------------------------------------------
// Generator
// ------------------------------------------------------------------------------------------

/// `sgmcmc_rng`: the state of a xoroshiro128++ generator (Blackman & Vigna 2019), two 64-bit
/// words, owned by the caller.
///
/// Seed it with [`sgmcmc_rng_seed`] (SplitMix64 of a 64-bit seed), or copy a saved state. The
/// all-zero state is the generator's fixed point; the step functions reject it
/// ([`SGMCMC_ERR_RNG_UNSEEDED`]). `next_u64` is the xoroshiro128++ output; `next_u32` is its upper
/// 32 bits (one full generator step), which is all the `f32` samplers draw.
#[repr(C)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SgmcmcRng {
    /// First state word.
    pub s0: u64,
    /// Second state word.
    pub s1: u64,
}

/// One SplitMix64 step (Steele, Lea & Flood 2014; Vigna's `splitmix64.c`).
fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl SgmcmcRng {
    /// The state `sgmcmc_rng_seed` sets: two successive SplitMix64 outputs from `seed`. SplitMix64
    /// is a bijection of its (distinct) successive states, so the two words are never both 0.
    pub fn from_seed(seed: u64) -> Self {
        let mut x = seed;
        let s0 = splitmix64(&mut x);
        let s1 = splitmix64(&mut x);
        SgmcmcRng { s0, s1 }
    }

    /// The next xoroshiro128++ output.
    pub fn next_word(&mut self) -> u64 {
        let (s0, mut s1) = (self.s0, self.s1);
        let result = s0.wrapping_add(s1).rotate_left(17).wrapping_add(s0);
        s1 ^= s0;
        self.s0 = s0.rotate_left(49) ^ s1 ^ (s1 << 21);
        self.s1 = s1.rotate_left(28);
        result
    }

    fn is_zero(&self) -> bool {
        self.s0 == 0 && self.s1 == 0
    }
}

/// rand_core 0.10's generator trait (`Rng` is implemented for every infallible `TryRng`).
impl TryRng for SgmcmcRng {
    type Error = Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok((self.next_word() >> 32) as u32)
    }

    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        Ok(self.next_word())
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        for chunk in dst.chunks_mut(8) {
            for (d, s) in chunk.iter_mut().zip(self.next_word().to_le_bytes()) {
                *d = s;
            }
        }
        Ok(())
    }
}

/// `void sgmcmc_rng_seed(sgmcmc_rng* rng, uint64_t seed)`: sets the state from a 64-bit seed
/// (see [`SgmcmcRng::from_seed`]). A null `rng` is ignored.
///
/// # Safety
///
/// `rng` is null or points to a valid, writable `sgmcmc_rng`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sgmcmc_rng_seed(rng: *mut SgmcmcRng, seed: u64) {
    if rng.is_null() || !rng.is_aligned() {
        return;
    }
    // SAFETY: non-null and aligned (checked); the caller guarantees it points to a writable
    // `sgmcmc_rng` that nothing else accesses during the call.
    let rng = unsafe { &mut *rng };
    *rng = SgmcmcRng::from_seed(seed);
}

/// `uint64_t sgmcmc_rng_next_u64(sgmcmc_rng* rng)`: the next 64-bit output (for the caller's own
/// draws, e.g. minibatch indices). Returns 0 and does nothing for a null `rng`.
///
/// # Safety
///
/// `rng` is null or points to a valid, writable `sgmcmc_rng`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sgmcmc_rng_next_u64(rng: *mut SgmcmcRng) -> u64 {
    if rng.is_null() || !rng.is_aligned() {
        return 0;
    }
    // SAFETY: non-null and aligned (checked); the caller guarantees it points to a writable
    // `sgmcmc_rng` that nothing else accesses during the call.
    let rng = unsafe { &mut *rng };
    rng.next_word()
}

// ------------------------------------------------------------------------------------------
// Callbacks, statistics, parameters
// ------------------------------------------------------------------------------------------

/// `sgmcmc_gradient_f32`: writes ∇Ũ(θ) for `theta[0..n]` into `grad[0..n]`; `ctx` is passed
/// through unchanged. A null function pointer is [`SGMCMC_ERR_NULL`].
pub type GradientF32 = Option<extern "C" fn(*const f32, *mut f32, usize, *mut c_void)>;
/// `sgmcmc_gradient_f64`: the `double` twin of [`GradientF32`].
pub type GradientF64 = Option<extern "C" fn(*const f64, *mut f64, usize, *mut c_void)>;

/// `sgmcmc_stats`: what a step function reports about its call (optional out-parameter).
///
/// Written at the start of every call that gets past the null-pointer check (NaN, NaN, 0) and
/// after every completed step, so after an error it describes the last completed step.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SgmcmcStats {
    /// The last step's kinetic temperature (pᵀp/n; SGMGT: (1/n)Σ pᵢ∂K/∂pᵢ), NaN for SGLD or
    /// when no step completed.
    pub kinetic_temperature: f64,
    /// The last step's thermostat: ξ (SGNHT) or the mean of the ξᵢ (mSGNHT, SGMGT, before any
    /// resampling of that step); NaN for SGLD and SGHMC or when no step completed.
    pub thermostat: f64,
    /// The number of steps completed in this call.
    pub steps: u64,
}

const NO_STATS: SgmcmcStats = SgmcmcStats {
    kinetic_temperature: f64::NAN,
    thermostat: f64::NAN,
    steps: 0,
};

macro_rules! sgmgt_params {
    ($name:ident, $t:ty, $c:literal) => {
        #[doc = concat!("`", $c, "`: the parameters of SGMGT / SGMGT-D with the softened monomial-gamma")]
        /// kinetics K_c of Zhang et al. 2017, eq. 12 (`MonomialGamma::softened(a, c)`), passed
        /// by value.
        #[repr(C)]
        #[derive(Debug, Clone, Copy, PartialEq)]
        pub struct $name {
            /// Step size h > 0.
            pub h: $t,
            /// Diffusion on the momentum σ_p ≥ 0 (the paper's default is 1).
            pub sigma_p: $t,
            /// Friction rescaling γ ≥ 0 (default 1; 0 freezes ξ).
            pub gamma: $t,
            /// First-order Langevin diffusion on θ, σ_θ ≥ 0 (0 for SGMGT, > 0 for SGMGT-D).
            pub sigma_theta: $t,
            /// First-order Langevin diffusion on ξ, σ_ξ ≥ 0 (0 for SGMGT, > 0 for SGMGT-D).
            pub sigma_xi: $t,
            /// Monomial exponent a: 1 or 2.
            pub a: $t,
            /// Softening c > 0.
            pub c: $t,
            /// Resample p from exp(−K) every T_p steps of the chain (0 = never; default 100).
            pub resample_momentum: u32,
            /// Resample ξ from exp(−ξ²/2) every T_ξ steps of the chain (0 = never; default 100).
            pub resample_thermostat: u32,
            /// 0 Euler, 1 splitting.
            pub integrator: i32,
            /// Gradient-noise estimate B̂ ≥ 0 for the first-order term on θ, in SGHMC's units
            /// (`SgmgtParams::with_noise_estimate`; 2σ_θB̂ < 1); 0 keeps 001 eq. 13 as printed.
            pub noise_estimate: $t,
        }
    };
}
sgmgt_params!(SgmgtParamsF32, f32, "sgmcmc_sgmgt_params_f32");
sgmgt_params!(SgmgtParamsF64, f64, "sgmcmc_sgmgt_params_f64");

// ------------------------------------------------------------------------------------------
// Pointer checks and conversions
// ------------------------------------------------------------------------------------------

/// A caller buffer: its pointer and the number of `T` it must hold.
#[derive(Clone, Copy)]
struct Buf<T> {
    ptr: *mut T,
    len: usize,
}

impl<T> Buf<T> {
    fn new(ptr: *mut T, len: usize) -> Self {
        Buf { ptr, len }
    }
    fn byte_range(&self) -> (usize, usize) {
        let start = self.ptr as usize;
        // `len · size_of::<T>()` was checked to be ≤ isize::MAX; the sum cannot wrap for a
        // valid allocation, and saturating keeps the comparison meaningful otherwise.
        (
            start,
            start.saturating_add(self.len.saturating_mul(size_of::<T>())),
        )
    }
}

/// Null or misaligned pointers, zero or oversized lengths, overlaps: the checks that must pass
/// before any of `bufs` becomes a slice. `extra` are further (pointer, byte size) regions that
/// must not overlap the buffers (the generator, the scalar thermostat, the step counter).
fn check_buffers<T>(n: usize, bufs: &[Buf<T>], extra: &[(usize, usize)]) -> Result<(), i32> {
    if bufs.iter().any(|b| b.ptr.is_null() || !b.ptr.is_aligned()) {
        return Err(SGMCMC_ERR_NULL);
    }
    if n == 0 {
        return Err(SGMCMC_ERR_LENGTH);
    }
    let max = isize::MAX as usize / size_of::<T>().max(1);
    if bufs.iter().any(|b| b.len > max) {
        return Err(SGMCMC_ERR_LENGTH);
    }
    let overlaps = |a: (usize, usize), b: (usize, usize)| a.0 < b.1 && b.0 < a.1;
    for (i, a) in bufs.iter().enumerate() {
        let ra = a.byte_range();
        if bufs
            .iter()
            .skip(i + 1)
            .any(|b| overlaps(ra, b.byte_range()))
        {
            return Err(SGMCMC_ERR_OVERLAP);
        }
        if extra.iter().any(|&(p, size)| overlaps(ra, (p, p + size))) {
            return Err(SGMCMC_ERR_OVERLAP);
        }
    }
    Ok(())
}

fn region<U>(ptr: *const U) -> (usize, usize) {
    (ptr as usize, size_of::<U>())
}

/// Turns a checked buffer into a slice.
///
/// # Safety
///
/// `b` passed [`check_buffers`] (non-null, aligned, `len · size_of::<T>() ≤ isize::MAX`, no
/// overlap with the other buffers of the call), and the caller of the entry point guarantees
/// that it points to `len` initialised, writable `T` that nothing else accesses during the call.
unsafe fn slice<'a, T>(b: Buf<T>) -> &'a mut [T] {
    // SAFETY: the function's contract: non-null, aligned, within isize::MAX bytes (checked by
    // `check_buffers`); `len` valid, initialised, exclusively ours for the call (caller
    // contract of every `sgmcmc_*` step function); disjoint from every other slice formed in
    // the same call (checked), so the `&mut` slices do not alias.
    unsafe { core::slice::from_raw_parts_mut(b.ptr, b.len) }
}

/// The generator behind a checked, non-null pointer.
///
/// # Safety
///
/// `rng` is non-null and aligned (checked by the caller of this function) and, by the entry
/// point's contract, points to a valid `sgmcmc_rng` not accessed elsewhere during the call.
unsafe fn rng_mut<'a>(rng: *mut SgmcmcRng) -> &'a mut SgmcmcRng {
    // SAFETY: see the function's contract; overlap with the buffers was checked.
    unsafe { &mut *rng }
}

/// Writes `s` to `stats` if it is non-null.
///
/// # Safety
///
/// `stats` is null or (checked: aligned) points to a writable `sgmcmc_stats` not accessed
/// elsewhere during the call.
unsafe fn write_stats(stats: *mut SgmcmcStats, s: SgmcmcStats) {
    if !stats.is_null() && stats.is_aligned() {
        // SAFETY: non-null and aligned (checked); writable and unaliased by the entry point's
        // contract. `write` does not read the (possibly uninitialised) old value.
        unsafe { stats.write(s) };
    }
}

fn check_rng(rng: *mut SgmcmcRng, stats: *mut SgmcmcStats) -> Result<(), i32> {
    if rng.is_null() || !rng.is_aligned() || (!stats.is_null() && !stats.is_aligned()) {
        return Err(SGMCMC_ERR_NULL);
    }
    Ok(())
}

// ------------------------------------------------------------------------------------------
// The step loop
// ------------------------------------------------------------------------------------------

/// Runs `steps` steps, recording each completed step's statistics in `out`; `after` runs after
/// every completed step (SGMGT's resampling).
fn run<T: Real, S, G>(
    sampler: &mut S,
    model: &mut G,
    steps: u64,
    rng: &mut SgmcmcRng,
    out: &mut SgmcmcStats,
    mut after: impl FnMut(&mut S, &mut SgmcmcRng),
) -> Result<(), i32>
where
    S: Sampler<T, G>,
    G: ?Sized,
{
    for _ in 0..steps {
        let st: StepStats<T> = sampler.step(model, rng).map_err(step_code)?;
        out.steps += 1;
        out.kinetic_temperature = st.kinetic_temperature.map_or(f64::NAN, Real::to_f64);
        out.thermostat = st.thermostat.map_or(f64::NAN, Real::to_f64);
        after(sampler, rng);
    }
    Ok(())
}

fn status(r: Result<(), i32>) -> i32 {
    match r {
        Ok(()) => SGMCMC_OK,
        Err(code) => code,
    }
}

type Callback<T> = extern "C" fn(*const T, *mut T, usize, *mut c_void);

fn model<T>(f: Callback<T>, ctx: *mut c_void) -> impl FnMut(&[T], &mut [T]) {
    move |theta: &[T], grad: &mut [T]| f(theta.as_ptr(), grad.as_mut_ptr(), theta.len(), ctx)
}

// The generic bodies. Each validates in this order: pointers (null / misaligned), n, overlaps,
// parameters, the generator, then builds the sampler (which checks the state is finite).

/// # Safety
///
/// The contract of the `sgmcmc_sgld_*` entry points.
unsafe fn sgld<T: Real>(
    h: T,
    f: Option<Callback<T>>,
    ctx: *mut c_void,
    theta: *mut T,
    grad: *mut T,
    scratch: *mut T,
    n: usize,
    steps: u64,
    rng: *mut SgmcmcRng,
    stats: *mut SgmcmcStats,
) -> Result<(), i32> {
    check_rng(rng, stats)?;
    // SAFETY: `stats` is null or aligned (checked); writable by the caller contract.
    unsafe { write_stats(stats, NO_STATS) };
    let f = f.ok_or(SGMCMC_ERR_NULL)?;
    let bufs = [Buf::new(theta, n), Buf::new(grad, n), Buf::new(scratch, n)];
    check_buffers(n, &bufs, &[region(rng), region(stats)])?;
    let params = SgldParams::new(h).map_err(param_code)?;
    // SAFETY: non-null and aligned (checked by `check_rng`), disjoint from the buffers.
    let rng = unsafe { rng_mut(rng) };
    if rng.is_zero() {
        return Err(SGMCMC_ERR_RNG_UNSEEDED);
    }
    let [theta, grad, scratch] = bufs;
    // SAFETY: all three passed `check_buffers`; the caller contract covers the rest.
    let (theta, grad, scratch) = unsafe { (slice(theta), slice(grad), slice(scratch)) };
    let mut sampler =
        Sgld::new(params, theta, Workspace::new(grad, scratch)).map_err(layout_code)?;
    let mut out = NO_STATS;
    let r = run(
        &mut sampler,
        &mut model(f, ctx),
        steps,
        rng,
        &mut out,
        |_, _| {},
    );
    // SAFETY: as above.
    unsafe { write_stats(stats, out) };
    r
}

/// # Safety
///
/// The contract of the `sgmcmc_sghmc_*` entry points.
unsafe fn sghmc<T: Real>(
    h: T,
    friction: T,
    noise_estimate: T,
    integ: i32,
    f: Option<Callback<T>>,
    ctx: *mut c_void,
    theta: *mut T,
    p: *mut T,
    grad: *mut T,
    scratch: *mut T,
    n: usize,
    steps: u64,
    rng: *mut SgmcmcRng,
    stats: *mut SgmcmcStats,
) -> Result<(), i32> {
    check_rng(rng, stats)?;
    // SAFETY: `stats` is null or aligned (checked); writable by the caller contract.
    unsafe { write_stats(stats, NO_STATS) };
    let f = f.ok_or(SGMCMC_ERR_NULL)?;
    let bufs = [
        Buf::new(theta, n),
        Buf::new(p, n),
        Buf::new(grad, n),
        Buf::new(scratch, n),
    ];
    check_buffers(n, &bufs, &[region(rng), region(stats)])?;
    let params =
        SghmcParams::with_noise_estimate(h, friction, noise_estimate).map_err(param_code)?;
    let integ = integrator(integ)?;
    // SAFETY: non-null and aligned (checked by `check_rng`), disjoint from the buffers.
    let rng = unsafe { rng_mut(rng) };
    if rng.is_zero() {
        return Err(SGMCMC_ERR_RNG_UNSEEDED);
    }
    let [theta, p, grad, scratch] = bufs;
    // SAFETY: all four passed `check_buffers`; the caller contract covers the rest.
    let (theta, p, grad, scratch) =
        unsafe { (slice(theta), slice(p), slice(grad), slice(scratch)) };
    let mut sampler =
        Sghmc::new(params, integ, theta, p, Workspace::new(grad, scratch)).map_err(layout_code)?;
    let mut out = NO_STATS;
    let r = run(
        &mut sampler,
        &mut model(f, ctx),
        steps,
        rng,
        &mut out,
        |_, _| {},
    );
    // SAFETY: as above.
    unsafe { write_stats(stats, out) };
    r
}

/// # Safety
///
/// The contract of the `sgmcmc_sgnht_*` entry points.
unsafe fn sgnht<T: Real>(
    h: T,
    diffusion: T,
    integ: i32,
    f: Option<Callback<T>>,
    ctx: *mut c_void,
    theta: *mut T,
    p: *mut T,
    xi: *mut T,
    grad: *mut T,
    scratch: *mut T,
    n: usize,
    steps: u64,
    rng: *mut SgmcmcRng,
    stats: *mut SgmcmcStats,
) -> Result<(), i32> {
    check_rng(rng, stats)?;
    if xi.is_null() || !xi.is_aligned() {
        return Err(SGMCMC_ERR_NULL);
    }
    // SAFETY: `stats` is null or aligned (checked); writable by the caller contract.
    unsafe { write_stats(stats, NO_STATS) };
    let f = f.ok_or(SGMCMC_ERR_NULL)?;
    let bufs = [
        Buf::new(theta, n),
        Buf::new(p, n),
        Buf::new(grad, n),
        Buf::new(scratch, n),
    ];
    check_buffers(n, &bufs, &[region(rng), region(stats), region(xi)])?;
    if region(xi).0 < region(rng).0 + region(rng).1 && region(rng).0 < region(xi).0 + region(xi).1 {
        return Err(SGMCMC_ERR_OVERLAP);
    }
    let params = SgnhtParams::new(h, diffusion).map_err(param_code)?;
    let integ = integrator(integ)?;
    // SAFETY: non-null and aligned (checked by `check_rng`), disjoint from the buffers.
    let rng = unsafe { rng_mut(rng) };
    if rng.is_zero() {
        return Err(SGMCMC_ERR_RNG_UNSEEDED);
    }
    // SAFETY: `xi` is non-null, aligned and disjoint from the other buffers and the generator
    // (checked); the caller guarantees it points to one initialised, writable `T`.
    let xi = unsafe { &mut slice(Buf::new(xi, 1))[..] };
    let Some(xi0) = xi.first().copied().filter(|x| x.is_finite()) else {
        return Err(SGMCMC_ERR_NON_FINITE_INPUT);
    };
    let [theta, p, grad, scratch] = bufs;
    // SAFETY: all four passed `check_buffers`; the caller contract covers the rest.
    let (theta, p, grad, scratch) =
        unsafe { (slice(theta), slice(p), slice(grad), slice(scratch)) };
    let mut sampler =
        Sgnht::new(params, integ, theta, p, Workspace::new(grad, scratch)).map_err(layout_code)?;
    sampler.set_thermostat(xi0);
    let mut out = NO_STATS;
    let r = run(
        &mut sampler,
        &mut model(f, ctx),
        steps,
        rng,
        &mut out,
        |_, _| {},
    );
    // ξ persists in the caller's variable, also after an error (then it is the state the error
    // describes: unchanged for a non-finite gradient, as computed for a non-finite state).
    for x in xi.iter_mut() {
        *x = sampler.thermostat();
    }
    // SAFETY: as above.
    unsafe { write_stats(stats, out) };
    r
}

/// # Safety
///
/// The contract of the `sgmcmc_msgnht_*` entry points.
unsafe fn msgnht<T: Real>(
    h: T,
    diffusion: T,
    integ: i32,
    f: Option<Callback<T>>,
    ctx: *mut c_void,
    theta: *mut T,
    p: *mut T,
    xi: *mut T,
    grad: *mut T,
    scratch: *mut T,
    n: usize,
    steps: u64,
    rng: *mut SgmcmcRng,
    stats: *mut SgmcmcStats,
) -> Result<(), i32> {
    check_rng(rng, stats)?;
    // SAFETY: `stats` is null or aligned (checked); writable by the caller contract.
    unsafe { write_stats(stats, NO_STATS) };
    let f = f.ok_or(SGMCMC_ERR_NULL)?;
    let bufs = [
        Buf::new(theta, n),
        Buf::new(p, n),
        Buf::new(xi, n),
        Buf::new(grad, n),
        Buf::new(scratch, n),
    ];
    check_buffers(n, &bufs, &[region(rng), region(stats)])?;
    let params = SgnhtParams::new(h, diffusion).map_err(param_code)?;
    let integ = integrator(integ)?;
    // SAFETY: non-null and aligned (checked by `check_rng`), disjoint from the buffers.
    let rng = unsafe { rng_mut(rng) };
    if rng.is_zero() {
        return Err(SGMCMC_ERR_RNG_UNSEEDED);
    }
    let [theta, p, xi, grad, scratch] = bufs;
    // SAFETY: all five passed `check_buffers`; the caller contract covers the rest.
    let (theta, p, xi, grad, scratch) = unsafe {
        (
            slice(theta),
            slice(p),
            slice(xi),
            slice(grad),
            slice(scratch),
        )
    };
    if xi.iter().any(|x| !x.is_finite()) {
        return Err(SGMCMC_ERR_NON_FINITE_INPUT);
    }
    // `MSgnht::resume` keeps the caller's ξ, so the chain continues from it.
    let mut sampler = MSgnht::resume(params, integ, theta, p, xi, Workspace::new(grad, scratch))
        .map_err(layout_code)?;
    let mut out = NO_STATS;
    let r = run(
        &mut sampler,
        &mut model(f, ctx),
        steps,
        rng,
        &mut out,
        |_, _| {},
    );
    // SAFETY: as above.
    unsafe { write_stats(stats, out) };
    r
}

/// The fields of an `sgmcmc_sgmgt_params_*`, generic.
struct SgmgtArgs<T> {
    h: T,
    sigma_p: T,
    gamma: T,
    sigma_theta: T,
    sigma_xi: T,
    a: T,
    c: T,
    resample_momentum: u32,
    resample_thermostat: u32,
    integrator: i32,
    noise_estimate: T,
}

macro_rules! sgmgt_args {
    ($p:expr) => {
        SgmgtArgs {
            h: $p.h,
            sigma_p: $p.sigma_p,
            gamma: $p.gamma,
            sigma_theta: $p.sigma_theta,
            sigma_xi: $p.sigma_xi,
            a: $p.a,
            c: $p.c,
            resample_momentum: $p.resample_momentum,
            resample_thermostat: $p.resample_thermostat,
            integrator: $p.integrator,
            noise_estimate: $p.noise_estimate,
        }
    };
}

/// # Safety
///
/// The contract of the `sgmcmc_sgmgt_*` entry points.
/// `noise`: `None` for the scalar B̂ of `args`, or the caller's pointer to `n` per-coordinate
/// estimates (null is refused with the other pointer checks).
unsafe fn sgmgt<T: Real>(
    args: SgmgtArgs<T>,
    noise: Option<*const T>,
    f: Option<Callback<T>>,
    ctx: *mut c_void,
    theta: *mut T,
    p: *mut T,
    xi: *mut T,
    grad: *mut T,
    scratch: *mut T,
    n: usize,
    steps: u64,
    step_count: *mut u64,
    rng: *mut SgmcmcRng,
    stats: *mut SgmcmcStats,
) -> Result<(), i32> {
    check_rng(rng, stats)?;
    if !step_count.is_null() && !step_count.is_aligned() {
        return Err(SGMCMC_ERR_NULL);
    }
    // SAFETY: `stats` is null or aligned (checked); writable by the caller contract.
    unsafe { write_stats(stats, NO_STATS) };
    let f = f.ok_or(SGMCMC_ERR_NULL)?;
    let bufs = [
        Buf::new(theta, n),
        Buf::new(p, n),
        Buf::new(xi, n),
        Buf::new(grad, n),
        Buf::new(scratch, n),
    ];
    if noise.is_some_and(|b| b.is_null()) {
        return Err(SGMCMC_ERR_NULL);
    }
    let noise = noise.unwrap_or(core::ptr::null());
    // The optional estimates are only read, but must not overlap anything this call writes:
    // the five buffers (as an extra region of `check_buffers`), the generator, the stats and
    // the step counter.
    let noise_region = if noise.is_null() {
        (0, 0)
    } else {
        if !noise.is_aligned() {
            return Err(SGMCMC_ERR_NULL);
        }
        // (n · size_of::<T>() ≤ isize::MAX is checked for every buffer by `check_buffers`.)
        (noise as usize, n.saturating_mul(size_of::<T>()))
    };
    let written = [region(rng), region(stats), region(step_count)];
    let mut extra = [(0, 0); 4];
    extra[..3].copy_from_slice(&written);
    extra[3] = noise_region;
    check_buffers(n, &bufs, &extra)?;
    let (start, size) = noise_region;
    if size > 0
        && written
            .iter()
            .any(|&(p, len)| start < p.saturating_add(len) && p < start.saturating_add(size))
    {
        return Err(SGMCMC_ERR_OVERLAP);
    }
    // Resampling is driven here from the caller's step counter (the sampler's own counter would
    // restart at 0 in every call), so the sampler is built with it switched off.
    let params = SgmgtParams::new(args.h)
        .and_then(|q| q.with_sigma_p(args.sigma_p))
        .and_then(|q| q.with_gamma(args.gamma))
        .and_then(|q| q.with_sigma_theta(args.sigma_theta))
        .and_then(|q| q.with_sigma_xi(args.sigma_xi))
        .and_then(|q| q.with_noise_estimate(args.noise_estimate))
        .map_err(param_code)?
        .with_resampling(0, 0);
    let kinetic = MonomialGamma::softened(args.a, args.c).map_err(param_code)?;
    let params = params.with_integrator(integrator(args.integrator)?);
    // SAFETY: non-null and aligned (checked by `check_rng`), disjoint from the buffers.
    let rng = unsafe { rng_mut(rng) };
    if rng.is_zero() {
        return Err(SGMCMC_ERR_RNG_UNSEEDED);
    }
    let mut counter_storage = 0u64;
    let counter: &mut u64 = if step_count.is_null() {
        &mut counter_storage
    } else {
        // SAFETY: non-null and aligned (checked), disjoint from the buffers and the generator
        // (checked); the caller guarantees a valid, writable `uint64_t`.
        unsafe { &mut *step_count }
    };
    let [theta, p, xi, grad, scratch] = bufs;
    // SAFETY: all five passed `check_buffers`; the caller contract covers the rest.
    let (theta, p, xi, grad, scratch) = unsafe {
        (
            slice(theta),
            slice(p),
            slice(xi),
            slice(grad),
            slice(scratch),
        )
    };
    let mut sampler = Sgmgt::new(params, kinetic, theta, p, xi, Workspace::new(grad, scratch))
        .map_err(layout_code)?;
    if !noise.is_null() {
        // SAFETY: non-null, aligned, n · size_of::<T>() ≤ isize::MAX (checked above), disjoint
        // from every buffer this call writes (checked); the caller guarantees n initialised
        // values that nothing writes during the call. Only read.
        let estimates = unsafe { core::slice::from_raw_parts(noise, n) };
        sampler
            .set_noise_estimates(estimates)
            .map_err(layout_code)?;
    }
    let (tp, tx) = (args.resample_momentum, args.resample_thermostat);
    let mut out = NO_STATS;
    // As `Sgmgt::step` does with its own counter: after the step's statistics, p then ξ.
    let r = run(
        &mut sampler,
        &mut model(f, ctx),
        steps,
        rng,
        &mut out,
        |s, rng| {
            *counter = counter.wrapping_add(1);
            if tp != 0 && counter.is_multiple_of(u64::from(tp)) {
                s.resample_momentum(rng);
            }
            if tx != 0 && counter.is_multiple_of(u64::from(tx)) {
                s.resample_thermostat(rng);
            }
        },
    );
    // SAFETY: as above.
    unsafe { write_stats(stats, out) };
    r
}

// ------------------------------------------------------------------------------------------
// Entry points
// ------------------------------------------------------------------------------------------

macro_rules! entry_points {
    ($t:ty, $cb:ty, $params:ty, $sgld:ident, $sghmc:ident, $sgnht:ident, $msgnht:ident, $sgmgt:ident, $sgmgt_noise:ident) => {
        /// SGLD with a constant step h: `steps` steps of θ ← θ − h∇Ũ(θ) + √(2h)ζ.
        ///
        /// Buffers (each `n` values, distinct and non-overlapping): `theta` (in/out, finite),
        /// `grad` and `scratch` (workspace; contents ignored). `stats` may be null. Returns
        /// [`SGMCMC_OK`] or an `SGMCMC_ERR_*` code (see the header for the order of checks).
        ///
        /// # Safety
        ///
        /// Every non-null pointer points to initialised, writable memory of its documented
        /// length that nothing else accesses during the call; `grad_fn` is safe to call with
        /// pointers to `n` values and `ctx`.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $sgld(
            h: $t,
            grad_fn: $cb,
            ctx: *mut c_void,
            theta: *mut $t,
            grad: *mut $t,
            scratch: *mut $t,
            n: usize,
            steps: u64,
            rng: *mut SgmcmcRng,
            stats: *mut SgmcmcStats,
        ) -> i32 {
            // SAFETY: the caller's contract is this function's.
            status(unsafe { sgld(h, grad_fn, ctx, theta, grad, scratch, n, steps, rng, stats) })
        }

        /// SGHMC with friction A ≥ 0 and noise estimate 0 ≤ B̂ ≤ A.
        ///
        /// Buffers (each `n` values): `theta`, `p` (in/out, finite), `grad`, `scratch`.
        /// `integrator`: 0 Euler, 1 splitting.
        ///
        /// # Safety
        ///
        /// As for the SGLD entry point.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $sghmc(
            h: $t,
            friction: $t,
            noise_estimate: $t,
            integrator: i32,
            grad_fn: $cb,
            ctx: *mut c_void,
            theta: *mut $t,
            p: *mut $t,
            grad: *mut $t,
            scratch: *mut $t,
            n: usize,
            steps: u64,
            rng: *mut SgmcmcRng,
            stats: *mut SgmcmcStats,
        ) -> i32 {
            // SAFETY: the caller's contract is this function's.
            status(unsafe {
                sghmc(
                    h,
                    friction,
                    noise_estimate,
                    integrator,
                    grad_fn,
                    ctx,
                    theta,
                    p,
                    grad,
                    scratch,
                    n,
                    steps,
                    rng,
                    stats,
                )
            })
        }

        /// SGNHT (one scalar thermostat ξ) with diffusion A ≥ 0.
        ///
        /// Buffers: `theta`, `p`, `grad`, `scratch` (each `n` values); `xi` points to ONE value
        /// (in/out, finite), the thermostat, which persists between calls (Ding et al. start it
        /// at ξ₀ = A).
        ///
        /// # Safety
        ///
        /// As for the SGLD entry point.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $sgnht(
            h: $t,
            diffusion: $t,
            integrator: i32,
            grad_fn: $cb,
            ctx: *mut c_void,
            theta: *mut $t,
            p: *mut $t,
            xi: *mut $t,
            grad: *mut $t,
            scratch: *mut $t,
            n: usize,
            steps: u64,
            rng: *mut SgmcmcRng,
            stats: *mut SgmcmcStats,
        ) -> i32 {
            // SAFETY: the caller's contract is this function's.
            status(unsafe {
                sgnht(
                    h, diffusion, integrator, grad_fn, ctx, theta, p, xi, grad, scratch, n, steps,
                    rng, stats,
                )
            })
        }

        /// mSGNHT (one thermostat per coordinate) with diffusion D ≥ 0.
        ///
        /// Buffers: `theta`, `p`, `xi` (in/out, finite; start ξᵢ = D), `grad` (each `n` values)
        /// and `scratch` (each `n` values).
        ///
        /// # Safety
        ///
        /// As for the SGLD entry point.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $msgnht(
            h: $t,
            diffusion: $t,
            integrator: i32,
            grad_fn: $cb,
            ctx: *mut c_void,
            theta: *mut $t,
            p: *mut $t,
            xi: *mut $t,
            grad: *mut $t,
            scratch: *mut $t,
            n: usize,
            steps: u64,
            rng: *mut SgmcmcRng,
            stats: *mut SgmcmcStats,
        ) -> i32 {
            // SAFETY: the caller's contract is this function's.
            status(unsafe {
                msgnht(
                    h, diffusion, integrator, grad_fn, ctx, theta, p, xi, grad, scratch, n, steps,
                    rng, stats,
                )
            })
        }

        /// SGMGT / SGMGT-D with the softened monomial-gamma kinetics K_c (eq. 12, a ∈ {1, 2}).
        ///
        /// Buffers (each `n` values): `theta`, `p`, `xi` (in/out, finite; ξ = 0 is the natural
        /// start), `grad`, `scratch`. `step_count` (may be null = 0 at every call) is the
        /// chain's step counter: read at the start, incremented after every completed step; p
        /// (ξ) is resampled after the steps at which it becomes a multiple of T_p (T_ξ).
        ///
        /// # Safety
        ///
        /// As for the SGLD entry point; `step_count` is null or points to a writable `uint64_t`.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $sgmgt(
            params: $params,
            grad_fn: $cb,
            ctx: *mut c_void,
            theta: *mut $t,
            p: *mut $t,
            xi: *mut $t,
            grad: *mut $t,
            scratch: *mut $t,
            n: usize,
            steps: u64,
            step_count: *mut u64,
            rng: *mut SgmcmcRng,
            stats: *mut SgmcmcStats,
        ) -> i32 {
            // SAFETY: the caller's contract is this function's.
            status(unsafe {
                sgmgt(
                    sgmgt_args!(params),
                    None,
                    grad_fn,
                    ctx,
                    theta,
                    p,
                    xi,
                    grad,
                    scratch,
                    n,
                    steps,
                    step_count,
                    rng,
                    stats,
                )
            })
        }

        /// As the SGMGT entry point, with per-coordinate gradient-noise estimates for the θ term
        /// (`Sgmgt::set_noise_estimates`): `noise_estimates` holds `n` values B̂ᵢ ≥ 0 with
        /// 2σ_θB̂ᵢ < 1, used in place of `params.noise_estimate`; it is only read, and must not
        /// overlap any other argument. Checked after the initial state: a bad value returns
        /// `SGMCMC_ERR_BAD_NOISE_ESTIMATE` before any step.
        ///
        /// # Safety
        ///
        /// As for the SGMGT entry point; `noise_estimates` points to `n` initialised values that
        /// nothing writes during the call.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $sgmgt_noise(
            params: $params,
            noise_estimates: *const $t,
            grad_fn: $cb,
            ctx: *mut c_void,
            theta: *mut $t,
            p: *mut $t,
            xi: *mut $t,
            grad: *mut $t,
            scratch: *mut $t,
            n: usize,
            steps: u64,
            step_count: *mut u64,
            rng: *mut SgmcmcRng,
            stats: *mut SgmcmcStats,
        ) -> i32 {
            // SAFETY: the caller's contract is this function's.
            status(unsafe {
                sgmgt(
                    sgmgt_args!(params),
                    Some(noise_estimates),
                    grad_fn,
                    ctx,
                    theta,
                    p,
                    xi,
                    grad,
                    scratch,
                    n,
                    steps,
                    step_count,
                    rng,
                    stats,
                )
            })
        }
    };
}

entry_points!(
    f32,
    GradientF32,
    SgmgtParamsF32,
    sgmcmc_sgld_f32,
    sgmcmc_sghmc_f32,
    sgmcmc_sgnht_f32,
    sgmcmc_msgnht_f32,
    sgmcmc_sgmgt_f32,
    sgmcmc_sgmgt_noise_estimates_f32
);
entry_points!(
    f64,
    GradientF64,
    SgmgtParamsF64,
    sgmcmc_sgld_f64,
    sgmcmc_sghmc_f64,
    sgmcmc_sgnht_f64,
    sgmcmc_msgnht_f64,
    sgmcmc_sgmgt_f64,
    sgmcmc_sgmgt_noise_estimates_f64
);
