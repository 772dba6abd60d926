//! The flash of every sampler × integrator × mass, as a firmware that builds that one combination links it: one out-of-line function per combination, built with the compile-time integrator and mass.
//!
//! Each `flash_<sampler>_<integrator>_<mass>` below (`#[no_mangle]`, `#[inline(never)]`) takes
//! one `f32` step of its combination, the sampler's type fixing the integrator ([`Euler`],
//! [`Splitting`]) and the mass ([`IdentityMass`], [`DiagonalMass`], [`DenseMass`]) at compile
//! time, so its code and the crate functions it calls are what a firmware that runs that
//! combination alone links. `tools/flash_report.py` sums, for each, the function and every
//! function of the crate it reaches through calls (the call graph of `llvm-objdump`), apart from
//! what any firmware shares (the ziggurat's tables and tail, libm, compiler-builtins, `core`):
//! the table of `docs/firmware.md`. The binary is built, not run: `main` reaches every function
//! through a `black_box` selector, so that the linker keeps them all.

#![no_std]
#![no_main]

#[allow(dead_code)] // the moment checks' constants
#[path = "../common.rs"]
mod common;
mod model;
#[allow(dead_code)] // the other firmware's printers
#[path = "../out.rs"]
mod out;

use core::hint::black_box;
use cortex_m_rt::entry;
use model::{Model, rng};
use rand_pcg::Pcg32;
use sgmcmc::kinetic::{Gaussian, MonomialGamma};
use sgmcmc::prelude::*;

/// The state size (the code does not depend on it: slices of run-time length).
const D: usize = 3;

type G = Model;

/// One step, out of line, under the combination's name.
macro_rules! flash {
    ($name:ident, $ty:ty) => {
        #[unsafe(no_mangle)]
        #[inline(never)]
        pub fn $name(sampler: &mut $ty, model: &mut G, rng: &mut Pcg32) -> bool {
            sampler.step(model, rng).is_ok()
        }
    };
}

type Sgmgt32<'a, I> = Sgmgt<'a, f32, MonomialGamma<f32>, Gaussian<'static, f32>, I>;

flash!(flash_sgld, Sgld<'_, f32>);
flash!(
    flash_sghmc_euler_identity,
    Sghmc<'_, f32, Euler, IdentityMass>
);
flash!(
    flash_sghmc_euler_diagonal,
    Sghmc<'_, f32, Euler, DiagonalMass<'_, f32>>
);
flash!(
    flash_sghmc_euler_dense,
    Sghmc<'_, f32, Euler, DenseMass<'_, f32>>
);
flash!(
    flash_sghmc_splitting_identity,
    Sghmc<'_, f32, Splitting, IdentityMass>
);
flash!(
    flash_sghmc_splitting_diagonal,
    Sghmc<'_, f32, Splitting, DiagonalMass<'_, f32>>
);
flash!(
    flash_sghmc_splitting_dense,
    Sghmc<'_, f32, Splitting, DenseMass<'_, f32>>
);
flash!(
    flash_sgnht_euler_identity,
    Sgnht<'_, f32, Euler, IdentityMass>
);
flash!(
    flash_sgnht_euler_diagonal,
    Sgnht<'_, f32, Euler, DiagonalMass<'_, f32>>
);
flash!(
    flash_sgnht_euler_dense,
    Sgnht<'_, f32, Euler, DenseMass<'_, f32>>
);
flash!(
    flash_sgnht_splitting_identity,
    Sgnht<'_, f32, Splitting, IdentityMass>
);
flash!(
    flash_sgnht_splitting_diagonal,
    Sgnht<'_, f32, Splitting, DiagonalMass<'_, f32>>
);
flash!(
    flash_sgnht_splitting_dense,
    Sgnht<'_, f32, Splitting, DenseMass<'_, f32>>
);
flash!(flash_msgnht_euler_identity, MSgnht<'_, f32, Euler>);
flash!(flash_msgnht_splitting_identity, MSgnht<'_, f32, Splitting>);
flash!(flash_sgmgt_d_euler_monomial_gamma, Sgmgt32<'_, Euler>);
flash!(
    flash_sgmgt_d_splitting_monomial_gamma,
    Sgmgt32<'_, Splitting>
);
flash!(flash_hmc_leapfrog_identity, Hmc<'_, f32, IdentityMass>);
flash!(
    flash_hmc_leapfrog_diagonal,
    Hmc<'_, f32, DiagonalMass<'_, f32>>
);
flash!(flash_hmc_leapfrog_dense, Hmc<'_, f32, DenseMass<'_, f32>>);

/// The buffers of one sampler.
struct Buffers {
    theta: [f32; D],
    p: [f32; D],
    xi: [f32; D],
    work: [f32; 4 * D],
    inv_mass: [f32; D],
    precision: [f32; D * D],
    dense_work: [f32; D * D + 3 * D],
    eigen: [f32; 2 * D * D + D],
}

impl Buffers {
    fn new() -> Self {
        let mut precision = [0.0; D * D];
        for i in 0..D {
            precision[i * D + i] = 1.0;
        }
        Buffers {
            theta: [0.0; D],
            p: [0.0; D],
            xi: [0.0; D],
            work: [0.0; 4 * D],
            inv_mass: [1.0; D],
            precision,
            dense_work: [0.0; D * D + 3 * D],
            eigen: [0.0; 2 * D * D + D],
        }
    }
}

/// Builds the combination `which` on fresh buffers and takes one step through its function.
fn run(which: usize) -> bool {
    let b = &mut Buffers::new();
    let (m, r) = (&mut Model, &mut rng());
    let h = black_box(0.1f32);
    let (theta, p, xi) = (&mut b.theta[..], &mut b.p[..], &mut b.xi[..]);
    let work2 = &mut b.work[..2 * D];
    macro_rules! sghmc {
        ($i:expr) => {
            Sghmc::new(SghmcParams::new(h).with_integrator($i), theta, p, work2)
        };
    }
    macro_rules! sgnht {
        ($i:expr, $xi:expr) => {
            Sgnht::resume(
                SgnhtParams::new(h).with_integrator($i),
                theta,
                p,
                $xi,
                work2,
            )
        };
    }
    let (diag, dense, dense_eigen) = (
        DiagonalMass::new(&mut b.inv_mass),
        DenseMass::new(&mut b.precision, &mut b.dense_work, D),
        (),
    );
    let _ = dense_eigen;
    let mut xi0_buffer = [1.0f32];
    let xi0 = &mut xi0_buffer[..];
    macro_rules! go {
        ($f:ident, $s:expr) => {
            match $s {
                Ok(mut s) => $f(&mut s, m, r),
                Err(_) => false,
            }
        };
    }
    match which {
        0 => go!(flash_sgld, Sgld::new(SgldParams::new(h), theta, work2)),
        1 => go!(
            flash_sghmc_euler_identity,
            sghmc!(Euler).and_then(|s| Ok(s.with_mass(IdentityMass)?))
        ),
        2 => match diag {
            Ok(d) => go!(
                flash_sghmc_euler_diagonal,
                sghmc!(Euler).and_then(|s| Ok(s.with_mass(d)?))
            ),
            Err(_) => false,
        },
        3 => match dense {
            Ok(d) => go!(
                flash_sghmc_euler_dense,
                sghmc!(Euler).and_then(|s| Ok(s.with_mass(d)?))
            ),
            Err(_) => false,
        },
        4 => go!(
            flash_sghmc_splitting_identity,
            sghmc!(Splitting).and_then(|s| Ok(s.with_mass(IdentityMass)?))
        ),
        5 => match diag {
            Ok(d) => go!(
                flash_sghmc_splitting_diagonal,
                sghmc!(Splitting).and_then(|s| Ok(s.with_mass(d)?))
            ),
            Err(_) => false,
        },
        6 => match DenseMass::with_eigen(&mut b.precision, &mut b.dense_work, &mut b.eigen, D) {
            Ok(d) => go!(
                flash_sghmc_splitting_dense,
                sghmc!(Splitting).and_then(|s| Ok(s.with_mass(d)?))
            ),
            Err(_) => false,
        },
        7 => go!(
            flash_sgnht_euler_identity,
            sgnht!(Euler, xi0).and_then(|s| Ok(s.with_mass(IdentityMass)?))
        ),
        8 => match diag {
            Ok(d) => go!(
                flash_sgnht_euler_diagonal,
                sgnht!(Euler, xi0).and_then(|s| Ok(s.with_mass(d)?))
            ),
            Err(_) => false,
        },
        9 => match dense {
            Ok(d) => go!(
                flash_sgnht_euler_dense,
                sgnht!(Euler, xi0).and_then(|s| Ok(s.with_mass(d)?))
            ),
            Err(_) => false,
        },
        10 => go!(
            flash_sgnht_splitting_identity,
            sgnht!(Splitting, xi0).and_then(|s| Ok(s.with_mass(IdentityMass)?))
        ),
        11 => match diag {
            Ok(d) => go!(
                flash_sgnht_splitting_diagonal,
                sgnht!(Splitting, xi0).and_then(|s| Ok(s.with_mass(d)?))
            ),
            Err(_) => false,
        },
        12 => match DenseMass::with_eigen(&mut b.precision, &mut b.dense_work, &mut b.eigen, D) {
            Ok(d) => go!(
                flash_sgnht_splitting_dense,
                sgnht!(Splitting, xi0).and_then(|s| Ok(s.with_mass(d)?))
            ),
            Err(_) => false,
        },
        13 => go!(
            flash_msgnht_euler_identity,
            MSgnht::resume(
                SgnhtParams::new(h).with_integrator(Euler),
                theta,
                p,
                xi,
                &mut b.work[..3 * D]
            )
        ),
        14 => go!(
            flash_msgnht_splitting_identity,
            MSgnht::resume(
                SgnhtParams::new(h).with_integrator(Splitting),
                theta,
                p,
                xi,
                &mut b.work[..3 * D]
            )
        ),
        15 => go!(
            flash_sgmgt_d_euler_monomial_gamma,
            Sgmgt::resume(
                SgmgtParams::sgmgt_d(h).with_integrator(Euler),
                theta,
                p,
                xi,
                &mut b.work[..3 * D]
            )
        ),
        16 => go!(
            flash_sgmgt_d_splitting_monomial_gamma,
            Sgmgt::resume(
                SgmgtParams::sgmgt_d(h).with_integrator(Splitting),
                theta,
                p,
                xi,
                &mut b.work[..3 * D]
            )
        ),
        17 => go!(
            flash_hmc_leapfrog_identity,
            Hmc::new(HmcParams::new(h), theta, p, &mut b.work[..])
                .and_then(|s| Ok(s.with_mass(IdentityMass)?))
        ),
        18 => match diag {
            Ok(d) => go!(
                flash_hmc_leapfrog_diagonal,
                Hmc::new(HmcParams::new(h), theta, p, &mut b.work[..])
                    .and_then(|s| Ok(s.with_mass(d)?))
            ),
            Err(_) => false,
        },
        _ => match dense {
            Ok(d) => go!(
                flash_hmc_leapfrog_dense,
                Hmc::new(HmcParams::new(h), theta, p, &mut b.work[..])
                    .and_then(|s| Ok(s.with_mass(d)?))
            ),
            Err(_) => false,
        },
    }
}

#[entry]
fn main() -> ! {
    let mut ok = true;
    for which in 0..20 {
        ok &= run(black_box(which));
    }
    common::finish(ok)
}
