//! Stack painting: fill the free stack with a pattern, run code, find the deepest word it overwrote.
//!
//! The free stack is everything between the end of the static data (`__sheap`, from cortex-m-rt's
//! linker script; no heap is used) and the current stack pointer. [`paint`] fills it with
//! [`PATTERN`] up to a small guard below the caller's frame and returns that stack pointer;
//! [`used_since`] scans up from `__sheap` for the first word that no longer holds the pattern
//! and returns how far below the painted stack pointer it lies: the stack the code run in
//! between used. (A word that happens to be written with the pattern itself would make the
//! figure low by at most that word's depth; at 0xDEADBEEF that is not a concern.)
//!
//! The only `unsafe` of the firmware: volatile reads and writes of the free stack, whose
//! bounds come from the linker symbol and the stack pointer; nothing else lives there.

use core::ptr::{addr_of, read_volatile, write_volatile};

const PATTERN: u32 = 0xDEAD_BEEF;
/// Bytes left unpainted below the stack pointer, for `paint`'s own frame.
const GUARD: usize = 64;

unsafe extern "C" {
    /// The first address after `.bss` and `.data` (cortex-m-rt's `link.x`).
    static __sheap: u32;
    /// The initial stack pointer, the top of the stack (cortex-m-rt's `link.x`: the end of RAM).
    static _stack_start: u32;
}

fn bottom() -> usize {
    addr_of!(__sheap) as usize
}

/// Paints the free stack; returns the stack pointer the figures of [`used_since`] are relative to.
#[inline(never)]
pub fn paint() -> usize {
    let sp = cortex_m::register::msp::read() as usize;
    let mut a = bottom();
    while a + 4 <= sp - GUARD {
        // SAFETY: [__sheap, sp − GUARD) is free stack below every live frame, word aligned
        // (__sheap is 4-aligned in link.x); no other code uses it while we write.
        unsafe { write_volatile(a as *mut u32, PATTERN) };
        a += 4;
    }
    sp
}

/// Bytes of stack used below `sp` (from [`paint`]) since it was painted.
#[inline(never)]
pub fn used_since(sp: usize) -> usize {
    let mut a = bottom();
    // SAFETY: reads of the same painted, word-aligned region.
    while a + 4 <= sp - GUARD && unsafe { read_volatile(a as *const u32) } == PATTERN {
        a += 4;
    }
    sp.saturating_sub(a)
}

/// Bytes of stack from its top down to the deepest word used since [`paint`] returned `sp`:
/// the frames above `sp` (the caller's, with whatever buffers it holds) and everything run
/// below it since. (The cost curve's: with the static data, the RAM the run needed.)
#[allow(dead_code)]
pub fn depth_since(sp: usize) -> usize {
    (addr_of!(_stack_start) as usize).saturating_sub(sp) + used_since(sp)
}
