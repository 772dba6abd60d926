//! The harness around the `sgmcmc` core: benchmark models and the runs the CLI and tests share.

pub mod demo;
pub mod diagnostics;
pub mod experiments;
pub mod export;
pub mod models;
pub mod plot;
pub mod report;
