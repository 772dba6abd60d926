//! The value-stability pins and the kernel references alone, for the builds that only check that an engine draws the pinned chains (x86-64-v3, aarch64 under qemu-user): a third binary of `integration`'s modules.

mod kernel_reference;
mod value_stability;
