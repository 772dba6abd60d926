//! The chains' generators: `Pcg64` streams that count their steps, so that a saved chain's generator is three integers and can leave the process.
//!
//! Pcg64 (O'Neill 2014's PCG XSL RR 128/64) is a 128-bit LCG whose state after n steps from
//! `Pcg64::new(state, stream)` is reached again by `advance(n)` in O(log n). A saved chain keeps
//! the seed's (state, stream) and the steps taken since, which say how far the chain has gone
//! (`rand_pcg` 0.10 would also give the raw state, `state()` and `from_state`, but not that), so
//! [`CountedPcg`] counts the steps: every `next_u32` and `next_u64` of `Lcg128Xsl64` is one
//! step, and `fill_bytes` is done here with one `next_u64` per 8 bytes, so the count is exact
//! whatever the samplers ask for.

use rand_core::{Rng, TryRng};
use rand_pcg::Pcg64;
use std::convert::Infallible;

/// `Pcg64::new(state, stream)` and the steps it has taken since.
#[derive(Clone, Debug)]
pub struct CountedPcg {
    rng: Pcg64,
    state: u128,
    stream: u128,
    steps: u128,
}

impl CountedPcg {
    /// `Pcg64::new(state, stream)`, not yet stepped.
    pub fn new(state: u128, stream: u128) -> Self {
        CountedPcg {
            rng: Pcg64::new(state, stream),
            state,
            stream,
            steps: 0,
        }
    }

    /// The generator `Pcg64::new(state, stream)` after `steps` steps.
    pub fn resumed(state: u128, stream: u128, steps: u128) -> Self {
        let mut rng = Pcg64::new(state, stream);
        rng.advance(steps);
        CountedPcg {
            rng,
            state,
            stream,
            steps,
        }
    }

    /// (state, stream, steps): [`CountedPcg::resumed`] of these is this generator.
    pub fn parts(&self) -> (u128, u128, u128) {
        (self.state, self.stream, self.steps)
    }
}

impl TryRng for CountedPcg {
    type Error = Infallible;

    #[inline]
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        self.steps = self.steps.wrapping_add(1);
        Ok(self.rng.next_u32())
    }

    #[inline]
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        self.steps = self.steps.wrapping_add(1);
        Ok(self.rng.next_u64())
    }

    /// Little-endian `next_u64` words, the last one cut short: the bytes `Pcg64::fill_bytes`
    /// gives (its last partial word is `next_u32`'s, the low half of the same step's output).
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        for chunk in dst.chunks_mut(8) {
            let word = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&word[..chunk.len()]);
        }
        Ok(())
    }
}
