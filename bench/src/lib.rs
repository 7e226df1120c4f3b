//! Side-by-side benchmarks.
