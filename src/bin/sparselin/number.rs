//! Numbers for people: fixed decimals, unless that would print hundreds of digits.

/// `x` with `decimals` digits after the point, or in scientific notation with as many once
/// |x| ≥ 10⁹ (an objective of 10¹⁹⁷ would otherwise fill the screen with its digits).
pub fn decimal(x: f64, decimals: usize) -> String {
    if x.is_finite() && x.abs() >= 1e9 {
        format!("{x:.decimals$e}")
    } else {
        format!("{x:.decimals$}")
    }
}

#[cfg(test)]
mod tests {
    use super::decimal;

    #[test]
    fn large_numbers_turn_scientific_and_read_back() {
        assert_eq!(decimal(0.25, 3), "0.250");
        assert_eq!(decimal(-123456789.0, 2), "-123456789.00");
        assert_eq!(decimal(2.5e197, 4), "2.5000e197");
        assert_eq!(decimal(f64::INFINITY, 4), "inf");
        assert_eq!(decimal(2.5e197, 4).parse::<f64>().unwrap(), 2.5e197);
    }
}
