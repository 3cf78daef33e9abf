//! What every criterion bench of this crate shares, so their figures are comparable: one sampling config.

use criterion::Criterion;
use std::time::Duration;

/// 20 samples, 2 s of measurement and 0.5 s of warm-up per benchmark (groups may sample flat on top of it).
pub fn config() -> Criterion {
    Criterion::default()
        .measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(500))
        .sample_size(20)
}
