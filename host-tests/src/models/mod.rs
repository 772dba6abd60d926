//! Benchmark models with (stochastic) gradients.

mod linear_regression;

pub use linear_regression::LinearRegression;
