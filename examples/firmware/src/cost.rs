//! Instructions per step under QEMU's `-icount shift=0`: SysTick ticks of a batch of steps, calibrated against a loop of known length.
//!
//! With `-icount shift=0` QEMU's virtual clock advances exactly 1 ns per executed guest
//! instruction, and SysTick (clocked by the core) counts that virtual time; so the ratio of the
//! ticks of [`STEPS`] steps to the ticks of [`calibration`]'s loop, whose instruction count
//! is known exactly ([`CALIBRATION_INSTRUCTIONS`]), is their ratio of executed instructions,
//! whatever the board's clock (25 MHz on the MPS2 boards: 40 instructions per tick, so the
//! count of a batch is resolved to a few parts in 10⁴). Without `-icount`, SysTick follows the
//! host's wall clock and the figures mean nothing; `tools/firmware.sh` runs QEMU with it.

use cortex_m::peripheral::SYST;
use cortex_m::peripheral::syst::SystClkSource;

/// Steps per timed batch.
pub const STEPS: u32 = 64;
/// Iterations of the calibration loop, 255·2⁸ (loaded by `movs` of 255 and a shift: Thumb-1
/// immediates are 8 bits); each is one `subs` and one `bne`.
const ITERATIONS: u32 = 255 << 8;
/// Instructions the calibration loop executes: two per iteration, plus the `movs` and `lsls`
/// that load the count (the SysTick reads on either side are the same in the calibration and
/// in a timed batch, and are far below a tick).
pub const CALIBRATION_INSTRUCTIONS: u32 = 2 * ITERATIONS + 2;

/// Starts SysTick free-running from the core clock over its full 24-bit range.
pub fn start(mut syst: SYST) {
    syst.set_clock_source(SystClkSource::Core);
    syst.set_reload(0x00FF_FFFF);
    syst.clear_current();
    syst.enable_counter();
}

/// The current SysTick count (it counts down).
pub fn now() -> u32 {
    SYST::get_current()
}

/// Ticks from `start` to `end` (one wrap at most: 2²⁴ ticks, 6.7·10⁸ instructions here).
pub fn ticks(start: u32, end: u32) -> u32 {
    start.wrapping_sub(end) & 0x00FF_FFFF
}

/// (SysTick ticks, instructions) of a loop of exactly [`CALIBRATION_INSTRUCTIONS`] instructions.
pub fn calibration() -> (u32, u32) {
    (calibration_ticks(), CALIBRATION_INSTRUCTIONS)
}

/// SysTick ticks of a loop of exactly [`CALIBRATION_INSTRUCTIONS`] instructions.
#[inline(never)]
fn calibration_ticks() -> u32 {
    let t0 = now();
    // SAFETY: a register-only countdown loop: no memory, no stack, flags clobbered.
    unsafe {
        core::arch::asm!(
            "movs {n}, #255",
            "lsls {n}, {n}, #8",
            "2:",
            "subs {n}, #1",
            "bne 2b",
            n = out(reg) _,
            options(nomem, nostack),
        );
    }
    ticks(t0, now())
}
