//! `memcpy`, `memmove`, `memset`, `memcmp` and `bcmp`: the symbols compiled Rust code calls, which libc would otherwise provide.
//!
//! Why they are defined here: `compiler_builtins` has them behind its `mem` feature, but the
//! prebuilt copy in the `x86_64-unknown-linux-gnu` sysroot is built *without* it, because on that
//! target libc supplies them (`readelf -s` on its objects shows `memcpy` only as an undefined
//! reference). Turning the feature on means rebuilding `core` with
//! `-Zbuild-std=core -Zbuild-std-features=compiler-builtins-mem`, which needs a nightly toolchain
//! *and* the `rust-src` component; neither is available to a stable build (and `rust-src` is not
//! installed on this machine). Linking with `-nostdlib` and no definitions fails with
//! `undefined reference to memcpy` / `memset`, so the binary brings its own.
//!
//! `memcpy`, `memmove` and `memset` are single `rep movsb` / `rep stosb` instructions (fast on
//! every x86_64 with ERMSB, and immune to LLVM's loop-idiom pass, which could otherwise turn a
//! copying loop *inside* `memcpy` into a call to `memcpy` — infinite recursion). `memcmp` is a
//! byte loop: LLVM has no idiom that rewrites a compare loop into a call.

use core::arch::asm;

/// Copies `n` bytes from `src` to `dest` (the regions must not overlap); returns `dest`.
///
/// # Safety
/// `src` must be readable and `dest` writable for `n` bytes, and the regions must not overlap.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memcpy(dest: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    // SAFETY: the caller guarantees both ranges; the System V ABI guarantees the direction flag
    // is clear on function entry, so `rep movsb` copies upwards.
    unsafe {
        asm!(
            "rep movsb",
            inout("rcx") n => _,
            inout("rdi") dest => _,
            inout("rsi") src => _,
            options(nostack, preserves_flags),
        );
    }
    dest
}

/// Copies `n` bytes from `src` to `dest`; the regions may overlap. Returns `dest`.
///
/// # Safety
/// `src` must be readable and `dest` writable for `n` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memmove(dest: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    if (dest as usize).wrapping_sub(src as usize) >= n {
        // dest < src, or dest ≥ src + n: an upward copy never reads a byte it already wrote.
        // SAFETY: as for `memcpy`.
        unsafe { memcpy(dest, src, n) }
    } else {
        // src < dest < src + n: copy downwards, from the last byte, with the direction flag set
        // for the copy and cleared again (the ABI requires it clear on return).
        // SAFETY: the caller guarantees both ranges; rdi/rsi start at their last bytes (n ≥ 1
        // here, since dest − src < n).
        unsafe {
            asm!(
                "std",
                "rep movsb",
                "cld",
                inout("rcx") n => _,
                inout("rdi") dest.add(n - 1) => _,
                inout("rsi") src.add(n - 1) => _,
                options(nostack),
            );
        }
        dest
    }
}

/// Sets `n` bytes at `s` to the low byte of `c`; returns `s`.
///
/// # Safety
/// `s` must be writable for `n` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memset(s: *mut u8, c: i32, n: usize) -> *mut u8 {
    // SAFETY: the caller guarantees the range; the direction flag is clear (ABI).
    unsafe {
        asm!(
            "rep stosb",
            inout("rcx") n => _,
            inout("rdi") s => _,
            in("al") c as u8,
            options(nostack, preserves_flags),
        );
    }
    s
}

/// Compares `n` bytes as unsigned chars: < 0, 0 or > 0 as `a` sorts before, equal to or after `b`.
///
/// # Safety
/// `a` and `b` must be readable for `n` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    let mut i = 0;
    while i < n {
        // SAFETY: i < n, and the caller guarantees n readable bytes at each pointer.
        let (x, y) = unsafe { (*a.add(i), *b.add(i)) };
        if x != y {
            return i32::from(x) - i32::from(y);
        }
        i += 1;
    }
    0
}

/// Zero iff the `n` bytes at `a` and `b` are equal (LLVM emits it for `==` on byte slices).
///
/// # Safety
/// `a` and `b` must be readable for `n` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    // SAFETY: same contract as `memcmp`.
    unsafe { memcmp(a, b, n) }
}
