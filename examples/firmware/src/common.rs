//! What both firmware binaries share: the float types they run, the Gaussian's parameters, the exit and the panic handler.

use crate::out;
use cortex_m_semihosting::debug;
use sgmcmc::Real;

/// The two float types, with a name and a way to print through `f32` (so an `f32`-only build
/// formats no `f64`).
pub trait Float: Real {
    const NAME: &'static str;
    fn show(self) -> f32;
}
impl Float for f32 {
    const NAME: &'static str = "f32";
    fn show(self) -> f32 {
        self
    }
}
#[cfg(feature = "f64")]
impl Float for f64 {
    const NAME: &'static str = "f64";
    fn show(self) -> f32 {
        self as f32
    }
}

/// The Gaussian posterior N(μ, diag σ²) in three coordinates (exact in `f32`); the cost curve
/// cycles through them in higher dimensions.
pub const MEAN: [f32; DIM] = [1.0, -0.5, 0.25];
pub const VAR: [f32; DIM] = [1.0, 0.5, 2.0];
pub const DIM: usize = 3;

/// Prints `<binary>: ok` and exits with status 0, or `<binary>: FAILED` and status 1
/// (semihosting `SYS_EXIT`; QEMU passes it on).
pub fn finish(ok: bool) -> ! {
    if ok {
        out::message(concat!(env!("CARGO_BIN_NAME"), ": ok"));
        debug::exit(debug::EXIT_SUCCESS);
    } else {
        out::message(concat!(env!("CARGO_BIN_NAME"), ": FAILED"));
        debug::exit(debug::EXIT_FAILURE);
    }
    loop {}
}

/// A panic is a failure: report it and exit with status 1. (No build links a panic path today
/// — `tools/panic_sites.py` fails CI if one comes back — so this is never reached; it prints
/// without `core::fmt` so as not to pull in the formatting machinery itself.)
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    out::message(concat!(env!("CARGO_BIN_NAME"), ": panic"));
    debug::exit(debug::EXIT_FAILURE);
    loop {}
}
