//! Interleaved rounds: two paths timed one after the other in each round, alternating which goes
//! first, so that both see the same stretch of a noisy machine (criterion times each path in a
//! block of its own). The bins that compare a Contour path with a baseline this way share it.

/// The median of `values` (NaN when empty).
pub fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

/// `rounds` rounds of `first` and `second`, each measuring itself once a round; even rounds run
/// `first` first, odd rounds `second`. The measurements, a pair a round, in `(first, second)`
/// order.
pub fn alternating<M>(rounds: usize, mut first: impl FnMut() -> M, mut second: impl FnMut() -> M) -> Vec<(M, M)> {
    (0..rounds)
        .map(|round| {
            if round % 2 == 0 {
                let a = first();
                (a, second())
            } else {
                let b = second();
                (first(), b)
            }
        })
        .collect()
}
