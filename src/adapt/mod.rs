//! Adaptation: step-size schedules and MCEM mass learning.

mod em;
mod mcem;
mod schedules;

pub use em::{EmSampler, Mcem, McemParams, McemWorkspace, NphmcEStep, TestFunction};
pub use mcem::{
    MStep, MStepParams, MomentStats, PoissonOffsets, PostMStepQ, SampleSize, TestStats,
    hmc_test_function, sgnht_test_function, z_critical,
};
pub use schedules::StepSchedule;
