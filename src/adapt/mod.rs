//! Adaptation: step-size schedules.

mod schedules;

pub use schedules::StepSchedule;
