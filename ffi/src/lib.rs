//! A C ABI for the `sgmcmc` samplers: SGLD, SGHMC, SGNHT, mSGNHT and SGMGT (softened
//! monomial-gamma kinetics; also with per-coordinate noise estimates), each for `f32` and `f64`.
//!
//! The header `include/sgmcmc.h` declares everything here for C99 and C++; `README.md` beside
//! it describes the conventions. In short:
//!
//! * **The caller owns all memory.** Every function takes the chain's state (θ, p, ξ) and one
//!   workspace (2n values, 3n for mSGNHT and SGMGT) as caller pointers of documented lengths, builds the sampler over
//!   them, runs `steps` steps and returns. Nothing is allocated and nothing is kept between
//!   calls: the chain's state lives entirely in the caller's buffers, the generator
//!   ([`SgmcmcRng`]) and, for SGMGT, the caller's step counter.
//! * **Status codes, never panics.** Every function returns [`SGMCMC_OK`] or a negative
//!   `SGMCMC_ERR_*` code. Every pointer argument (null, misaligned, pairwise overlapping) and
//!   the lengths are checked by one function, `Call::prepare`, before anything is read or
//!   written; then the parameters, before any state is touched.
//! * **The gradient** is a C callback `void f(const T* theta, T* grad, size_t n, void* ctx)`.
//! * **The temperature** T ≥ 0 of the tempered posterior e^{−U/T} (`docs/temperature.md`) is a
//!   parameter of every sampler: the argument right after `h`, and the last field of the SGMGT
//!   parameter structs. T = 1 is the untempered chain, bit for bit.
//!
//! `unsafe` appears only where the checked caller pointers become references (each block
//! states the caller contract it relies on), and in the `#[unsafe(no_mangle)]` attributes that
//! export the symbols.
//!
//! # Panic runtime
//!
//! The crate is `#![no_std]` and its code uses only `core`. A staticlib still needs a panic
//! handler, although no panic is reachable from this API: with the `panic-handler` feature (and
//! `panic = "abort"`) the crate defines one (an endless loop) and the library needs neither std
//! nor libc; without it, on a hosted target, std is linked for its panic runtime only.
//!
//! # Run-time dispatch
//!
//! With the `dispatch` feature (hosted targets; the kernel's `std` feature) every step runs in
//! the widest copy of the kernel the CPU supports, which on x86-64 also changes the noise
//! streams (`README.md`, *Run-time dispatch*).
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

use core::cell::Cell;
use core::convert::Infallible;
use core::ffi::c_void;
use core::mem::MaybeUninit;
use rand_core::TryRng;
use sgmcmc::prelude::*;

// ------------------------------------------------------------------------------------------
// Status codes
// ------------------------------------------------------------------------------------------

/// Success.
pub const SGMCMC_OK: i32 = 0;
/// A required pointer is null or not aligned for its type.
pub const SGMCMC_ERR_NULL: i32 = -1;
/// `n` is 0, or a buffer of the documented length would exceed `PTRDIFF_MAX` bytes.
pub const SGMCMC_ERR_LENGTH: i32 = -2;
/// Two pointer arguments overlap (every buffer, the generator, the statistics, SGNHT's ξ and
/// SGMGT's step counter and noise estimates must be pairwise disjoint).
pub const SGMCMC_ERR_OVERLAP: i32 = -3;
/// The generator's state is all zero (not seeded with `sgmcmc_rng_seed`).
pub const SGMCMC_ERR_RNG_UNSEEDED: i32 = -4;
/// The initial state (θ, p or ξ) holds a NaN or ±∞; nothing was done.
pub const SGMCMC_ERR_NON_FINITE_INPUT: i32 = -5;
/// The gradient callback wrote a NaN or ±∞. The failing step was not taken: θ, p and ξ are
/// bit-for-bit those after the last completed step (`stats.steps` of them in this call).
pub const SGMCMC_ERR_NON_FINITE_GRADIENT: i32 = -6;
/// A step produced a NaN or ±∞ in θ, p or ξ (the chain diverged; reduce h). The step was
/// undone: the state is bit-for-bit that after the last completed step.
pub const SGMCMC_ERR_NON_FINITE_STATE: i32 = -7;
/// The step size h is not finite or not > 0.
pub const SGMCMC_ERR_BAD_STEP_SIZE: i32 = -10;
/// The friction A (SGHMC) or diffusion A / D (SGNHT, mSGNHT) is not finite or < 0.
pub const SGMCMC_ERR_BAD_FRICTION: i32 = -11;
/// SGHMC's noise estimate B̂ is not finite, < 0, or > A·T; SGMGT's B̂ (or a B̂ᵢ) not finite,
/// < 0, or with 2σ_θB̂ ≥ T (a B̂ᵢ also with 2σ_θB̂ᵢ ≥ 1), T the temperature.
pub const SGMCMC_ERR_BAD_NOISE_ESTIMATE: i32 = -12;
/// The integrator is neither 0 (Euler) nor 1 (splitting).
pub const SGMCMC_ERR_BAD_INTEGRATOR: i32 = -13;
/// SGMGT's monomial exponent a is neither 1 nor 2.
pub const SGMCMC_ERR_BAD_MONOMIAL_EXPONENT: i32 = -14;
/// SGMGT's softening c is not finite, not > 0, or (a = 1) below the smallest c whose momentum
/// draws keep their resolution (1.3e-6 in `float`, 6.4e-23 in `double`).
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
/// pSGLD's decay α is not finite or not in [0, 1).
pub const SGMCMC_ERR_BAD_DECAY: i32 = -21;
/// pSGLD's offset λ is not finite or not > 0.
pub const SGMCMC_ERR_BAD_OFFSET: i32 = -22;
/// The temperature T is not finite or < 0.
pub const SGMCMC_ERR_BAD_TEMPERATURE: i32 = -23;

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
        Param::Friction | Param::Diffusion => SGMCMC_ERR_BAD_FRICTION,
        Param::NoiseEstimate => SGMCMC_ERR_BAD_NOISE_ESTIMATE,
        Param::MonomialExponent => SGMCMC_ERR_BAD_MONOMIAL_EXPONENT,
        Param::Softening => SGMCMC_ERR_BAD_SOFTENING,
        Param::FrictionScale => SGMCMC_ERR_BAD_FRICTION_SCALE,
        Param::MomentumDiffusion => SGMCMC_ERR_BAD_MOMENTUM_DIFFUSION,
        Param::ThetaDiffusion => SGMCMC_ERR_BAD_THETA_DIFFUSION,
        Param::ThermostatDiffusion => SGMCMC_ERR_BAD_THERMOSTAT_DIFFUSION,
        Param::PreconditionerDecay => SGMCMC_ERR_BAD_DECAY,
        Param::PreconditionerOffset => SGMCMC_ERR_BAD_OFFSET,
        Param::Temperature => SGMCMC_ERR_BAD_TEMPERATURE,
        _ => SGMCMC_ERR_BAD_PARAMETER,
    }
}

/// The code of a sampler constructor's error. Its parameters were validated before, so a
/// layout error is left: the (finite) state or SGMGT's per-coordinate noise estimates.
fn build_code(e: Error) -> i32 {
    match e {
        Error::Param(e) => param_code(e),
        Error::Layout(LayoutError::Empty | LayoutError::LengthMismatch { .. }) => SGMCMC_ERR_LENGTH,
        Error::Layout(LayoutError::InvalidValue {
            buffer: Buffer::NoiseEstimates,
            ..
        }) => SGMCMC_ERR_BAD_NOISE_ESTIMATE,
        Error::Layout(_) => SGMCMC_ERR_NON_FINITE_INPUT,
        _ => SGMCMC_ERR_BAD_PARAMETER,
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

fn status(r: Result<(), i32>) -> i32 {
    match r {
        Ok(()) => SGMCMC_OK,
        Err(code) => code,
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

/// The caller's generator, shared by the sampler's steps and SGMGT's resampling between them
/// (the observer of `Sampler::run` cannot borrow the generator the run holds). Draws exactly
/// what [`SgmcmcRng`] draws.
#[derive(Clone, Copy)]
struct SharedRng<'a>(&'a Cell<SgmcmcRng>);

impl SharedRng<'_> {
    /// `f` on the generator (taken out of the cell and put back).
    fn with<R>(self, f: impl FnOnce(&mut SgmcmcRng) -> R) -> R {
        let mut rng = self.0.replace(SgmcmcRng { s0: 0, s1: 0 });
        let r = f(&mut rng);
        self.0.set(rng);
        r
    }
}

impl TryRng for SharedRng<'_> {
    type Error = Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        self.with(|rng| rng.try_next_u32())
    }

    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        self.with(|rng| rng.try_next_u64())
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        self.with(|rng| rng.try_fill_bytes(dst))
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

type Callback<T> = extern "C" fn(*const T, *mut T, usize, *mut c_void);

/// The caller's gradient callback and its context, as the core's model.
struct CModel<T> {
    f: Callback<T>,
    ctx: *mut c_void,
}

impl<T> Gradient<T> for CModel<T> {
    fn gradient(&mut self, theta: &[T], grad: &mut [T]) {
        (self.f)(theta.as_ptr(), grad.as_mut_ptr(), theta.len(), self.ctx);
    }
}

/// `sgmcmc_stats`: what a step function reports about its call (optional out-parameter).
///
/// Written only once the call's pointers, `n` and overlaps have passed their checks (a call
/// failing those writes nothing at all): set to (NaN, NaN, 0), and on return it describes the
/// last step completed in the call (also after an error).
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

/// The parameters of SGMGT / SGMGT-D with the softened monomial-gamma kinetics K_c of Zhang
/// et al. 2017, eq. 12 (`MonomialGamma::softened(a, c)`), passed by value:
/// `sgmcmc_sgmgt_params_f32` ([`SgmgtParamsF32`]) and `sgmcmc_sgmgt_params_f64`
/// ([`SgmgtParamsF64`]).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SgmcmcSgmgtParams<T> {
    /// Step size h > 0.
    pub h: T,
    /// Diffusion on the momentum σ_p ≥ 0 (the paper's default is 1).
    pub sigma_p: T,
    /// Friction rescaling γ ≥ 0 (default 1; 0 freezes ξ).
    pub gamma: T,
    /// First-order Langevin diffusion on θ, σ_θ ≥ 0 (0 for SGMGT, > 0 for SGMGT-D).
    pub sigma_theta: T,
    /// First-order Langevin diffusion on ξ, σ_ξ ≥ 0 (0 for SGMGT, > 0 for SGMGT-D).
    pub sigma_xi: T,
    /// Monomial exponent a: 1 or 2.
    pub a: T,
    /// Softening c > 0 (at a = 1 at least 1.3e-6 in `float`, 6.4e-23 in `double`).
    pub c: T,
    /// Resample p from exp(−K) every T_p steps of the chain (0 = never; default 100).
    pub resample_momentum: u32,
    /// Resample ξ from exp(−ξ²/2) every T_ξ steps of the chain (0 = never; default 100).
    pub resample_thermostat: u32,
    /// 0 Euler, 1 splitting.
    pub integrator: i32,
    /// Gradient-noise estimate B̂ ≥ 0 for the first-order term on θ, in SGHMC's units
    /// (`SgmgtParams::with_noise_estimate`; 2σ_θB̂ < T); 0 keeps eq. 13 as printed.
    pub noise_estimate: T,
    /// Temperature T ≥ 0 of the tempered posterior e^{−U/T} (`SgmgtParams::with_temperature`;
    /// 1 is the posterior itself). The last field, so that the fields before it keep their
    /// offsets.
    pub temperature: T,
}

/// `sgmcmc_sgmgt_params_f32`.
pub type SgmgtParamsF32 = SgmcmcSgmgtParams<f32>;
/// `sgmcmc_sgmgt_params_f64`.
pub type SgmgtParamsF64 = SgmcmcSgmgtParams<f64>;

// ------------------------------------------------------------------------------------------
// One call's arguments: all checks in one place
// ------------------------------------------------------------------------------------------

/// The length of a thermostat argument.
#[derive(Clone, Copy)]
enum XiLen {
    /// One value (SGNHT's scalar ξ).
    One,
    /// One per coordinate (mSGNHT, SGMGT).
    PerCoordinate,
}

/// A step function's arguments as the caller passed them; nothing is checked until
/// [`Call::prepare`]. The sampler-specific ones are `None` where the function does not take
/// them (`Some(null)` is a null argument).
struct Call<T> {
    grad_fn: Option<Callback<T>>,
    ctx: *mut c_void,
    n: usize,
    steps: u64,
    theta: *mut T,
    work: *mut T,
    p: Option<*mut T>,
    xi: Option<(*mut T, XiLen)>,
    noise_estimates: Option<*const T>,
    /// SGMGT's step counter; null for none (and for the functions without one).
    step_count: *mut u64,
    /// The workspace's length in multiples of n, where the thermostats do not set it (pSGLD's 5).
    work_multiple: Option<usize>,
    rng: *mut SgmcmcRng,
    stats: *mut SgmcmcStats,
}

/// One pointer argument as a byte range, for the checks of [`Call::prepare`].
#[derive(Clone, Copy)]
struct Region {
    addr: usize,
    aligned: bool,
    /// Null is allowed (an optional argument, or one the function does not take).
    optional: bool,
    /// The size in bytes; `None` when it would exceed `isize::MAX`.
    bytes: Option<usize>,
}

impl Region {
    /// A required argument: `count` values of `U` at `ptr`.
    fn required<U>(ptr: *const U, count: usize) -> Self {
        Region {
            addr: ptr as usize,
            aligned: ptr.is_aligned(),
            optional: false,
            bytes: count
                .checked_mul(size_of::<U>())
                .filter(|&b| b <= isize::MAX as usize),
        }
    }

    /// An argument that may be null.
    fn nullable<U>(ptr: *const U, count: usize) -> Self {
        Region {
            optional: true,
            ..Region::required(ptr, count)
        }
    }

    /// A sampler-specific argument: required where the function takes it (`Some`), no
    /// argument at all where it does not.
    fn taken<U>(ptr: Option<*const U>, count: usize) -> Self {
        match ptr {
            Some(ptr) => Region::required(ptr, count),
            None => Region::nullable(core::ptr::null::<U>(), 0),
        }
    }

    fn end(&self) -> usize {
        // Saturating: a range past the end of the address space is invalid anyway and still
        // compares as overlapping whatever follows its start.
        self.addr.saturating_add(self.bytes.unwrap_or(0))
    }

    fn overlaps(&self, other: &Region) -> bool {
        self.addr != 0 && other.addr != 0 && self.addr < other.end() && other.addr < self.end()
    }
}

/// A call's checked arrays, ready for the sampler's constructor. Empty where the function
/// takes no such array.
struct Buffers<'a, T> {
    theta: &'a mut [T],
    p: &'a mut [T],
    xi: &'a mut [T],
    /// 2n values (3n with per-coordinate thermostats), zeroed (the C caller need not
    /// initialise them).
    work: &'a mut [T],
    noise_estimates: Option<&'a [T]>,
    step_count: Option<&'a mut u64>,
}

/// A call's model, generator and statistics: what runs the chain once the sampler is built.
struct Chain<'a, T> {
    model: CModel<T>,
    steps: u64,
    rng: &'a Cell<SgmcmcRng>,
    stats: Option<&'a mut MaybeUninit<SgmcmcStats>>,
}

impl<T: Real> Call<T> {
    /// The arguments every step function takes; the sampler-specific ones follow by the
    /// `with_*` methods.
    fn new(
        grad_fn: Option<Callback<T>>,
        ctx: *mut c_void,
        theta: *mut T,
        work: *mut T,
        n: usize,
        steps: u64,
        rng: *mut SgmcmcRng,
        stats: *mut SgmcmcStats,
    ) -> Self {
        Call {
            grad_fn,
            ctx,
            n,
            steps,
            theta,
            work,
            p: None,
            xi: None,
            noise_estimates: None,
            step_count: core::ptr::null_mut(),
            work_multiple: None,
            rng,
            stats,
        }
    }

    fn with_momentum(self, p: *mut T) -> Self {
        Call { p: Some(p), ..self }
    }

    fn with_thermostat(self, xi: *mut T, len: XiLen) -> Self {
        Call {
            xi: Some((xi, len)),
            ..self
        }
    }

    fn with_work_multiple(self, multiple: usize) -> Self {
        Call {
            work_multiple: Some(multiple),
            ..self
        }
    }

    fn with_step_count(self, step_count: *mut u64) -> Self {
        Call { step_count, ..self }
    }

    fn with_noise_estimates(self, noise_estimates: *const T) -> Self {
        Call {
            noise_estimates: Some(noise_estimates),
            ..self
        }
    }

    /// Checks every argument of the call, and only then touches any of them: pointers (null
    /// where required, or misaligned), then `n` and the byte size of every array, then every
    /// pair of pointer arguments for overlap — the arrays, the generator, the statistics, the
    /// step counter, the noise estimates, whichever the function takes. On success it zeroes
    /// the workspace, resets the statistics to (NaN, NaN, 0) and returns the arguments as
    /// references, pairwise disjoint; on an error nothing has been read or written.
    ///
    /// # Safety
    ///
    /// The contract of the `sgmcmc_*` step functions: every pointer that passes the checks
    /// points to the documented number of values (initialised, but for the workspace and the
    /// statistics), valid for reading and (but the noise estimates) writing, and nothing else
    /// accesses them during the call.
    unsafe fn prepare<'a>(self) -> Result<(Buffers<'a, T>, Chain<'a, T>), i32> {
        let n = self.n;
        // The workspace: 2n, or 3n with per-coordinate thermostats (their backup, which undoes
        // a failed step).
        let (xi, xi_len, work_len) = match self.xi {
            Some((ptr, XiLen::One)) => (Some(ptr), 1, n.saturating_mul(2)),
            Some((ptr, XiLen::PerCoordinate)) => (Some(ptr), n, n.saturating_mul(3)),
            None => (None, 0, n.saturating_mul(2)),
        };
        let work_len = self.work_multiple.map_or(work_len, |k| n.saturating_mul(k));
        let regions = [
            Region::required(self.theta, n),
            Region::taken(self.p.map(<*mut T>::cast_const), n),
            Region::taken(xi.map(<*mut T>::cast_const), xi_len),
            Region::required(self.work, work_len),
            Region::taken(self.noise_estimates, n),
            Region::nullable(self.step_count, 1),
            Region::required(self.rng, 1),
            Region::nullable(self.stats, 1),
        ];
        let Some(f) = self.grad_fn else {
            return Err(SGMCMC_ERR_NULL);
        };
        if regions.iter().any(|r| match r.addr {
            0 => !r.optional,
            _ => !r.aligned,
        }) {
            return Err(SGMCMC_ERR_NULL);
        }
        if n == 0 || regions.iter().any(|r| r.bytes.is_none()) {
            return Err(SGMCMC_ERR_LENGTH);
        }
        for (i, a) in regions.iter().enumerate() {
            if regions.iter().skip(i + 1).any(|b| a.overlaps(b)) {
                return Err(SGMCMC_ERR_OVERLAP);
            }
        }

        // Every check has passed: from here on the pointers become references. Each is
        // non-null where required, aligned and of at most isize::MAX bytes, and the regions are
        // pairwise disjoint (all checked above), so no two of the references alias.
        // SAFETY: checked as above; `theta` points to n initialised, writable values that
        // nothing else accesses during the call (the caller's contract).
        let theta = unsafe { core::slice::from_raw_parts_mut(self.theta, n) };
        // SAFETY: as for θ (null only where the function takes no such array).
        let p = unsafe { slice_or_empty(self.p.unwrap_or(core::ptr::null_mut()), n) };
        // SAFETY: as for θ, with the thermostat's own length (1 or n).
        let xi = unsafe { slice_or_empty(xi.unwrap_or(core::ptr::null_mut()), xi_len) };
        // SAFETY: checked as above; `work` points to `work_len` writable values that nothing
        // else accesses during the call. They need not be initialised: `MaybeUninit` claims
        // nothing of them.
        let work = unsafe {
            core::slice::from_raw_parts_mut(self.work.cast::<MaybeUninit<T>>(), work_len)
        };
        work.fill(MaybeUninit::new(T::ZERO));
        // SAFETY: the same memory, now initialised (just filled); `MaybeUninit<T>` has `T`'s
        // layout.
        let work = unsafe { &mut *(core::ptr::from_mut(work) as *mut [T]) };
        let noise_estimates = match self.noise_estimates {
            Some(ptr) if !ptr.is_null() => {
                // SAFETY: checked as above; the caller guarantees n initialised values that
                // nothing writes during the call. Only read.
                Some(unsafe { core::slice::from_raw_parts(ptr, n) })
            }
            _ => None,
        };
        // SAFETY: checked as above; when non-null, the caller's initialised, writable
        // `uint64_t`, not accessed elsewhere during the call.
        let step_count = unsafe { self.step_count.as_mut() };
        // SAFETY: checked as above (non-null, aligned, disjoint); the caller's valid `sgmcmc_rng`,
        // not accessed elsewhere during the call.
        let rng = Cell::from_mut(unsafe { &mut *self.rng });
        // SAFETY: checked as above; when non-null, a writable `sgmcmc_stats` not accessed
        // elsewhere during the call. `MaybeUninit`: it may be uninitialised on entry.
        let stats = unsafe { self.stats.cast::<MaybeUninit<SgmcmcStats>>().as_mut() };
        let mut chain = Chain {
            model: CModel { f, ctx: self.ctx },
            steps: self.steps,
            rng,
            stats,
        };
        chain.report(NO_STATS);
        let buffers = Buffers {
            theta,
            p,
            xi,
            work,
            noise_estimates,
            step_count,
        };
        Ok((buffers, chain))
    }
}

/// `len` values at `ptr`, or the empty slice for a null `ptr`.
///
/// # Safety
///
/// A non-null `ptr` passed [`Call::prepare`]'s checks for `len` values and, by the caller's
/// contract, points to `len` initialised, writable `T` that nothing else accesses during the
/// call.
unsafe fn slice_or_empty<'a, T>(ptr: *mut T, len: usize) -> &'a mut [T] {
    if ptr.is_null() {
        return &mut [];
    }
    // SAFETY: the function's contract: non-null (checked), aligned, at most isize::MAX bytes,
    // disjoint from every other argument, initialised and exclusively ours for the call.
    unsafe { core::slice::from_raw_parts_mut(ptr, len) }
}

impl<T: Real> Chain<'_, T> {
    fn report(&mut self, s: SgmcmcStats) {
        if let Some(stats) = self.stats.as_deref_mut() {
            stats.write(s);
        }
    }

    /// Checks the generator, builds the sampler (which checks the initial state), and runs the
    /// chain through [`Sampler::run_with`], recording the last completed step in the stats;
    /// `after` runs after every completed step (SGMGT's resampling).
    fn run<S>(
        self,
        build: impl FnOnce() -> Result<S, Error>,
        after: impl FnMut(&mut S, &mut SharedRng<'_>),
    ) -> Result<(), i32>
    where
        S: Sampler<T, CModel<T>>,
    {
        self.run_then(build, after, |_| {})
    }

    /// [`Chain::run`], then `finish` on the sampler, whether the steps completed or not (pSGLD
    /// writes its V back to the caller's buffer there).
    fn run_then<S>(
        mut self,
        build: impl FnOnce() -> Result<S, Error>,
        mut after: impl FnMut(&mut S, &mut SharedRng<'_>),
        finish: impl FnOnce(&S),
    ) -> Result<(), i32>
    where
        S: Sampler<T, CModel<T>>,
    {
        let mut rng = SharedRng(self.rng);
        if rng.with(|r| r.is_zero()) {
            return Err(SGMCMC_ERR_RNG_UNSEEDED);
        }
        let mut sampler = build().map_err(build_code)?;
        let mut last = NO_STATS;
        let result = sampler.run_with(&mut self.model, &mut rng, self.steps, |_, s, st| {
            last.kinetic_temperature = st.kinetic_temperature.map_or(f64::NAN, Real::to_f64);
            last.thermostat = st.thermostat.map_or(f64::NAN, Real::to_f64);
            after(s, &mut SharedRng(self.rng));
        });
        last.steps = result.map_or_else(|e| e.completed, |_| self.steps);
        self.report(last);
        finish(&sampler);
        result.map(|_| ()).map_err(|e| step_code(e.error))
    }
}

// ------------------------------------------------------------------------------------------
// The samplers: each validates its parameters, then hands its constructor to `Chain::run`
// ------------------------------------------------------------------------------------------

/// Checks h, then the temperature T, the first two arguments of every positional step function,
/// before the sampler's other parameters, so that the first bad argument in declaration order
/// is the one reported (the core's `validate` checks T after the sampler's own settings, e.g.
/// SGHMC's A). SGLD's parameters are exactly h and T, checked in that order by the core's own
/// rules (h finite and > 0, T finite and ≥ 0), so they are not restated here.
fn check_step_and_temperature<T: Real>(h: T, temperature: T) -> Result<(), i32> {
    SgldParams::new(h)
        .with_temperature(temperature)
        .validate()
        .map_err(param_code)
}

/// # Safety
///
/// The contract of the `sgmcmc_sgld_*` entry points.
unsafe fn sgld<T: Real>(h: T, temperature: T, call: Call<T>) -> Result<(), i32> {
    // SAFETY: the caller's contract is `prepare`'s.
    let (b, chain) = unsafe { call.prepare() }?;
    // h, then T (`check_step_and_temperature`).
    let params = SgldParams::new(h).with_temperature(temperature);
    params.validate().map_err(param_code)?;
    chain.run(|| Sgld::new(params, b.theta, b.work), |_, _| {})
}

/// # Safety
///
/// The contract of the `sgmcmc_psgld_*` entry points.
unsafe fn psgld<T: Real>(
    h: T,
    temperature: T,
    decay: T,
    offset: T,
    call: Call<T>,
) -> Result<(), i32> {
    // SAFETY: the caller's contract is `prepare`'s.
    let (b, chain) = unsafe { call.prepare() }?;
    check_step_and_temperature(h, temperature)?;
    let params = PsgldParams::new(h)
        .with_temperature(temperature)
        .with_decay(decay)
        .with_offset(offset);
    params.validate().map_err(param_code)?;
    // V is the caller's `square_mean`, which `prepare` checked in the momentum's slot: read
    // when the sampler is built, written back when the call ends (after the last completed
    // step: a failed step leaves V as it was). The cell hands the one `&mut` to each in turn.
    let square_mean = Cell::new(Some(b.p));
    chain.run_then(
        || {
            let mut sampler = Psgld::new(params, b.theta, b.work)?;
            let v = square_mean.take().unwrap_or_default();
            let set = sampler.set_square_mean(v);
            square_mean.set(Some(v));
            set?;
            Ok(sampler)
        },
        |_, _| {},
        |sampler| {
            if let Some(v) = square_mean.take() {
                for (v, s) in v.iter_mut().zip(sampler.square_mean()) {
                    *v = *s;
                }
            }
        },
    )
}

/// # Safety
///
/// The contract of the `sgmcmc_sghmc_*` entry points.
unsafe fn sghmc<T: Real>(
    h: T,
    temperature: T,
    friction: T,
    noise_estimate: T,
    integ: i32,
    call: Call<T>,
) -> Result<(), i32> {
    // SAFETY: the caller's contract is `prepare`'s.
    let (b, chain) = unsafe { call.prepare() }?;
    check_step_and_temperature(h, temperature)?;
    // B̂ ≤ A·T is checked with B̂ (SGMCMC_ERR_BAD_NOISE_ESTIMATE).
    let params = SghmcParams::new(h)
        .with_temperature(temperature)
        .with_friction(friction)
        .with_noise_estimate(noise_estimate);
    params.validate().map_err(param_code)?;
    let params = params.with_integrator(integrator(integ)?);
    chain.run(|| Sghmc::new(params, b.theta, b.p, b.work), |_, _| {})
}

/// SGNHT's and mSGNHT's parameters, checked (first bad one in argument order).
fn sgnht_params<T: Real>(
    h: T,
    temperature: T,
    diffusion: T,
    integ: i32,
) -> Result<SgnhtParams<T>, i32> {
    check_step_and_temperature(h, temperature)?;
    let params = SgnhtParams::new(h)
        .with_temperature(temperature)
        .with_diffusion(diffusion);
    params.validate().map_err(param_code)?;
    Ok(params.with_integrator(integrator(integ)?))
}

/// # Safety
///
/// The contract of the `sgmcmc_sgnht_*` entry points.
unsafe fn sgnht<T: Real>(
    h: T,
    temperature: T,
    diffusion: T,
    integ: i32,
    call: Call<T>,
) -> Result<(), i32> {
    // SAFETY: the caller's contract is `prepare`'s.
    let (b, chain) = unsafe { call.prepare() }?;
    let params = sgnht_params(h, temperature, diffusion, integ)?;
    // `prepare` gave ξ the one value `XiLen::One` asks for. It is the caller's variable, in
    // which the thermostat persists between calls (also after an error).
    if b.xi.len() != 1 {
        return Err(SGMCMC_ERR_LENGTH);
    }
    // `resume`: ξ keeps the caller's value (`new` would restart it at A every call).
    chain.run(
        || Sgnht::resume(params, b.theta, b.p, b.xi, b.work),
        |_, _| {},
    )
}

/// # Safety
///
/// The contract of the `sgmcmc_msgnht_*` entry points.
unsafe fn msgnht<T: Real>(
    h: T,
    temperature: T,
    diffusion: T,
    integ: i32,
    call: Call<T>,
) -> Result<(), i32> {
    // SAFETY: the caller's contract is `prepare`'s.
    let (b, chain) = unsafe { call.prepare() }?;
    let params = sgnht_params(h, temperature, diffusion, integ)?;
    // `MSgnht::new` keeps the caller's ξ, so the chain continues from it.
    chain.run(
        || MSgnht::resume(params, b.theta, b.p, b.xi, b.work),
        |_, _| {},
    )
}

/// # Safety
///
/// The contract of the `sgmcmc_sgmgt_*` and `sgmcmc_sgmgt_noise_estimates_*` entry points.
unsafe fn sgmgt<T: Real>(q: SgmcmcSgmgtParams<T>, call: Call<T>) -> Result<(), i32> {
    // SAFETY: the caller's contract is `prepare`'s.
    let (b, chain) = unsafe { call.prepare() }?;
    // Resampling is driven below from the caller's step counter (the sampler's own counter
    // would restart at 0 in every call), so the sampler is built with it switched off. The
    // temperature is a field of the struct here, checked where the core checks it: after σ_ξ
    // and before B̂, whose bound 2σ_θB̂ < T depends on it.
    let params = SgmgtParams::new(q.h)
        .with_sigma_p(q.sigma_p)
        .with_gamma(q.gamma)
        .with_sigma_theta(q.sigma_theta)
        .with_sigma_xi(q.sigma_xi)
        .with_noise_estimate(q.noise_estimate)
        .with_temperature(q.temperature)
        .with_resampling_steps(0, 0);
    params.validate().map_err(param_code)?;
    let kinetic = MonomialGamma::softened(q.a, q.c);
    kinetic.validate().map_err(param_code)?;
    let params = params
        .with_kinetic(kinetic)
        .with_integrator(integrator(q.integrator)?);
    let mut local_count = 0;
    let count = b.step_count.unwrap_or(&mut local_count);
    let (tp, tx) = (q.resample_momentum, q.resample_thermostat);
    // As `Sgmgt::step` does with its own counter: after the step's statistics, p then ξ.
    chain.run(
        || {
            let mut sampler = Sgmgt::resume(params, b.theta, b.p, b.xi, b.work)?;
            if let Some(estimates) = b.noise_estimates {
                sampler.set_noise_estimates(estimates)?;
                // `set_noise_estimates` bounds 2σ_θB̂ᵢ by 1 whatever the temperature, but θ's
                // injected variance ∝ T − σ_θB̂ᵢ and its velocity factor 1 − 2σ_θB̂ᵢ/T need
                // 2σ_θB̂ᵢ < T, the bound `validate` puts on the scalar B̂ (same test, same
                // operations): checked here too, so that T < 1 cannot take a square root of a
                // negative number or reverse θ's drift.
                let (sigma_theta, temperature) = (q.sigma_theta, q.temperature);
                if let Some(index) = estimates.iter().position(|&b| {
                    let excess = T::TWO * sigma_theta * b;
                    excess > T::ZERO && excess >= temperature
                }) {
                    return Err(Error::Layout(LayoutError::InvalidValue {
                        buffer: Buffer::NoiseEstimates,
                        index,
                    }));
                }
            }
            Ok(sampler)
        },
        |sampler, rng| {
            *count = count.wrapping_add(1);
            if tp != 0 && count.is_multiple_of(u64::from(tp)) {
                sampler.resample_momentum(rng);
            }
            if tx != 0 && count.is_multiple_of(u64::from(tx)) {
                sampler.resample_thermostat(rng);
            }
        },
    )
}

// ------------------------------------------------------------------------------------------
// Entry points
// ------------------------------------------------------------------------------------------

/// Defines one exported step function. Its arguments are the leading ones (parameters), the
/// ones every step function takes in this order — `grad_fn`, `ctx`, `theta`, the sampler's
/// state arrays, `work`, `n`, `steps` — any trailing ones (SGMGT's step counter), then `rng`
/// and `stats`; `|$call| $body` receives the common ones as a [`Call`].
macro_rules! step_fn {
    (
        $(#[$attr:meta])*
        $name:ident<$t:ty, $cb:ty>(
            $($arg:ident: $arg_ty:ty),*;
            $($state:ident),*;
            $($post:ident: $post_ty:ty),*
        ) |$call:ident| $body:expr
    ) => {
        $(#[$attr])*
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            $($arg: $arg_ty,)*
            grad_fn: $cb,
            ctx: *mut c_void,
            theta: *mut $t,
            $($state: *mut $t,)*
            work: *mut $t,
            n: usize,
            steps: u64,
            $($post: $post_ty,)*
            rng: *mut SgmcmcRng,
            stats: *mut SgmcmcStats,
        ) -> i32 {
            let $call = Call::new(grad_fn, ctx, theta, work, n, steps, rng, stats);
            // SAFETY: the caller's contract is this function's, which is the body's.
            status(unsafe { $body })
        }
    };
}

macro_rules! entry_points {
    ($t:ty, $cb:ty, $sgld:ident, $psgld:ident, $sghmc:ident, $sgnht:ident, $msgnht:ident, $sgmgt:ident, $sgmgt_noise:ident) => {
        step_fn! {
            /// SGLD with a constant step h at temperature T: `steps` steps of
            /// θ ← θ − h∇Ũ(θ) + √(2hT)ζ (stationary law e^{−U/T}; T = 1 the posterior, T = 0
            /// gradient descent).
            ///
            /// Buffers: `theta` (n values, in/out, finite) and `work` (2n values, workspace;
            /// contents ignored), pairwise disjoint and disjoint from `rng` and `stats`.
            /// `stats` may be null. Returns [`SGMCMC_OK`] or an `SGMCMC_ERR_*` code (see the
            /// header for the order of checks).
            ///
            /// # Safety
            ///
            /// Every non-null pointer points to memory of its documented length, initialised
            /// (but for `work` and `stats`) and writable, that nothing else accesses during the
            /// call; `grad_fn` is safe to call with pointers to `n` values and `ctx`.
            $sgld<$t, $cb>(h: $t, temperature: $t; ;) |call| sgld(h, temperature, call)
        }
        step_fn! {
            /// pSGLD (Li et al. 2016) with a constant step h, temperature T, decay 0 ≤ α < 1
            /// and offset λ > 0, no Γ correction: `steps` steps of V ← αV + (1 − α)∇Ũ²,
            /// G = 1/(λ + √V), θ ← θ − hG∇Ũ + √(2hTG)ζ.
            ///
            /// Buffers: `theta` and `square_mean` (n values each, in/out; V finite and ≥ 0,
            /// zeros for a new chain, kept by the caller between calls) and `work` (5n values).
            ///
            /// # Safety
            ///
            /// As for the SGLD entry point.
            $psgld<$t, $cb>(h: $t, temperature: $t, decay: $t, offset: $t; square_mean;)
            |call| psgld(h, temperature, decay, offset, call.with_momentum(square_mean).with_work_multiple(5))
        }
        step_fn! {
            /// SGHMC at temperature T with friction A ≥ 0 and noise estimate 0 ≤ B̂ ≤ AT (injected
            /// noise √(2(AT − B̂)h)).
            ///
            /// Buffers: `theta`, `p` (n values each, in/out, finite), `work` (2n values).
            /// `integrator`: 0 Euler, 1 splitting.
            ///
            /// # Safety
            ///
            /// As for the SGLD entry point.
            $sghmc<$t, $cb>(h: $t, temperature: $t, friction: $t, noise_estimate: $t, integrator: i32; p;)
            |call| sghmc(h, temperature, friction, noise_estimate, integrator, call.with_momentum(p))
        }
        step_fn! {
            /// SGNHT (one scalar thermostat ξ) at temperature T with diffusion A ≥ 0 (injected
            /// noise √(2ATh); ξ drives pᵀp/n to T).
            ///
            /// Buffers: `theta`, `p` (n values each), `work` (2n values); `xi` points to ONE
            /// value (in/out, finite), the thermostat, which persists between calls (Ding et
            /// al. start it at ξ₀ = A).
            ///
            /// # Safety
            ///
            /// As for the SGLD entry point.
            $sgnht<$t, $cb>(h: $t, temperature: $t, diffusion: $t, integrator: i32; p, xi;)
            |call| sgnht(h, temperature, diffusion, integrator, call.with_momentum(p).with_thermostat(xi, XiLen::One))
        }
        step_fn! {
            /// mSGNHT (one thermostat per coordinate) at temperature T with diffusion D ≥ 0
            /// (injected noise √(2DTh); ξᵢ drives pᵢ² to T).
            ///
            /// Buffers: `theta`, `p`, `xi` (n values each, in/out, finite; start ξᵢ = D) and
            /// `work` (3n values).
            ///
            /// # Safety
            ///
            /// As for the SGLD entry point.
            $msgnht<$t, $cb>(h: $t, temperature: $t, diffusion: $t, integrator: i32; p, xi;)
            |call| msgnht(h, temperature, diffusion, integrator, call.with_momentum(p).with_thermostat(xi, XiLen::PerCoordinate))
        }
        step_fn! {
            /// SGMGT / SGMGT-D with the softened monomial-gamma kinetics K_c (eq. 12, a ∈ {1, 2}),
            /// at the temperature `params.temperature` (`docs/temperature.md`).
            ///
            /// Buffers: `theta`, `p`, `xi` (n values each, in/out, finite; ξ = 0 is the natural
            /// start), `work` (3n values). `step_count` (may be null = 0 at every call) is the
            /// chain's step counter: read at the start, incremented after every completed step;
            /// p (ξ) is resampled after the steps at which it becomes a multiple of T_p (T_ξ).
            ///
            /// # Safety
            ///
            /// As for the SGLD entry point; `step_count` is null or points to a writable
            /// `uint64_t`.
            $sgmgt<$t, $cb>(params: SgmcmcSgmgtParams<$t>; p, xi; step_count: *mut u64)
            |call| sgmgt(params, call.with_momentum(p).with_thermostat(xi, XiLen::PerCoordinate).with_step_count(step_count))
        }
        step_fn! {
            /// As the SGMGT entry point, with per-coordinate gradient-noise estimates for the θ
            /// term (`Sgmgt::set_noise_estimates`): `noise_estimates` holds `n` values B̂ᵢ ≥ 0
            /// with 2σ_θB̂ᵢ < 1 and < T, used in place of `params.noise_estimate`; it is only read, and
            /// must not overlap any other argument. Checked after the initial state: a bad
            /// value returns `SGMCMC_ERR_BAD_NOISE_ESTIMATE` before any step.
            ///
            /// # Safety
            ///
            /// As for the SGMGT entry point; `noise_estimates` points to `n` initialised values
            /// that nothing writes during the call.
            $sgmgt_noise<$t, $cb>(params: SgmcmcSgmgtParams<$t>, noise_estimates: *const $t; p, xi; step_count: *mut u64)
            |call| sgmgt(params, call.with_momentum(p).with_thermostat(xi, XiLen::PerCoordinate).with_step_count(step_count).with_noise_estimates(noise_estimates))
        }
    };
}

entry_points!(
    f32,
    GradientF32,
    sgmcmc_sgld_f32,
    sgmcmc_psgld_f32,
    sgmcmc_sghmc_f32,
    sgmcmc_sgnht_f32,
    sgmcmc_msgnht_f32,
    sgmcmc_sgmgt_f32,
    sgmcmc_sgmgt_noise_estimates_f32
);
entry_points!(
    f64,
    GradientF64,
    sgmcmc_sgld_f64,
    sgmcmc_psgld_f64,
    sgmcmc_sghmc_f64,
    sgmcmc_sgnht_f64,
    sgmcmc_msgnht_f64,
    sgmcmc_sgmgt_f64,
    sgmcmc_sgmgt_noise_estimates_f64
);
