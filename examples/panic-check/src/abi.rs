//! What the exported functions take: caller buffers, opaque settings, an opaque model and a
//! generator by pointer, so that nothing the library computes from them can be constant-folded.
//!
//! Nothing here is ever run: the ELF exists to be disassembled. The pointers follow the usual C
//! contract (valid, aligned, pairwise disjoint, of the stated length), which is what makes the
//! `unsafe` blocks sound; the library itself stays free of `unsafe`.

use core::ffi::c_void;
use core::marker::PhantomData;
use rand_pcg::Pcg32;
use sgmcmc::gradient::{Batch, MinibatchGradient, Moments, PairedGradient, Sampling};
use sgmcmc::sampler::StepStats;
use sgmcmc::{Energy, Gradient, Real};

/// A caller buffer of run-time length.
#[repr(C)]
pub struct Buf<T> {
    pub ptr: *mut T,
    pub len: usize,
}

impl<T> Buf<T> {
    /// # Safety
    /// `ptr` is valid for `len` reads and writes, aligned, and aliased by nothing else while
    /// the slice lives.
    #[inline(always)]
    pub unsafe fn slice<'a>(&self) -> &'a mut [T] {
        unsafe { core::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

/// Every auxiliary buffer any sampler takes, as pointer + length (in the fixed-size exports
/// too: a workspace length is checked by the constructor, after which it is known anyway).
#[repr(C)]
pub struct Aux<T> {
    /// The sampler's workspace (`workspace_len(n)`).
    pub work: Buf<T>,
    /// SGNHT's scalar thermostat.
    pub xi1: *mut T,
    /// A diagonal inverse mass (n), or SGMGT's diagonal potential.
    pub inv_mass: Buf<T>,
    /// A dense precision (n²), its workspace (`MassBuffer::dense_work_len(n)`) and its
    /// eigendecomposition (2n² + n, for the splitting integrator).
    pub precision: Buf<T>,
    pub mass_work: Buf<T>,
    pub eigen: Buf<T>,
    /// The wrapper's workspace (MCEM, calibrated) and the calibrated wrapper's noise estimate.
    pub wrap_work: Buf<T>,
    pub estimate: Buf<T>,
    /// SGMGT's per-coordinate noise estimates.
    pub noise: Buf<T>,
    /// A checkpoint's buffer part, and its scalar part (an `S::State`, read or written).
    pub checkpoint: Buf<T>,
    pub state: *mut c_void,
    /// Values handed to setters: thermostats (n), an inverse mass (n or n²).
    pub values: Buf<T>,
}

/// Settings, read from caller memory.
#[repr(C)]
pub struct Knobs<T> {
    /// Step size, and the other reals the settings take (friction, diffusion, σ, …).
    pub h: T,
    pub a: T,
    pub b: T,
    pub c: T,
    /// A value for setters (step size, thermostat, thermostat mass).
    pub x: T,
    /// Steps of a run; the first iteration of a scheduled run.
    pub steps: u64,
    pub first: u64,
    /// Leapfrog steps, E-steps, resampling periods, refresh period.
    pub count: u32,
    /// Run-time choices (schedule, kinetics, thermostat rule, sample size, correction, …).
    pub select: u32,
}

impl<T: Real> Knobs<T> {
    #[inline(always)]
    pub fn bit(&self, k: u32) -> bool {
        self.select & (1 << k) != 0
    }
}

/// What an entry point writes back.
#[repr(C)]
pub struct Out<T> {
    pub value: T,
    pub other: T,
    pub flags: u32,
    pub len: usize,
}

impl<T: Real> Out<T> {
    #[inline(always)]
    pub fn stats(&mut self, s: &StepStats<T>) {
        self.value = s.step_size;
        self.other = s.kinetic_temperature.unwrap_or(T::ZERO)
            + s.thermostat.unwrap_or(T::ZERO)
            + s.acceptance.unwrap_or(T::ZERO);
        self.flags = u32::from(s.accepted.unwrap_or(false));
    }
}

/// The model: C callbacks and their context.
#[repr(C)]
pub struct Model<T> {
    pub gradient: unsafe extern "C" fn(theta: *const T, grad: *mut T, n: usize, ctx: *mut c_void),
    pub energy: unsafe extern "C" fn(theta: *const T, n: usize, ctx: *mut c_void) -> T,
    /// Fills `grad`, the per-coordinate `sum` (n) and `squares` (n, or n² when `dense`) of the
    /// minibatch's gradients; returns the batch size.
    pub moments: unsafe extern "C" fn(
        theta: *const T,
        grad: *mut T,
        n: usize,
        sum: *mut T,
        squares: *mut T,
        squares_len: usize,
        dense: bool,
        ctx: *mut c_void,
    ) -> usize,
    /// Fills the Hessian diagonal (pSGLD's Γ correction); returns whether it did.
    pub hessian:
        unsafe extern "C" fn(theta: *const T, diag: *mut T, n: usize, ctx: *mut c_void) -> bool,
    pub population: usize,
    pub ctx: *mut c_void,
}

/// The model as the library sees it. `Tag` only distinguishes monomorphisations: a unique tag
/// per exported function gives each its own copy of every function generic over the model
/// (so each has one caller and may be inlined into it, as in a program that calls `step` once),
/// the shared one gives all exports of a float type one copy (as in a program calling it from
/// many places).
pub struct Opaque<'m, T, Tag> {
    model: &'m Model<T>,
    tag: PhantomData<Tag>,
}

/// The tag of the exports with run-time lengths.
pub struct Shared;

impl<'m, T, Tag> Opaque<'m, T, Tag> {
    #[inline(always)]
    pub fn new(model: &'m Model<T>) -> Self {
        Opaque {
            model,
            tag: PhantomData,
        }
    }
}

impl<T: Real, Tag> Gradient<T> for Opaque<'_, T, Tag> {
    #[inline(always)]
    fn gradient(&mut self, theta: &[T], grad: &mut [T]) {
        let n = theta.len().min(grad.len());
        // SAFETY: both pointers are valid for n elements; the callback's contract.
        unsafe { (self.model.gradient)(theta.as_ptr(), grad.as_mut_ptr(), n, self.model.ctx) }
    }
    #[inline(always)]
    fn hessian_diagonal(&mut self, theta: &[T], diagonal: &mut [T]) -> bool {
        let n = theta.len().min(diagonal.len());
        // SAFETY: both pointers are valid for n elements; the callback's contract.
        unsafe { (self.model.hessian)(theta.as_ptr(), diagonal.as_mut_ptr(), n, self.model.ctx) }
    }
}

/// One gradient callback at each point, and the callback as the full gradient (what the
/// check needs is every path of `ControlVariate`, not a real minibatch).
impl<T: Real, Tag> PairedGradient<T> for Opaque<'_, T, Tag> {
    #[inline(always)]
    fn paired_gradient(&mut self, theta: &[T], centre: &[T], grad: &mut [T], at_centre: &mut [T]) {
        self.gradient(theta, grad);
        self.gradient(centre, at_centre);
    }
    #[inline(always)]
    fn full_gradient(&mut self, theta: &[T], grad: &mut [T]) {
        self.gradient(theta, grad);
    }
}

impl<T: Real, Tag> Energy<T> for Opaque<'_, T, Tag> {
    #[inline(always)]
    fn energy(&mut self, theta: &[T]) -> T {
        // SAFETY: the pointer is valid for theta.len() elements.
        unsafe { (self.model.energy)(theta.as_ptr(), theta.len(), self.model.ctx) }
    }
}

impl<T: Real, Tag> MinibatchGradient<T> for Opaque<'_, T, Tag> {
    #[inline(always)]
    fn gradient_with_moments(
        &mut self,
        theta: &[T],
        grad: &mut [T],
        moments: Moments<'_, T>,
    ) -> Batch {
        let n = theta.len().min(grad.len()).min(moments.sum.len());
        // SAFETY: every pointer is valid for the length passed with it.
        let size = unsafe {
            (self.model.moments)(
                theta.as_ptr(),
                grad.as_mut_ptr(),
                n,
                moments.sum.as_mut_ptr(),
                moments.squares.as_mut_ptr(),
                moments.squares.len(),
                moments.dense,
                self.model.ctx,
            )
        };
        Batch {
            size,
            population: self.model.population,
            sampling: if size & 1 == 0 {
                Sampling::WithReplacement
            } else {
                Sampling::WithoutReplacement
            },
        }
    }
}

/// The state an entry point builds its sampler over.
pub struct Build<'a, T> {
    pub theta: &'a mut [T],
    pub p: &'a mut [T],
    pub xi: &'a mut [T],
    pub xi1: &'a mut T,
    pub work: &'a mut [T],
    pub inv_mass: &'a mut [T],
    pub precision: &'a mut [T],
    pub mass_work: &'a mut [T],
    pub eigen: &'a mut [T],
    pub wrap_work: &'a mut [T],
    pub estimate: &'a mut [T],
    pub noise: &'a [T],
}

/// What an entry point hands the built sampler.
pub struct Cx<'c, T, Tag> {
    pub model: Opaque<'c, T, Tag>,
    pub rng: &'c mut Pcg32,
    pub out: &'c mut Out<T>,
    pub knobs: &'c Knobs<T>,
    pub checkpoint: &'c mut [T],
    pub state: *mut c_void,
    pub values: &'c mut [T],
}

/// The arguments every export takes besides θ, p and ξ.
pub struct Args<'c, T> {
    pub aux: &'c mut Aux<T>,
    pub knobs: &'c Knobs<T>,
    pub model: &'c Model<T>,
    pub rng: &'c mut Pcg32,
    pub out: &'c mut Out<T>,
}

impl<'c, T: Real> Args<'c, T> {
    /// Splits the caller's buffers into the sampler's and the entry point's.
    ///
    /// # Safety
    /// Every pointer in `aux` is valid for its length, aligned, and disjoint from the others and
    /// from θ, p and ξ.
    #[inline(always)]
    pub unsafe fn split<Tag>(
        self,
        theta: &'c mut [T],
        p: &'c mut [T],
        xi: &'c mut [T],
    ) -> (Build<'c, T>, Cx<'c, T, Tag>) {
        let a = self.aux;
        // SAFETY: the caller contract above.
        unsafe {
            let build = Build {
                theta,
                p,
                xi,
                xi1: &mut *a.xi1,
                work: a.work.slice(),
                inv_mass: a.inv_mass.slice(),
                precision: a.precision.slice(),
                mass_work: a.mass_work.slice(),
                eigen: a.eigen.slice(),
                wrap_work: a.wrap_work.slice(),
                estimate: a.estimate.slice(),
                noise: a.noise.slice(),
            };
            let cx = Cx {
                model: Opaque::new(self.model),
                rng: self.rng,
                out: self.out,
                knobs: self.knobs,
                checkpoint: a.checkpoint.slice(),
                state: a.state,
                values: a.values.slice(),
            };
            (build, cx)
        }
    }
}
