//! The fuzz targets' logic (a library, so the committed regression inputs run as plain tests): [`api`] and [`ffi`].
//!
//! Each target reads its whole configuration from the fuzzer's bytes through [`Reader`] (which
//! yields zeros once the bytes run out, so every input is a valid program) and panics on any
//! broken promise; libFuzzer reports the panic and keeps the input.

pub mod api;
pub mod ffi;

/// Decodes choices from the fuzzer's bytes; zeros after the end.
pub struct Reader<'a> {
    data: &'a [u8],
}

impl<'a> Reader<'a> {
    /// A reader over `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Reader { data }
    }

    /// The next byte (0 after the end).
    pub fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    /// A number in 0..k (k ≥ 1), from one byte (two for k > 256).
    pub fn below(&mut self, k: usize) -> usize {
        let x = if k > 256 {
            usize::from(self.byte()) << 8 | usize::from(self.byte())
        } else {
            usize::from(self.byte())
        };
        x % k.max(1)
    }

    /// A coin.
    pub fn bool(&mut self) -> bool {
        self.byte() & 1 == 1
    }

    /// One of `values`.
    pub fn pick<T: Copy>(&mut self, values: &[T]) -> T {
        values[self.below(values.len())]
    }

    /// A u64 from eight bytes.
    pub fn u64(&mut self) -> u64 {
        (0..8).fold(0, |x, _| x << 8 | u64::from(self.byte()))
    }
}

/// Parameter values: typical, tiny, huge, zero, negative and non-finite ones.
pub const PARAMS: [f64; 20] = [
    0.05,
    0.01,
    0.1,
    0.5,
    1.0,
    2.0,
    1e-3,
    10.0,
    1e3,
    1e10,
    1e30,
    1e300,
    f64::MAX,
    0.0,
    -1.0,
    f64::NAN,
    f64::INFINITY,
    f64::MIN_POSITIVE,
    1e-30,
    5.0,
];

/// State values: mostly moderate, some huge (which overflow a step).
pub const VALUES: [f64; 12] = [
    0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e3, -1e3, 1e20, 1e36, -1e150, 1e300,
];
