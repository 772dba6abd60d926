//! The runtime a libc-free x86_64 Linux binary needs: `_start`, raw `write`/`exit_group` syscalls, output and the panic handler.

use core::arch::{asm, global_asm};
use core::fmt;

/// `write(2)` on x86_64 Linux.
const SYS_WRITE: usize = 1;
/// `exit_group(2)` on x86_64 Linux: what libc's `_exit` calls. It ends every thread of the
/// process; with one thread it is the same as `exit(2)` (60).
const SYS_EXIT_GROUP: usize = 231;
/// `EINTR`, returned negated by an interrupted `write`.
const EINTR: isize = 4;

// The process entry point. The kernel jumps here with no return address on the stack and rsp
// 16-byte aligned, pointing at argc (then argv, envp, auxv). A Rust function expects
// rsp ≡ 8 (mod 16) on entry (just after a `call`), so `_start` cannot be an ordinary Rust
// function: it clears rbp (marks the outermost frame), passes the initial stack pointer, re-aligns
// rsp and *calls* into Rust, which never returns.
global_asm!(
    ".globl _start",
    ".type _start, @function",
    "_start:",
    "xor ebp, ebp",
    "mov rdi, rsp",
    "and rsp, -16",
    "call {entry}",
    "ud2",
    entry = sym entry,
);

/// Called by `_start`; exits with `crate::run`'s status.
extern "C" fn entry(_initial_stack: *const usize) -> ! {
    exit(crate::run())
}

/// Ends the process with `code` through a raw `exit_group` syscall.
pub fn exit(code: i32) -> ! {
    // SAFETY: `exit_group` reads only its integer argument and never returns; `syscall` clobbers
    // only rcx and r11, which do not matter for a call that does not return.
    unsafe {
        asm!(
            "syscall",
            in("rax") SYS_EXIT_GROUP,
            in("rdi") code as isize,
            options(noreturn, nostack),
        )
    }
}

/// One raw `write` syscall; returns the byte count or the negated errno.
fn write(fd: i32, buf: &[u8]) -> isize {
    let ret: isize;
    // SAFETY: the kernel reads `buf.len()` bytes from `buf.as_ptr()`, which `buf` guarantees
    // readable, and writes no user memory; `syscall` clobbers rcx and r11 (declared).
    unsafe {
        asm!(
            "syscall",
            inlateout("rax") SYS_WRITE as isize => ret,
            in("rdi") fd as isize,
            in("rsi") buf.as_ptr(),
            in("rdx") buf.len(),
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack, readonly),
        );
    }
    ret
}

/// A file descriptor as a `core::fmt::Write` sink (unbuffered: one syscall per piece).
#[derive(Clone, Copy, Debug)]
pub struct Fd(pub i32);

impl Fd {
    /// Standard output.
    pub const STDOUT: Fd = Fd(1);
    /// Standard error.
    pub const STDERR: Fd = Fd(2);
}

impl fmt::Write for Fd {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let mut rest = s.as_bytes();
        while !rest.is_empty() {
            match write(self.0, rest) {
                n if n > 0 => rest = &rest[n as usize..],
                n if n == -EINTR => {}
                _ => return Err(fmt::Error),
            }
        }
        Ok(())
    }
}

/// `println!` to standard output (output errors are ignored: there is nowhere to report them).
macro_rules! outln {
    ($($arg:tt)*) => {{
        use core::fmt::Write as _;
        let mut out = $crate::rt::Fd::STDOUT;
        let _ = writeln!(out, $($arg)*);
    }};
}
pub(crate) use outln;

/// Only for unoptimised (debug-assertion) builds: the precompiled `core` in the sysroot is built
/// with `panic = "unwind"`, so its cleanup landing pads name the personality routine. In the
/// release build, fat LTO re-optimises `core` together with this crate, proves that nothing can
/// unwind (the panic handler exits) and deletes those pads and the reference, so no definition is
/// needed there; at `opt-level = 0` that inference does not run, and the link would fail with
/// `undefined symbol: rust_eh_personality`. Nothing ever unwinds here (no unwinder is even
/// linked), so the routine is unreachable; if it were ever entered it exits with status 134
/// (SIGABRT's conventional code).
#[cfg(debug_assertions)]
#[unsafe(no_mangle)]
extern "C" fn rust_eh_personality() -> ! {
    exit(134)
}

/// Reports the panic on standard error and exits with status 101 (as a panicking std program
/// does). With `panic = "abort"` there is no unwinding, so no `rust_eh_personality` is needed.
#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    use core::fmt::Write as _;
    let mut err = Fd::STDERR;
    let _ = writeln!(err, "freestanding: {info}");
    exit(101)
}
