//! The rest of the public API a user calls directly, outside the samplers: the generators'
//! variates, the linear algebra, masses and mass buffers, the noise estimate, the kinetic
//! energies and the step-size schedules. Exported by the same matrix (family `misc`, one
//! configuration), each entry point over the caller's buffers ([`Build`]).

use crate::abi::{Build, Cx, Knobs};
use crate::families::{Cfg, schedule, tri};
use sgmcmc::Real;
use sgmcmc::adapt::{DualAveraging, GradientScale, NoiseEstimate, NoiseShape};
use sgmcmc::diagnostics::{BatchMeans, DivergenceMonitor, RunningMoments, WindowedEss};
use sgmcmc::gradient::{Batch, Gradient, Sampling};
use sgmcmc::kinetic::{Gaussian, Kinetic, Mass, MassBuffer, MonomialGamma};
use sgmcmc::linalg;
use sgmcmc::rng;
use sgmcmc::sampler::StepStats;
use sgmcmc::variance::{Adam, ControlVariate};

/// The "sampler" of the misc family is the caller's buffers themselves.
pub mod with_misc {
    use super::*;
    #[inline(always)]
    pub fn with<'a, T: Real>(
        _: Cfg,
        mut b: Build<'a, T>,
        _: &Knobs<T>,
        f: impl FnOnce(&mut Build<'a, T>) -> i32,
    ) -> i32 {
        f(&mut b)
    }

    #[inline(always)]
    pub fn with_outlined<'a, T: Real>(
        c: Cfg,
        b: Build<'a, T>,
        k: &Knobs<T>,
        f: impl FnOnce(&mut Build<'a, T>) -> i32,
    ) -> i32 {
        with(c, b, k, f)
    }
}

/// The variates of `sgmcmc::rng` and `Real`.
#[inline(always)]
pub fn rng_variates<T: Real, Tag>(b: &mut Build<'_, T>, cx: Cx<'_, T, Tag>) -> i32 {
    rng::fill_standard_normal(cx.rng, b.theta);
    rng::fill_lane_normals(cx.rng, b.p);
    let g: T = rng::gamma(cx.rng, cx.knobs.x);
    let k = rng::poisson(cx.rng, cx.knobs.a);
    let u = T::uniform(cx.rng) + T::uniform_open(cx.rng) + T::standard_normal(cx.rng);
    let v =
        rng::uniform_f32(cx.rng) + rng::uniform_open_f32(cx.rng) + rng::standard_normal_f32(cx.rng);
    let w =
        rng::uniform_f64(cx.rng) + rng::uniform_open_f64(cx.rng) + rng::standard_normal_f64(cx.rng);
    cx.out.value = g + u + T::from_f32(v) + T::from_f64(w);
    cx.out.len = k as usize;
    0
}

/// Cholesky factorisation and the triangular solves.
#[inline(always)]
pub fn linalg_cholesky<T: Real, Tag>(b: &mut Build<'_, T>, _: Cx<'_, T, Tag>) -> i32 {
    let n = b.theta.len();
    tri!(linalg::check_symmetric(b.precision, n));
    tri!(linalg::cholesky_in_place(b.precision, n));
    tri!(linalg::solve_lower_in_place(b.precision, n, b.theta));
    tri!(linalg::solve_lower_transpose_in_place(b.precision, n, b.p));
    tri!(linalg::cholesky_solve_in_place(b.precision, n, b.xi));
    0
}

/// The inverse of a lower triangle, of an SPD matrix, and a matrix-vector product.
#[inline(always)]
pub fn linalg_inverse<T: Real, Tag>(b: &mut Build<'_, T>, _: Cx<'_, T, Tag>) -> i32 {
    let n = b.theta.len();
    tri!(linalg::invert_lower_in_place(b.precision, n));
    tri!(linalg::spd_inverse(b.precision, n, b.eigen));
    tri!(linalg::mat_vec(b.eigen, n, b.theta, b.p));
    0
}

/// A mass's operations (energy, gradient, draws, friction flow, trace).
#[inline(always)]
fn mass_ops<T: Real, Tag>(m: &Mass<'_, T>, b: &mut Build<'_, T>, cx: Cx<'_, T, Tag>) {
    let n = b.theta.len();
    m.kinetic_gradient(b.p, b.xi);
    m.sample(cx.rng, b.theta);
    m.scale_standard_normal(b.p);
    m.friction_flow(b.p, cx.knobs.x, b.xi);
    cx.out.value = m.energy(b.p) + m.trace_inverse(n);
    cx.out.len = m.dim().unwrap_or(0) + m.inverse_slice().len();
}

/// `Mass::diagonal` and its operations.
#[inline(always)]
pub fn mass_diagonal<T: Real, Tag>(b: &mut Build<'_, T>, cx: Cx<'_, T, Tag>) -> i32 {
    let inv = core::mem::take(&mut b.inv_mass);
    let m = tri!(Mass::diagonal(inv));
    mass_ops(&m, b, cx);
    0
}

/// `Mass::dense` / `dense_from_mass` and its operations.
#[inline(always)]
pub fn mass_dense<T: Real, Tag>(b: &mut Build<'_, T>, cx: Cx<'_, T, Tag>) -> i32 {
    let n = b.theta.len();
    let precision = core::mem::take(&mut b.precision);
    let factor = core::mem::take(&mut b.mass_work);
    let m = if cx.knobs.bit(0) {
        tri!(Mass::dense_from_mass(cx.values, precision, factor, n))
    } else {
        tri!(Mass::dense(precision, factor, n))
    };
    mass_ops(&m, b, cx);
    0
}

/// `MassBuffer::dense_with_eigen` (or `fixed_diagonal`), its view and `set_inverse_mass`.
#[inline(always)]
pub fn mass_buffer<T: Real, Tag>(b: &mut Build<'_, T>, cx: Cx<'_, T, Tag>) -> i32 {
    let n = b.theta.len();
    let mut m = if cx.knobs.bit(0) {
        let inv: &mut [T] = core::mem::take(&mut b.inv_mass);
        tri!(MassBuffer::fixed_diagonal(inv))
    } else {
        let precision = core::mem::take(&mut b.precision);
        let work = core::mem::take(&mut b.mass_work);
        tri!(MassBuffer::dense_with_eigen(
            precision,
            work,
            core::mem::take(&mut b.eigen),
            n
        ))
    };
    let r = m.set_inverse_mass(cx.values);
    cx.out.flags = u32::from(m.is_adaptable()) + u32::from(r.is_ok());
    mass_ops(&m.mass(), b, cx);
    0
}

/// `NoiseEstimate`: an estimate from a batch's moments, committed, read back, reset.
#[inline(always)]
pub fn noise_estimate<T: Real, Tag>(b: &mut Build<'_, T>, cx: Cx<'_, T, Tag>) -> i32 {
    let shape = if cx.knobs.bit(0) {
        NoiseShape::Dense
    } else {
        NoiseShape::Diagonal
    };
    let mut e = tri!(NoiseEstimate::new(
        shape,
        cx.knobs.x,
        core::mem::take(&mut b.estimate)
    ));
    let batch = Batch {
        size: cx.knobs.count as usize,
        population: cx.knobs.steps as usize,
        sampling: if cx.knobs.bit(1) {
            Sampling::WithReplacement
        } else {
            Sampling::WithoutReplacement
        },
    };
    tri!(e.estimate_in_place(batch, b.theta, b.wrap_work));
    e.commit(b.wrap_work);
    cx.out.value = e.variance_of(cx.knobs.first as usize);
    cx.out.len = e.dim() + e.variance().len() + e.updates() as usize;
    if cx.knobs.bit(2) {
        e.reset();
    }
    0
}

/// A kinetic energy's per-coordinate functions, its draws and its total.
#[inline(always)]
fn kinetic_ops<T: Real, K: Kinetic<T>, Tag>(k: K, b: &mut Build<'_, T>, cx: Cx<'_, T, Tag>) -> i32 {
    tri!(k.check_dim(b.theta.len()));
    let mut s = T::ZERO;
    for (i, (&p, g)) in b.p.iter().zip(b.xi.iter_mut()).enumerate() {
        let (d, c) = k.gradient_and_curvature(i, p);
        *g = k.gradient(i, p) + d + c + k.curvature(i, p) + k.friction_flow(i, p, cx.knobs.x);
        s += k.energy(i, p) + k.sample(i, cx.rng) + k.sample_counted(i, cx.rng).0;
    }
    let tries = k.sample_all(cx.rng, b.theta);
    cx.out.value = s + k.total_energy(b.p);
    cx.out.len = tries as usize;
    0
}

/// `MonomialGamma` (stiff, softened or softened power) as a `Kinetic`, and its own methods.
#[inline(always)]
pub fn kinetic_monomial_gamma<T: Real, Tag>(b: &mut Build<'_, T>, cx: Cx<'_, T, Tag>) -> i32 {
    let (a, c) = (cx.knobs.a, cx.knobs.c);
    let k = match cx.knobs.select & 3 {
        0 => MonomialGamma::stiff(a),
        1 => MonomialGamma::softened(a, c),
        _ => MonomialGamma::softened_power(a, c),
    };
    tri!(k.validate());
    let extra = k.a() + k.c() + k.softening_excess(cx.knobs.x);
    cx.out.other = extra;
    kinetic_ops(k, b, cx)
}

/// `Gaussian` (scaled or diagonal) as a `Kinetic`.
#[inline(always)]
pub fn kinetic_gaussian<T: Real, Tag>(b: &mut Build<'_, T>, cx: Cx<'_, T, Tag>) -> i32 {
    let inv: &mut [T] = core::mem::take(&mut b.inv_mass);
    let inv: &[T] = inv;
    let k = if cx.knobs.bit(0) {
        tri!(Gaussian::diagonal(inv))
    } else {
        tri!(Gaussian::scaled(cx.knobs.x))
    };
    cx.out.flags = u32::from(k.inverse_mass_diagonal().is_some());
    kinetic_ops(k, b, cx)
}

/// `StepSchedule`: constructors, `validate`, `at`, `sampling`.
#[inline(always)]
pub fn step_schedule<T: Real, Tag>(_: &mut Build<'_, T>, cx: Cx<'_, T, Tag>) -> i32 {
    let s = tri!(schedule(cx.knobs));
    tri!(s.validate());
    cx.out.value = s.at(cx.knobs.steps);
    cx.out.flags = u32::from(s.sampling(cx.knobs.first));
    0
}

/// The streaming diagnostics over the caller's values (θ), and the divergence monitor's
/// settings and verdict on a step's statistics from the knobs.
#[inline(always)]
pub fn diagnostics<T: Real, Tag>(b: &mut Build<'_, T>, cx: Cx<'_, T, Tag>) -> i32 {
    let mut moments = RunningMoments::<T>::new();
    let mut batches = BatchMeans::<T, 8>::new();
    let mut window = WindowedEss::<T, 32>::new();
    for &x in b.theta.iter() {
        tri!(moments.push(x));
        tri!(batches.push(x));
        tri!(window.push(x));
    }
    let monitor = tri!(DivergenceMonitor::new().with_temperature_limit(cx.knobs.x));
    let mut monitor = tri!(monitor.with_acceptance_floor(cx.knobs.a)).stopping();
    let stats = StepStats {
        step_size: cx.knobs.h,
        kinetic_temperature: Some(cx.knobs.b),
        thermostat: None,
        acceptance: Some(cx.knobs.c),
        accepted: None,
    };
    cx.out.flags = u32::from(monitor.check(cx.knobs.steps, &stats));
    cx.out.len = monitor.first_divergence().unwrap_or(0) as usize;
    cx.out.value = tri!(moments.variance()) + tri!(batches.mcse()) + tri!(batches.ess());
    cx.out.other = tri!(window.ess()) + tri!(window.integrated_time());
    0
}

/// `DualAveraging`: its settings from the knobs, and updates from the caller's values (θ) as
/// acceptance probabilities.
#[inline(always)]
pub fn dual_averaging<T: Real, Tag>(b: &mut Build<'_, T>, cx: Cx<'_, T, Tag>) -> i32 {
    let tuner = tri!(DualAveraging::new(cx.knobs.h));
    let tuner = tri!(tuner.with_target(cx.knobs.x));
    let mut tuner = tri!(tuner.with_schedule(cx.knobs.a, cx.knobs.b, cx.knobs.c));
    for &a in b.theta.iter() {
        cx.out.value = tuner.update(a);
    }
    cx.out.other = tuner.final_step_size();
    cx.out.len = tuner.count() as usize;
    0
}

/// `GradientScale`: the caller's model wrapped, gradients at θ through it (learning, then
/// frozen), and the inverse mass it gives, into the workspace.
#[inline(always)]
pub fn gradient_scale<T: Real, Tag>(b: &mut Build<'_, T>, cx: Cx<'_, T, Tag>) -> i32 {
    let n = b.theta.len();
    let (square_mean, rest) = tri!(b.work.split_at_mut_checked(n).ok_or(()));
    let (grad, rest) = tri!(rest.split_at_mut_checked(n).ok_or(()));
    let out = tri!(rest.get_mut(..n).ok_or(()));
    let mut scaled = tri!(GradientScale::new(cx.model, cx.knobs.h, square_mean));
    for k in 0..cx.knobs.count {
        if k == cx.knobs.count / 2 {
            scaled.freeze();
        }
        scaled.gradient(b.theta, grad);
    }
    cx.out.len = scaled.updates() as usize;
    tri!(scaled.inverse_mass(cx.knobs.a, out));
    0
}

/// `Adam` on the caller's model from θ, then a `ControlVariate` around the result (SVRG with
/// the refresh period from the knobs) asked for `count` estimates.
#[inline(always)]
pub fn control_variate<T: Real, Tag>(b: &mut Build<'_, T>, mut cx: Cx<'_, T, Tag>) -> i32 {
    let n = b.theta.len();
    let (adam_work, rest) = tri!(b.work.split_at_mut_checked(3 * n).ok_or(()));
    let (cv_work, rest) = tri!(rest.split_at_mut_checked(3 * n).ok_or(()));
    let grad = tri!(rest.get_mut(..n).ok_or(()));
    let mut adam = tri!(Adam::new(cx.knobs.h, b.theta, adam_work));
    tri!(adam.run(&mut cx.model, cx.knobs.steps));
    cx.out.value = adam.position().iter().fold(T::ZERO, |s, &x| s + x);
    drop(adam);
    let cv = tri!(ControlVariate::new(&mut cx.model, b.theta, cv_work));
    let mut cv = tri!(cv.with_refresh(u64::from(cx.knobs.count)));
    for _ in 0..cx.knobs.count {
        cv.gradient(b.theta, grad);
    }
    cx.out.len = cv.full_gradients() as usize;
    0
}
