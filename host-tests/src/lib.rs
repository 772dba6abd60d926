//! The std harness around the `sgmcmc` core: benchmark models and the runs the CLI and tests share.

pub mod demo;
pub mod linalg;
pub mod models;
