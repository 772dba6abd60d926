//! The C ABI under the fuzzer: every entry point with pointers anywhere in one arena (overlapping, misaligned, null), any n, step count and temperature, gradients that fail.
//!
//! Checked after every call: a call refused by the pointer, length or overlap checks
//! (`SGMCMC_ERR_NULL`, `_LENGTH`, `_OVERLAP`) changed no byte of the arena; any other call
//! changed no byte outside the regions it may write (θ, p, ξ, the workspace, the step counter,
//! the generator, the statistics) — the noise estimates are only read; and a call that returned
//! `SGMCMC_OK` left θ finite. The arena's words all start as finite floats in both precisions.

use crate::{PARAMS, Reader};
use core::ffi::c_void;
use sgmcmc_ffi::*;

/// Temperatures: 1 first (what an input's missing bytes choose: the untempered chain), cold,
/// hot, 0 (no noise), tiny, and the refused negative and non-finite ones.
const TEMPERATURES: [f64; 9] = [
    1.0,
    0.5,
    2.0,
    0.0,
    1e-30,
    -1.0,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
];

/// Arena size in 8-byte words.
const WORDS: usize = 192;
const BYTES: usize = WORDS * 8;

/// Counts of what a run did.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tally {
    /// Calls made.
    pub calls: u64,
    /// Calls refused by the pointer, length or overlap checks.
    pub refused: u64,
}

/// The gradient's context: a call counter and the call at which it writes NaN.
struct Ctx {
    calls: u64,
    nan_at: u64,
}

/// ∇U(θ) = θ, with NaN in g[0] at the context's chosen call: the body of both gradients below.
fn identity_gradient<T: Copy>(t: &[T], g: &mut [T], c: &mut Ctx, nan: T) {
    c.calls += 1;
    for (g, &t) in g.iter_mut().zip(t) {
        *g = t;
    }
    if c.calls == c.nan_at {
        g[0] = nan;
    }
}

extern "C" fn grad_f64(theta: *const f64, grad: *mut f64, n: usize, ctx: *mut c_void) {
    // SAFETY: the library passes n-element arrays and our `Ctx`.
    let (t, g, c) = unsafe {
        (
            core::slice::from_raw_parts(theta, n),
            core::slice::from_raw_parts_mut(grad, n),
            &mut *(ctx as *mut Ctx),
        )
    };
    identity_gradient(t, g, c, f64::NAN);
}

extern "C" fn grad_f32(theta: *const f32, grad: *mut f32, n: usize, ctx: *mut c_void) {
    // SAFETY: as for `grad_f64`.
    let (t, g, c) = unsafe {
        (
            core::slice::from_raw_parts(theta, n),
            core::slice::from_raw_parts_mut(grad, n),
            &mut *(ctx as *mut Ctx),
        )
    };
    identity_gradient(t, g, c, f32::NAN);
}

/// Pointer arguments, by role.
#[derive(Clone, Copy)]
enum Role {
    Theta,
    P,
    Xi,
    Work,
    Noise,
    Count,
    Rng,
    Stats,
}

const ROLES: [Role; 8] = [
    Role::Theta,
    Role::P,
    Role::Xi,
    Role::Work,
    Role::Noise,
    Role::Count,
    Role::Rng,
    Role::Stats,
];

/// Runs one fuzz input; panics on a broken promise.
pub fn run(data: &[u8]) {
    let _ = run_counted(data);
}

/// [`run`], returning what it did.
pub fn run_counted(data: &[u8]) -> Tally {
    let mut r = Reader::new(data);
    let mut tally = Tally::default();
    for _ in 0..1 + r.below(4) {
        tally.calls += 1;
        if call(&mut r) {
            tally.refused += 1;
        }
    }
    tally
}

/// One call; returns whether the checks refused it.
fn call(r: &mut Reader) -> bool {
    let mut arena = vec![0u64; WORDS];
    for (k, w) in arena.iter_mut().enumerate() {
        // 0.5 + k/64 as f64: finite, and its two halves are finite f32 values.
        *w = (0.5 + k as f64 / 64.0).to_bits();
    }
    let single = r.bool();
    let size = if single { 4 } else { 8 };
    let entry = r.below(6);
    let n = r.below(9);
    // Entry 0 is SGLD for an even n and pSGLD (6, V in p's slot) for an odd one: no new byte,
    // so the committed inputs reach the entries they reached before.
    let entry = if entry == 0 && n % 2 == 1 { 6 } else { entry };
    let steps = r.below(5) as u64;
    let per_coordinate = matches!(entry, 3..=5);
    let lens = |role: Role| -> usize {
        match role {
            Role::Theta | Role::P | Role::Noise => n * size,
            Role::Xi => {
                if entry == 2 {
                    size
                } else {
                    n * size
                }
            }
            Role::Work => {
                n * size
                    * match entry {
                        6 => 5,
                        _ if per_coordinate => 3,
                        _ => 2,
                    }
            }
            Role::Count => 8,
            Role::Rng => 16,
            Role::Stats => 24,
        }
    };
    // Each pointer: null (1 in 16), or a byte offset that keeps its region inside the arena,
    // aligned for its type (3 in 4) or not.
    let base = arena.as_mut_ptr() as *mut u8;
    let mut offsets = [None; 8];
    for (slot, &role) in offsets.iter_mut().zip(&ROLES) {
        if r.below(16) == 0 {
            continue;
        }
        let len = lens(role);
        let room = BYTES.saturating_sub(len);
        let align = match role {
            Role::Count | Role::Rng | Role::Stats => 8,
            _ => size,
        };
        let mut off = r.below(room + 1) / align * align;
        if r.below(4) == 0 {
            off = (off + 1 + r.below(align - 1)).min(room);
        }
        *slot = Some(off);
    }
    let ptr = |role: Role| -> *mut u8 {
        match offsets[role as usize] {
            // SAFETY: within the arena (offset + length ≤ BYTES by construction).
            Some(off) => unsafe { base.add(off) },
            None => core::ptr::null_mut(),
        }
    };
    let before: Vec<u8> = bytes(&arena);
    let mut ctx = Ctx {
        calls: 0,
        nan_at: r.below(8) as u64,
    };
    let ctx_ptr = &mut ctx as *mut Ctx as *mut c_void;
    let (h, a, b) = (r.pick(&PARAMS), r.pick(&PARAMS), r.pick(&PARAMS));
    let integrator = r.pick(&[SGMCMC_EULER, SGMCMC_SPLITTING, 7]);
    let (rng, stats) = (
        ptr(Role::Rng) as *mut SgmcmcRng,
        ptr(Role::Stats) as *mut SgmcmcStats,
    );
    let count = ptr(Role::Count) as *mut u64;
    let (res_a, res_c) = (r.below(4) as u32, r.below(4) as u32);
    // Read after every earlier choice, so that each input's first call makes the choices it
    // made before the temperature existed (and takes T = 1 where its bytes have run out).
    let temperature = r.pick(&TEMPERATURES);
    // SAFETY: every non-null pointer lies in the live arena with its whole region; the arena
    // holds initialised words; nothing else touches it during the call; the callbacks accept
    // any n and our context.
    let rc = unsafe {
        macro_rules! calls {
            ($t:ty, $grad:ident, $sgld:ident, $psgld:ident, $sghmc:ident, $sgnht:ident, $msgnht:ident, $sgmgt:ident, $sgmgt_b:ident) => {{
                let f = |role| ptr(role) as *mut $t;
                let q = SgmcmcSgmgtParams::<$t> {
                    h: h as $t,
                    sigma_p: a as $t,
                    gamma: 1.0,
                    sigma_theta: b as $t,
                    sigma_xi: 0.01,
                    a: if res_a & 1 == 0 { 1.0 } else { 2.0 },
                    c: 5.0,
                    resample_momentum: res_a,
                    resample_thermostat: res_c,
                    integrator,
                    noise_estimate: 0.0,
                    temperature: temperature as $t,
                };
                let g = Some($grad as extern "C" fn(*const $t, *mut $t, usize, *mut c_void));
                match entry {
                    6 => $psgld(
                        h as $t,
                        temperature as $t,
                        (a as $t).abs().min(0.999),
                        b as $t,
                        g,
                        ctx_ptr,
                        f(Role::Theta),
                        f(Role::P),
                        f(Role::Work),
                        n,
                        steps,
                        rng,
                        stats,
                    ),
                    0 => $sgld(
                        h as $t,
                        temperature as $t,
                        g,
                        ctx_ptr,
                        f(Role::Theta),
                        f(Role::Work),
                        n,
                        steps,
                        rng,
                        stats,
                    ),
                    1 => $sghmc(
                        h as $t,
                        temperature as $t,
                        a as $t,
                        b as $t,
                        integrator,
                        g,
                        ctx_ptr,
                        f(Role::Theta),
                        f(Role::P),
                        f(Role::Work),
                        n,
                        steps,
                        rng,
                        stats,
                    ),
                    2 => $sgnht(
                        h as $t,
                        temperature as $t,
                        a as $t,
                        integrator,
                        g,
                        ctx_ptr,
                        f(Role::Theta),
                        f(Role::P),
                        f(Role::Xi),
                        f(Role::Work),
                        n,
                        steps,
                        rng,
                        stats,
                    ),
                    3 => $msgnht(
                        h as $t,
                        temperature as $t,
                        a as $t,
                        integrator,
                        g,
                        ctx_ptr,
                        f(Role::Theta),
                        f(Role::P),
                        f(Role::Xi),
                        f(Role::Work),
                        n,
                        steps,
                        rng,
                        stats,
                    ),
                    4 => $sgmgt(
                        q,
                        g,
                        ctx_ptr,
                        f(Role::Theta),
                        f(Role::P),
                        f(Role::Xi),
                        f(Role::Work),
                        n,
                        steps,
                        count,
                        rng,
                        stats,
                    ),
                    _ => $sgmgt_b(
                        q,
                        f(Role::Noise).cast_const(),
                        g,
                        ctx_ptr,
                        f(Role::Theta),
                        f(Role::P),
                        f(Role::Xi),
                        f(Role::Work),
                        n,
                        steps,
                        count,
                        rng,
                        stats,
                    ),
                }
            }};
        }
        if single {
            calls!(
                f32,
                grad_f32,
                sgmcmc_sgld_f32,
                sgmcmc_psgld_f32,
                sgmcmc_sghmc_f32,
                sgmcmc_sgnht_f32,
                sgmcmc_msgnht_f32,
                sgmcmc_sgmgt_f32,
                sgmcmc_sgmgt_noise_estimates_f32
            )
        } else {
            calls!(
                f64,
                grad_f64,
                sgmcmc_sgld_f64,
                sgmcmc_psgld_f64,
                sgmcmc_sghmc_f64,
                sgmcmc_sgnht_f64,
                sgmcmc_msgnht_f64,
                sgmcmc_sgmgt_f64,
                sgmcmc_sgmgt_noise_estimates_f64
            )
        }
    };
    let after = bytes(&arena);
    let refused = matches!(rc, SGMCMC_ERR_NULL | SGMCMC_ERR_LENGTH | SGMCMC_ERR_OVERLAP);
    if refused {
        assert!(
            before == after,
            "entry {entry}: refused with {rc} but wrote"
        );
        assert_eq!(
            ctx.calls, 0,
            "entry {entry}: refused with {rc} but called back"
        );
        return true;
    }
    // Which bytes the call may write: the state, the workspace, counter, generator, stats.
    let takes = |role: Role| match role {
        Role::P => entry >= 1,
        Role::Xi => (2..=5).contains(&entry),
        Role::Count => (4..=5).contains(&entry),
        Role::Noise => false,
        _ => true,
    };
    let mut writable = vec![false; BYTES];
    for &role in &ROLES {
        if let Some(off) = offsets[role as usize]
            && takes(role)
        {
            writable[off..off + lens(role)].fill(true);
        }
    }
    for (k, (x, y)) in before.iter().zip(&after).enumerate() {
        assert!(
            x == y || writable[k],
            "entry {entry}: rc {rc} wrote byte {k} outside its arguments"
        );
    }
    // A refused temperature runs nothing: the call fails before the callback, and with
    // `SGMCMC_ERR_BAD_TEMPERATURE` it has left the chain's state (θ, p, ξ, the step counter and
    // the generator) as it was — only the workspace and the statistics may have been reset.
    let cast = if single {
        f64::from(temperature as f32)
    } else {
        temperature
    };
    if !(cast.is_finite() && cast >= 0.0) {
        assert!(
            rc != SGMCMC_OK && ctx.calls == 0,
            "entry {entry}: T = {temperature} ran (rc {rc})"
        );
    }
    if rc == SGMCMC_ERR_BAD_TEMPERATURE {
        assert_eq!(ctx.calls, 0, "entry {entry}: refused T but called back");
        for role in [Role::Theta, Role::P, Role::Xi, Role::Count, Role::Rng] {
            if let Some(off) = offsets[role as usize]
                && takes(role)
            {
                let range = off..off + lens(role);
                assert!(
                    before[range.clone()] == after[range],
                    "entry {entry}: refused T but changed its state"
                );
            }
        }
    }
    if rc == SGMCMC_OK
        && let Some(off) = offsets[Role::Theta as usize]
    {
        let theta = &after[off..off + n * size];
        let finite = if single {
            theta
                .chunks(4)
                .all(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]]).is_finite())
        } else {
            theta.chunks(8).all(|c| {
                f64::from_ne_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]).is_finite()
            })
        };
        assert!(finite, "entry {entry}: OK with a non-finite θ");
    }
    false
}

fn bytes(arena: &[u64]) -> Vec<u8> {
    arena.iter().flat_map(|w| w.to_ne_bytes()).collect()
}
