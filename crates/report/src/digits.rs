//! How every report prints a number: relative values with their significant digits
//! ([`ratio`]), other figures with significant digits ([`significant`]) or fixed decimals
//! ([`number`]), never `inf` or `NaN`. A leaf
//! module (the table model and the markup writers both use it); writers reach it as
//! `markup::ratio` and `markup::number`.

/// The `decimals` value that asks [`number`] (and every writer that takes decimals) for a
/// relative value: [`ratio`] with two decimals.
pub const RATIO: usize = usize::MAX;

/// A relative value (target / base) as every writer prints it: `decimals` decimals from 0.1
/// to 10 (0.98, 1.45: the published form), three significant digits beyond, so a 670x
/// slowdown reads 0.00148 and never 0.00, and its inverse 677 (12.3 from 10 up); `n/a` for a
/// value that is not finite (x / 0), never `inf` or `NaN`.
pub fn ratio(value: f64, decimals: usize) -> String {
    if !value.is_finite() {
        return "n/a".to_string();
    }
    let size = value.abs();
    if size >= 100.0 {
        format!("{value:.0}")
    } else if size >= 10.0 {
        format!("{value:.1}")
    } else if size >= 0.1 || value == 0.0 {
        format!("{value:.decimals$}")
    } else {
        // Three significant digits: 0.0148 has its first at the second decimal.
        let first = -size.log10().floor() as i32;
        let places = (first + 2).clamp(decimals as i32, 15) as usize;
        format!("{value:.places$}")
    }
}

/// A figure with `decimals` decimals, or a relative value when `decimals` is [`RATIO`]; `n/a`
/// when it is not finite.
pub fn number(value: f64, decimals: usize) -> String {
    if decimals == RATIO {
        ratio(value, 2)
    } else if value.is_finite() {
        format!("{value:.decimals$}")
    } else {
        "n/a".to_string()
    }
}

/// `v` with `digits` significant digits and no exponent (0.412, 0.00148, 41.3, 41260), for
/// figures that are not ratios (rates, latencies, the noise floor); `n/a` when not finite.
pub fn significant(v: f64, digits: u32) -> String {
    if !v.is_finite() {
        return "n/a".to_string();
    }
    if v == 0.0 {
        return "0".to_string();
    }
    let magnitude = v.abs().log10().floor() as i32;
    let decimals = (digits as i32 - 1 - magnitude).max(0) as usize;
    let text = format!("{v:.decimals$}");
    // Rounding up can add a digit (0.0999 → 0.100): one decimal fewer then.
    let rounded: f64 = text.parse().unwrap_or(v);
    if decimals > 0 && rounded.abs().log10().floor() as i32 > magnitude {
        return format!("{v:.prec$}", prec = decimals - 1);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn significant_digits_without_exponent() {
        assert_eq!(significant(0.4123, 3), "0.412");
        assert_eq!(significant(0.001476, 3), "0.00148");
        assert_eq!(significant(41.26, 3), "41.3");
        assert_eq!(significant(41260.0, 3), "41260");
        assert_eq!(significant(0.09996, 3), "0.100");
        assert_eq!(significant(0.7, 2), "0.70");
        assert_eq!(significant(0.0, 3), "0");
        assert_eq!(significant(f64::INFINITY, 3), "n/a");
    }

    #[test]
    fn ratios_keep_three_significant_digits() {
        // delete_range=100: 822 vs 556,880 QPS.
        assert_eq!(ratio(822.0 / 556_880.0, 2), "0.00148");
        assert_eq!(ratio(0.0148, 2), "0.0148");
        assert_eq!(ratio(0.09996, 2), "0.1000");
        assert_eq!(ratio(0.98, 2), "0.98");
        assert_eq!(ratio(1.453, 2), "1.45");
        assert_eq!(ratio(0.8321, 3), "0.832");
        assert_eq!(ratio(0.001234, 3), "0.00123");
        assert_eq!(ratio(6711.39, 2), "6711");
        assert_eq!(ratio(677.47, 2), "677");
        assert_eq!(ratio(12.345, 2), "12.3");
        assert_eq!(ratio(0.0, 2), "0.00");
        assert_eq!(ratio(f64::INFINITY, 2), "n/a");
        assert_eq!(ratio(f64::NAN, 2), "n/a");
        assert_eq!(number(0.00148, RATIO), "0.00148");
        assert_eq!(number(12.345, 1), "12.3");
        assert_eq!(number(f64::INFINITY, 0), "n/a");
    }
}
