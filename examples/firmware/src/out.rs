//! The firmware's report lines over semihosting: as text built without `core::fmt`, or (feature `defmt`) as defmt frames decoded on the host.
//!
//! Text: `core::fmt`'s float formatting (Grisu with a Dragon fallback) and even its integer
//! formatting carry bounds checks that link panic entry points; the firmware must link none
//! (`tools/panic_sites.py` checks it), so lines are built by [`Line`] instead: every access is
//! checked (`get`, iterators), digits come from division by constants, and a line longer than
//! the buffer is cut, never a panic.
//!
//! defmt: the same lines (ASCII: `th`, `mu`, `+-`, `s2`) as `defmt::println!` frames, written
//! to the host's standard output by a global logger over `cortex-m-semihosting` (below; the
//! published `defmt-semihosting` panics on re-entry, which would link a panic path). The host
//! decodes them with `defmt-print` against the ELF (`tools/firmware.sh`).

#[cfg(not(feature = "defmt"))]
use cortex_m_semihosting::hio;

/// One moment check: the estimate, the truth and the tolerance of a mean and a variance.
pub struct Check<'a> {
    pub pass: bool,
    /// Model tag (`""` or `"lr-"`), sampler name, float type.
    pub case: (&'a str, &'a str, &'a str),
    pub coordinate: u32,
    pub mean: (f32, f32, f32),
    pub var: (f32, f32, f32),
}

/// One point of the cost curve (`src/curve/main.rs`): a sampler's SysTick ticks and its
/// hand-written reference's over the same steps, and how far apart their final θ ended.
#[allow(dead_code)] // the cost curve's (`src/curve/main.rs`)
pub struct Curve<'a> {
    /// Sampler name, float type.
    pub case: (&'a str, &'a str),
    /// The dimension d.
    pub dim: u32,
    /// Ticks of the timed steps: the crate's sampler, the reference.
    pub ticks: (u32, u32),
    /// Steps timed (each side).
    pub steps: u32,
    /// The calibration loop: (ticks, instructions).
    pub calibration: (u32, u32),
    /// max |θ_crate − θ_reference| over the coordinates after the run.
    pub max_diff: f32,
}

/// `PASS|FAIL <tag><name> <type> θ<i>: mean m (μ μ, ±tol), var v (σ² σ², ±tol)`.
#[cfg(not(feature = "defmt"))]
pub fn check(c: &Check<'_>) {
    let (tag, name, ty) = c.case;
    Line::new()
        .text(if c.pass { "PASS " } else { "FAIL " })
        .text(tag)
        .text(name)
        .text(" ")
        .text(ty)
        .text(" θ")
        .uint(c.coordinate)
        .text(": mean ")
        .fixed4(c.mean.0)
        .text(" (μ ")
        .fixed4(c.mean.1)
        .text(", ±")
        .fixed4(c.mean.2)
        .text("), var ")
        .fixed4(c.var.0)
        .text(" (σ² ")
        .fixed4(c.var.1)
        .text(", ±")
        .fixed4(c.var.2)
        .text(")")
        .emit();
}

/// `stack <name> <type>: <bytes> bytes for one step`.
#[cfg(not(feature = "defmt"))]
pub fn stack(name: &str, ty: &str, bytes: u32) {
    Line::new()
        .text("stack ")
        .text(name)
        .text(" ")
        .text(ty)
        .text(": ")
        .uint(bytes)
        .text(" bytes for one step")
        .emit();
}

/// `cost <name> <type>: <ticks> ticks for <steps> steps, <ticks> ticks for <n> instructions`.
#[cfg(not(feature = "defmt"))]
pub fn cost(name: &str, ty: &str, (ticks, steps): (u32, u32), (cal_ticks, cal): (u32, u32)) {
    Line::new()
        .text("cost ")
        .text(name)
        .text(" ")
        .text(ty)
        .text(": ")
        .uint(ticks)
        .text(" ticks for ")
        .uint(steps)
        .text(" steps, ")
        .uint(cal_ticks)
        .text(" ticks for ")
        .uint(cal)
        .text(" instructions")
        .emit();
}

/// `curve <name> <type> d <d>: crate <ticks>, reference <ticks> ticks for <steps> steps,
/// <ticks> ticks for <n> instructions, max |Δθ| <x.xxe±y>`.
#[cfg(not(feature = "defmt"))]
#[allow(dead_code)] // the cost curve's (`src/curve/main.rs`)
pub fn curve(c: &Curve<'_>) {
    let (name, ty) = c.case;
    Line::new()
        .text("curve ")
        .text(name)
        .text(" ")
        .text(ty)
        .text(" d ")
        .uint(c.dim)
        .text(": crate ")
        .uint(c.ticks.0)
        .text(", reference ")
        .uint(c.ticks.1)
        .text(" ticks for ")
        .uint(c.steps)
        .text(" steps, ")
        .uint(c.calibration.0)
        .text(" ticks for ")
        .uint(c.calibration.1)
        .text(" instructions, max |Δθ| ")
        .sci(c.max_diff)
        .emit();
}

/// `pin <name> state=<hex> stats=<hex>`: a `tests/value_stability.rs` case's two hashes.
#[cfg(not(feature = "defmt"))]
#[allow(dead_code)] // the cost curve's (`src/curve/pins.rs`)
pub fn pin(name: &str, state: u64, stats: u64) {
    Line::new()
        .text("pin ")
        .text(name)
        .text(" state=")
        .hex64(state)
        .text(" stats=")
        .hex64(stats)
        .emit();
}

/// `draw <type> <hex>`: a draw of the diagnostics chain, its bits.
#[cfg(not(feature = "defmt"))]
pub fn draw(ty: &str, bits: u64) {
    Line::new()
        .text("draw ")
        .text(ty)
        .text(" ")
        .hex64(bits)
        .emit();
}

/// `diagnostics <type> n=<n> batches=<k> batch=<b> window=<w> mean=<hex> var=<hex> mcse=<hex>
/// ess_bm=<hex> ess_window=<hex>`: the device's estimates over the `draw` lines, as bits.
#[cfg(not(feature = "defmt"))]
pub fn diagnostics(ty: &str, (n, k, b, w): (u32, u32, u32, u32), bits: [u64; 5]) {
    let names = [" mean=", " var=", " mcse=", " ess_bm=", " ess_window="];
    let mut line = Line::new()
        .text("diagnostics ")
        .text(ty)
        .text(" n=")
        .uint(n)
        .text(" batches=")
        .uint(k)
        .text(" batch=")
        .uint(b)
        .text(" window=")
        .uint(w);
    for (name, x) in names.iter().zip(bits) {
        line = line.text(name).hex64(x);
    }
    line.emit();
}

/// `peak stack: <bytes> bytes from the top of RAM`.
#[cfg(not(feature = "defmt"))]
#[allow(dead_code)] // the cost curve's (`src/curve/main.rs`)
pub fn peak_stack(bytes: u32) {
    Line::new()
        .text("peak stack: ")
        .uint(bytes)
        .text(" bytes from the top of RAM")
        .emit();
}

/// `FAIL <tag><name> <type>: <what>`.
#[cfg(not(feature = "defmt"))]
pub fn failure((tag, name, ty): (&str, &str, &str), what: &str) {
    Line::new()
        .text("FAIL ")
        .text(tag)
        .text(name)
        .text(" ")
        .text(ty)
        .text(": ")
        .text(what)
        .emit();
}

/// A line of text.
#[cfg(not(feature = "defmt"))]
pub fn message(text: &str) {
    Line::new().text(text).emit();
}

#[cfg(feature = "defmt")]
pub fn check(c: &Check<'_>) {
    let (tag, name, ty) = c.case;
    defmt::println!(
        "{=str} {=str}{=str} {=str} th{=u32}: mean {=f32} (mu {=f32}, +-{=f32}), var {=f32} (s2 {=f32}, +-{=f32})",
        if c.pass { "PASS" } else { "FAIL" },
        tag,
        name,
        ty,
        c.coordinate,
        c.mean.0,
        c.mean.1,
        c.mean.2,
        c.var.0,
        c.var.1,
        c.var.2
    );
}

#[cfg(feature = "defmt")]
pub fn stack(name: &str, ty: &str, bytes: u32) {
    defmt::println!(
        "stack {=str} {=str}: {=u32} bytes for one step",
        name,
        ty,
        bytes
    );
}

#[cfg(feature = "defmt")]
pub fn cost(name: &str, ty: &str, (ticks, steps): (u32, u32), (cal_ticks, cal): (u32, u32)) {
    defmt::println!(
        "cost {=str} {=str}: {=u32} ticks for {=u32} steps, {=u32} ticks for {=u32} instructions",
        name,
        ty,
        ticks,
        steps,
        cal_ticks,
        cal
    );
}

#[cfg(feature = "defmt")]
#[allow(dead_code)] // the cost curve's (`src/curve/main.rs`)
pub fn curve(c: &Curve<'_>) {
    defmt::println!(
        "curve {=str} {=str} d {=u32}: crate {=u32}, reference {=u32} ticks for {=u32} steps, {=u32} ticks for {=u32} instructions, max |dtheta| {=f32}",
        c.case.0,
        c.case.1,
        c.dim,
        c.ticks.0,
        c.ticks.1,
        c.steps,
        c.calibration.0,
        c.calibration.1,
        c.max_diff
    );
}

#[cfg(feature = "defmt")]
#[allow(dead_code)] // the cost curve's (`src/curve/main.rs`)
pub fn peak_stack(bytes: u32) {
    defmt::println!("peak stack: {=u32} bytes from the top of RAM", bytes);
}

#[cfg(feature = "defmt")]
pub fn draw(ty: &str, bits: u64) {
    defmt::println!("draw {=str} {=u64:016x}", ty, bits);
}

#[cfg(feature = "defmt")]
pub fn diagnostics(ty: &str, (n, k, b, w): (u32, u32, u32, u32), x: [u64; 5]) {
    let [mean, var, mcse, ess_bm, ess_window] = x;
    defmt::println!(
        "diagnostics {=str} n={=u32} batches={=u32} batch={=u32} window={=u32} mean={=u64:016x} var={=u64:016x} mcse={=u64:016x} ess_bm={=u64:016x} ess_window={=u64:016x}",
        ty,
        n,
        k,
        b,
        w,
        mean,
        var,
        mcse,
        ess_bm,
        ess_window
    );
}

#[cfg(feature = "defmt")]
pub fn failure((tag, name, ty): (&str, &str, &str), what: &str) {
    defmt::println!("FAIL {=str}{=str} {=str}: {=str}", tag, name, ty, what);
}

#[cfg(feature = "defmt")]
pub fn message(text: &str) {
    defmt::println!("{=str}", text);
}

/// defmt's global logger: frames encoded by `defmt::Encoder` and written to the host's standard
/// output through `cortex-m-semihosting`, interrupts masked from `acquire` to `release`.
#[cfg(feature = "defmt")]
mod logger {
    use core::cell::UnsafeCell;
    use core::sync::atomic::{AtomicBool, Ordering};
    use cortex_m_semihosting::hio::{self, HostStream};

    #[defmt::global_logger]
    struct Logger;

    /// What `defmt::panic!` and friends call: report and exit with status 1 (defmt's default
    /// calls `core::panic!`, which would link a panic path; nothing in the firmware calls it).
    #[defmt::panic_handler]
    fn defmt_panic() -> ! {
        cortex_m_semihosting::debug::exit(cortex_m_semihosting::debug::EXIT_FAILURE);
        loop {}
    }

    /// The encoder and the host stream; only touched between `acquire` and `release`.
    struct State {
        encoder: UnsafeCell<defmt::Encoder>,
        stdout: UnsafeCell<Option<HostStream>>,
        interrupts_were_enabled: UnsafeCell<bool>,
    }
    // SAFETY: single core; every access happens with interrupts masked and `TAKEN` set.
    unsafe impl Sync for State {}

    static STATE: State = State {
        encoder: UnsafeCell::new(defmt::Encoder::new()),
        stdout: UnsafeCell::new(None),
        interrupts_were_enabled: UnsafeCell::new(false),
    };
    static TAKEN: AtomicBool = AtomicBool::new(false);

    fn write_bytes(bytes: &[u8]) {
        // SAFETY: called only while the logger is acquired (below).
        let stdout = unsafe { &mut *STATE.stdout.get() };
        if stdout.is_none() {
            *stdout = hio::hstdout().ok();
        }
        if let Some(out) = stdout {
            let _ = out.write_all(bytes);
        }
    }

    // SAFETY: acquire/release bracket every frame with interrupts masked; a re-entrant acquire
    // (impossible here: nothing logs from an interrupt) drops the frame instead of panicking.
    unsafe impl defmt::Logger for Logger {
        fn acquire() {
            let primask = cortex_m::register::primask::read();
            cortex_m::interrupt::disable();
            if TAKEN.swap(true, Ordering::Acquire) {
                return;
            }
            // SAFETY: exclusive: interrupts masked and TAKEN was clear.
            unsafe {
                *STATE.interrupts_were_enabled.get() = primask.is_active();
                (*STATE.encoder.get()).start_frame(write_bytes);
            }
        }

        unsafe fn flush() {}

        unsafe fn release() {
            // SAFETY: the caller acquired the logger.
            let enable = unsafe {
                (*STATE.encoder.get()).end_frame(write_bytes);
                *STATE.interrupts_were_enabled.get()
            };
            TAKEN.store(false, Ordering::Release);
            if enable {
                // SAFETY: restores the state `acquire` found.
                unsafe { cortex_m::interrupt::enable() };
            }
        }

        unsafe fn write(bytes: &[u8]) {
            // SAFETY: the caller acquired the logger.
            unsafe { (*STATE.encoder.get()).write(bytes, write_bytes) };
        }
    }
}

/// One output line, up to [`Line::CAPACITY`] bytes.
#[cfg(not(feature = "defmt"))]
pub struct Line {
    buf: [u8; Line::CAPACITY],
    len: usize,
}

#[cfg(not(feature = "defmt"))]
impl Line {
    /// Bytes per line (longer text is cut).
    pub const CAPACITY: usize = 200;

    /// An empty line.
    pub fn new() -> Self {
        Line {
            buf: [0; Line::CAPACITY],
            len: 0,
        }
    }

    fn byte(&mut self, b: u8) {
        if let Some(slot) = self.buf.get_mut(self.len) {
            *slot = b;
            self.len += 1;
        }
    }

    /// Appends text.
    pub fn text(mut self, s: &str) -> Self {
        for &b in s.as_bytes() {
            self.byte(b);
        }
        self
    }

    /// Appends an unsigned integer in decimal.
    pub fn uint(mut self, mut n: u32) -> Self {
        let mut digits = [0u8; 10];
        let mut count = 0;
        for d in digits.iter_mut() {
            *d = b'0' + (n % 10) as u8;
            n /= 10;
            count += 1;
            if n == 0 {
                break;
            }
        }
        for &d in digits.iter().take(count).rev() {
            self.byte(d);
        }
        self
    }

    /// Appends a `u64` as sixteen lower-case hex digits.
    #[allow(dead_code)] // the cost curve's
    pub fn hex64(mut self, x: u64) -> Self {
        for k in (0..16).rev() {
            let nibble = ((x >> (4 * k)) & 0xf) as u8;
            self.byte(if nibble < 10 {
                b'0' + nibble
            } else {
                b'a' + nibble - 10
            });
        }
        self
    }

    /// Appends x with four decimals (`-0.1234`); `NaN`, `inf`, and `big` beyond ±400 000 (the
    /// fixed-point range of a `u32` at four decimals).
    pub fn fixed4(self, x: f32) -> Self {
        if x.is_nan() {
            return self.text("NaN");
        }
        let line = if x < 0.0 { self.text("-") } else { self };
        let a = if x < 0.0 { -x } else { x };
        if a == f32::INFINITY {
            return line.text("inf");
        }
        if a >= 400_000.0 {
            return line.text("big");
        }
        // Rounded to 10⁻⁴ (`as` saturates: no panic path).
        let scaled = (a * 10_000.0 + 0.5) as u32;
        let (whole, frac) = (scaled / 10_000, scaled % 10_000);
        let mut line = line.uint(whole).text(".");
        // (Constant divisors, written out: a divisor read from an array is a runtime value,
        // and its division would carry a divide-by-zero panic.)
        line.byte(b'0' + (frac / 1000 % 10) as u8);
        line.byte(b'0' + (frac / 100 % 10) as u8);
        line.byte(b'0' + (frac / 10 % 10) as u8);
        line.byte(b'0' + (frac % 10) as u8);
        line
    }

    /// Appends |x| ≥ 0 in scientific notation with two decimals (`1.25e-7`), `0`, `NaN` or
    /// `inf` (a sign for negative x). The decimal exponent comes from scaling by ten (at most
    /// 46 times in `f32`), the digits from the rounded mantissa, as in [`Line::fixed4`].
    #[allow(dead_code)] // the cost curve's
    pub fn sci(self, x: f32) -> Self {
        if x.is_nan() {
            return self.text("NaN");
        }
        let line = if x < 0.0 { self.text("-") } else { self };
        let mut a = if x < 0.0 { -x } else { x };
        if a == f32::INFINITY {
            return line.text("inf");
        }
        if a == 0.0 {
            return line.text("0");
        }
        let mut exp: i32 = 0;
        while a >= 10.0 {
            a /= 10.0;
            exp += 1;
        }
        while a < 1.0 {
            a *= 10.0;
            exp -= 1;
        }
        // 100 ≤ scaled ≤ 1000 (`as` saturates: no panic path); 9.995… rounds up to 10.0.
        let mut scaled = (a * 100.0 + 0.5) as u32;
        if scaled >= 1000 {
            scaled = 100;
            exp += 1;
        }
        let mut line = line.uint(scaled / 100).text(".");
        line.byte(b'0' + (scaled / 10 % 10) as u8);
        line.byte(b'0' + (scaled % 10) as u8);
        let line = line.text(if exp < 0 { "e-" } else { "e" });
        line.uint(exp.unsigned_abs())
    }

    /// Writes the line and a newline to the host's standard output (errors ignored: there is
    /// nowhere else to report them).
    pub fn emit(mut self) {
        self.byte(b'\n');
        if let Ok(mut out) = hio::hstdout() {
            let _ = out.write_all(self.buf.get(..self.len).unwrap_or_default());
        }
    }
}
