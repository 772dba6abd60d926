//! pSGLD through the C ABI: the caller's V carries the chain across calls bit for bit as the core's `Psgld`, and each bad argument has its code with nothing changed.

use core::ffi::c_void;
use sgmcmc::prelude::*;
use sgmcmc_ffi::*;
use std::ptr::null_mut;

const N: usize = 4;
const MU: [f64; N] = [1.0, -2.0, 0.5, 3.0];
const VAR: [f64; N] = [1.0, 0.25, 4.0, 100.0];

fn core_model(t: &[f64], g: &mut [f64]) {
    for i in 0..N {
        g[i] = (t[i] - MU[i]) / VAR[i];
    }
}

extern "C" fn gaussian(theta: *const f64, grad: *mut f64, n: usize, _: *mut c_void) {
    // SAFETY: the library passes θ and the gradient buffer, both of n values.
    let (t, g) = unsafe {
        (
            std::slice::from_raw_parts(theta, n),
            std::slice::from_raw_parts_mut(grad, n),
        )
    };
    core_model(t, g);
}

extern "C" fn gaussian_f32(theta: *const f32, grad: *mut f32, n: usize, _: *mut c_void) {
    // SAFETY: as above.
    let (t, g) = unsafe {
        (
            std::slice::from_raw_parts(theta, n),
            std::slice::from_raw_parts_mut(grad, n),
        )
    };
    for i in 0..n {
        g[i] = (t[i] - MU[i] as f32) / VAR[i] as f32;
    }
}

/// NaN in coordinate 1 once the chain has passed θ₀ > 1.5 (so some steps complete first).
extern "C" fn nan_later(theta: *const f64, grad: *mut f64, n: usize, ctx: *mut c_void) {
    gaussian(theta, grad, n, ctx);
    // SAFETY: as above; ctx is the test's call counter.
    unsafe {
        *(ctx as *mut u64) += 1;
        if *(ctx as *mut u64) > 30 {
            *grad.add(1) = f64::NAN;
        }
    }
}

const NO_STATS: SgmcmcStats = SgmcmcStats {
    kinetic_temperature: 0.0,
    thermostat: 0.0,
    steps: 99,
};

/// Ten calls of 45 steps through the ABI, V kept in the caller's buffer, are the core's 450
/// steps, θ and V bit for bit (f64 and f32).
#[test]
fn calls_continue_the_cores_chain_bit_for_bit() {
    let (h, decay, offset) = (0.01, 0.9, 1e-3);
    let (mut theta, mut v, mut work) = ([0.0f64; N], [0.0f64; N], [7.0f64; 5 * N]);
    let mut rng = SgmcmcRng::from_seed(5);
    let mut stats = NO_STATS;
    for _ in 0..10 {
        // SAFETY: every pointer is to a live array of its documented length.
        let rc = unsafe {
            sgmcmc_psgld_f64(
                h,
                1.0,
                decay,
                offset,
                Some(gaussian),
                null_mut(),
                theta.as_mut_ptr(),
                v.as_mut_ptr(),
                work.as_mut_ptr(),
                N,
                45,
                &mut rng,
                &mut stats,
            )
        };
        assert_eq!((rc, stats.steps), (SGMCMC_OK, 45));
        assert!(stats.kinetic_temperature.is_nan() && stats.thermostat.is_nan());
    }
    let params = PsgldParams::new(h).with_decay(decay).with_offset(offset);
    let (mut t2, mut w2) = ([0.0f64; N], [0.0f64; 5 * N]);
    let mut core = Psgld::new(params, &mut t2, &mut w2).unwrap();
    let mut core_rng = SgmcmcRng::from_seed(5);
    let mut model: fn(&[f64], &mut [f64]) = core_model;
    core.run(&mut model, &mut core_rng, 450, &mut ()).unwrap();
    assert_eq!(core.position(), &theta[..]);
    assert_eq!(core.square_mean(), &v[..]);

    let (mut theta, mut v, mut work) = ([0.0f32; N], [0.0f32; N], [0.0f32; 5 * N]);
    let mut rng = SgmcmcRng::from_seed(6);
    for _ in 0..3 {
        // SAFETY: as above.
        let rc = unsafe {
            sgmcmc_psgld_f32(
                0.01,
                1.0,
                0.99,
                1e-5,
                Some(gaussian_f32),
                null_mut(),
                theta.as_mut_ptr(),
                v.as_mut_ptr(),
                work.as_mut_ptr(),
                N,
                30,
                &mut rng,
                null_mut(),
            )
        };
        assert_eq!(rc, SGMCMC_OK);
    }
    let (mut t2, mut w2) = ([0.0f32; N], [0.0f32; 5 * N]);
    let mut core = Psgld::new(PsgldParams::new(0.01f32), &mut t2, &mut w2).unwrap();
    let mut core_rng = SgmcmcRng::from_seed(6);
    let mut model = |t: &[f32], g: &mut [f32]| {
        for i in 0..N {
            g[i] = (t[i] - MU[i] as f32) / VAR[i] as f32;
        }
    };
    core.run(&mut model, &mut core_rng, 90, &mut ()).unwrap();
    assert_eq!(core.position(), &theta[..]);
    assert_eq!(core.square_mean(), &v[..]);
}

/// One call at T = 1 with the given settings and V over a fresh θ; returns the code, θ and V
/// after it and the steps completed.
fn call(
    decay: f64,
    offset: f64,
    v0: [f64; N],
    ctx: *mut c_void,
    model: extern "C" fn(*const f64, *mut f64, usize, *mut c_void),
) -> (i32, [f64; N], [f64; N], u64) {
    call_at(1.0, decay, offset, v0, ctx, model)
}

/// [`call`] at temperature `temperature`.
fn call_at(
    temperature: f64,
    decay: f64,
    offset: f64,
    v0: [f64; N],
    ctx: *mut c_void,
    model: extern "C" fn(*const f64, *mut f64, usize, *mut c_void),
) -> (i32, [f64; N], [f64; N], u64) {
    let (mut theta, mut v, mut work) = ([0.5f64; N], v0, [0.0f64; 5 * N]);
    let mut rng = SgmcmcRng::from_seed(9);
    let mut stats = NO_STATS;
    // SAFETY: every pointer is to a live array of its documented length.
    let rc = unsafe {
        sgmcmc_psgld_f64(
            0.01,
            temperature,
            decay,
            offset,
            Some(model),
            ctx,
            theta.as_mut_ptr(),
            v.as_mut_ptr(),
            work.as_mut_ptr(),
            N,
            100,
            &mut rng,
            &mut stats,
        )
    };
    (rc, theta, v, stats.steps)
}

#[test]
fn each_bad_argument_has_its_code() {
    let zero = [0.0; N];
    for (decay, offset, code) in [
        (1.0, 1e-5, SGMCMC_ERR_BAD_DECAY),
        (-0.5, 1e-5, SGMCMC_ERR_BAD_DECAY),
        (f64::NAN, 1e-5, SGMCMC_ERR_BAD_DECAY),
        (0.99, 0.0, SGMCMC_ERR_BAD_OFFSET),
        (0.99, f64::INFINITY, SGMCMC_ERR_BAD_OFFSET),
    ] {
        let (rc, theta, v, steps) = call(decay, offset, zero, null_mut(), gaussian);
        assert_eq!(
            (rc, theta, v, steps),
            (code, [0.5; N], zero, 0),
            "{decay} {offset}"
        );
    }
    // A negative or non-finite V on entry.
    for bad in [-1.0, f64::NAN] {
        let mut v0 = zero;
        v0[2] = bad;
        let (rc, theta, v, _) = call(0.99, 1e-5, v0, null_mut(), gaussian);
        assert_eq!(rc, SGMCMC_ERR_NON_FINITE_INPUT);
        assert_eq!(theta, [0.5; N]);
        assert_eq!(v[..2], v0[..2]);
    }
    // A NaN gradient after 30 calls: 30 steps complete, and θ and V are as after the 30th.
    let mut calls = 0u64;
    let (rc, theta, v, steps) = call(0.99, 1e-5, zero, (&raw mut calls).cast(), nan_later);
    assert_eq!((rc, steps), (SGMCMC_ERR_NON_FINITE_GRADIENT, 30));
    let (mut t2, mut w2) = ([0.5f64; N], [0.0f64; 5 * N]);
    let mut core = Psgld::new(PsgldParams::new(0.01), &mut t2, &mut w2).unwrap();
    let mut model: fn(&[f64], &mut [f64]) = core_model;
    core.run(&mut model, &mut SgmcmcRng::from_seed(9), 30, &mut ())
        .unwrap();
    assert_eq!((core.position(), core.square_mean()), (&theta[..], &v[..]));

    // V null, or overlapping θ.
    let (mut theta, mut work) = ([0.5f64; N], [0.0f64; 5 * N]);
    let mut rng = SgmcmcRng::from_seed(9);
    // SAFETY: the library must refuse these before touching anything.
    let (null, overlap) = unsafe {
        (
            sgmcmc_psgld_f64(
                0.01,
                1.0,
                0.99,
                1e-5,
                Some(gaussian),
                null_mut(),
                theta.as_mut_ptr(),
                null_mut(),
                work.as_mut_ptr(),
                N,
                10,
                &mut rng,
                null_mut(),
            ),
            sgmcmc_psgld_f64(
                0.01,
                1.0,
                0.99,
                1e-5,
                Some(gaussian),
                null_mut(),
                theta.as_mut_ptr(),
                theta.as_mut_ptr().add(1),
                work.as_mut_ptr(),
                N,
                10,
                &mut rng,
                null_mut(),
            ),
        )
    };
    assert_eq!((null, overlap), (SGMCMC_ERR_NULL, SGMCMC_ERR_OVERLAP));
    // A workspace of 3n: the caller's length is not checkable, but 5n is what the header says;
    // here only the documented length is used.
    assert_eq!(theta, [0.5; N]);
}

/// The temperature reaches pSGLD as the core's `with_temperature`: 100 steps at T = ½ through
/// the ABI are the core's `PsgldParams::with_temperature(0.5)` chain bit for bit (θ and V), and
/// differ from the T = 1 chain. (T = 1 against the core built without `with_temperature` is
/// `calls_continue_the_cores_chain_bit_for_bit`.) A negative, NaN or infinite T returns
/// `SGMCMC_ERR_BAD_TEMPERATURE` with θ and V unchanged and no step; it is checked right after h,
/// before α and λ.
#[test]
fn temperature_reaches_psgld_and_bad_ones_are_refused() {
    let zero = [0.0; N];
    let (rc, theta, v, steps) = call_at(0.5, 0.99, 1e-5, zero, null_mut(), gaussian);
    assert_eq!((rc, steps), (SGMCMC_OK, 100));
    let (mut t2, mut w2) = ([0.5f64; N], [0.0f64; 5 * N]);
    let params = PsgldParams::new(0.01).with_temperature(0.5);
    let mut core = Psgld::new(params, &mut t2, &mut w2).unwrap();
    let mut model: fn(&[f64], &mut [f64]) = core_model;
    core.run(&mut model, &mut SgmcmcRng::from_seed(9), 100, &mut ())
        .unwrap();
    assert_eq!((core.position(), core.square_mean()), (&theta[..], &v[..]));
    let (_, untempered, _, _) = call(0.99, 1e-5, zero, null_mut(), gaussian);
    assert_ne!(theta, untempered);

    for (temperature, decay, code) in [
        (-1.0, 0.99, SGMCMC_ERR_BAD_TEMPERATURE),
        (f64::NAN, 0.99, SGMCMC_ERR_BAD_TEMPERATURE),
        (f64::INFINITY, 0.99, SGMCMC_ERR_BAD_TEMPERATURE),
        // T before α.
        (-1.0, 1.0, SGMCMC_ERR_BAD_TEMPERATURE),
        (0.5, 1.0, SGMCMC_ERR_BAD_DECAY),
    ] {
        let (rc, theta, v, steps) = call_at(temperature, decay, 1e-5, zero, null_mut(), gaussian);
        assert_eq!(
            (rc, theta, v, steps),
            (code, [0.5; N], zero, 0),
            "T = {temperature}, α = {decay}"
        );
    }
}
