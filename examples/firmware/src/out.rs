//! Semihosting output without `core::fmt`: lines built in a fixed buffer from text, integers and fixed-point decimals.
//!
//! `core::fmt`'s float formatting (Grisu with a Dragon fallback) and even its integer
//! formatting carry bounds checks that link panic entry points; the firmware must link none
//! (`tools/panic_sites.py` checks it), so it prints through this writer instead: every access
//! is checked (`get`, iterators), digits come from division by constants, and a line longer
//! than the buffer is cut, never a panic.

use cortex_m_semihosting::hio;

/// One output line, up to [`Line::CAPACITY`] bytes.
pub struct Line {
    buf: [u8; Line::CAPACITY],
    len: usize,
}

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

    /// Writes the line and a newline to the host's standard output (errors ignored: there is
    /// nowhere else to report them).
    pub fn emit(mut self) {
        self.byte(b'\n');
        if let Ok(mut out) = hio::hstdout() {
            let _ = out.write_all(self.buf.get(..self.len).unwrap_or_default());
        }
    }
}
