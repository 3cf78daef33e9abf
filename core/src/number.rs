//! Whether a JSON number's value is a finite 64-bit float, decided exactly from its digits
//! (no float parsing, so the firmware carries no decimal-to-float conversion for it): a number
//! rounds to infinity exactly when it is at least 2^1024 - 2^970, halfway between `f64::MAX`
//! and the next power of two (a tie rounds to even, which is infinity).

/// The decimal digits of 2^1024 - 2^970: 309 digits, the last of them not zero.
const OVERFLOW: &[u8] = b"179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792";

/// Whether `number` (JSON number text: `-?int(.frac)?([eE][+-]?exp)?`) is a finite f64 when
/// read; `false` for text that is not such a number.
pub fn is_finite_f64(number: &str) -> bool {
    let text = number.strip_prefix('-').unwrap_or(number).as_bytes();
    let mantissa_end = text.iter().position(|c| matches!(c, b'e' | b'E')).unwrap_or(text.len());
    let (mantissa, exponent) = text.split_at(mantissa_end);
    let (int, frac) = match mantissa.iter().position(|c| *c == b'.') {
        Some(dot) => (&mantissa[..dot], &mantissa[dot + 1..]),
        None => (mantissa, &[][..]),
    };
    if int.is_empty() || !int.iter().chain(frac).all(u8::is_ascii_digit) {
        return false;
    }
    let Some(exponent) = exponent_value(exponent) else { return false };
    // The significant digits, as 0.d1d2... x 10^scale with d1 not zero.
    let digits = int.iter().chain(frac).copied();
    let leading = digits.clone().take_while(|d| *d == b'0').count();
    let significant: alloc::vec::Vec<u8> = digits.skip(leading).collect();
    let Some(last) = significant.iter().rposition(|d| *d != b'0') else {
        return true; // zero
    };
    let significant = &significant[..=last];
    let scale = (int.len() as i64 - leading as i64).saturating_add(exponent);
    match scale.cmp(&(OVERFLOW.len() as i64)) {
        core::cmp::Ordering::Less => true,
        core::cmp::Ordering::Greater => false,
        // Same magnitude: compare the digit strings as decimals (a shorter one is padded with
        // zeros, so a proper prefix of the other is the smaller).
        core::cmp::Ordering::Equal => significant < OVERFLOW,
    }
}

/// The exponent part (`e`/`E` then an optional sign and digits, or nothing), saturated far
/// beyond any scale that matters.
fn exponent_value(part: &[u8]) -> Option<i64> {
    let Some((_, rest)) = part.split_first() else { return Some(0) };
    let (negative, digits) = match rest.split_first() {
        Some((b'-', digits)) => (true, digits),
        Some((b'+', digits)) => (false, digits),
        _ => (false, rest),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let magnitude =
        digits.iter().fold(0i64, |acc, d| acc.saturating_mul(10).saturating_add(i64::from(d - b'0'))).min(1 << 40);
    Some(if negative { -magnitude } else { magnitude })
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::format;
    use std::string::String;

    /// The float reader's verdict, which `is_finite_f64` must equal.
    fn reference(number: &str) -> bool {
        number.parse::<f64>().is_ok_and(f64::is_finite)
    }

    #[test]
    fn the_boundary_and_its_neighbours_agree_with_the_float_reader() {
        let overflow = core::str::from_utf8(OVERFLOW).unwrap();
        let below = "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497791";
        let cases: &[&str] = &[
            "0",
            "-0",
            "0.0",
            "0e999999999999999999999",
            "1",
            "-1",
            "1.5",
            "1e308",
            "1.7976931348623157e308",
            "1.7976931348623158e308",
            "1.797693134862315807e308",
            "1.797693134862315808e308",
            "1.8e308",
            "1e309",
            "-1e309",
            "10e307",
            "100e306",
            "0.1e310",
            "0.01e310",
            "1e-400",
            "123456789e-9999999999999",
            "17976931348623157e292",
            "17976931348623158e292",
            overflow,
            below,
            "999e306",
            "9.99e307",
            "000000000000000001e308",
            "0.000000001e317",
            "1E+308",
            "1E-308",
            "1e+0",
        ];
        for number in cases {
            assert_eq!(is_finite_f64(number), reference(number), "{number}");
        }
        let mut longer = String::from(overflow);
        longer.push_str("0001");
        assert!(!is_finite_f64(&longer) && !reference(&longer));
        assert_eq!(is_finite_f64(&format!("{below}.999999")), reference(&format!("{below}.999999")));
    }

    #[test]
    fn generated_numbers_agree_with_the_float_reader() {
        // A small deterministic generator: mantissas around the boundary's digits and exponents
        // around the scale where it matters.
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..20_000 {
            let int_len = (next() % 20) as usize + 1;
            let mut number = String::new();
            for k in 0..int_len {
                let digit = (next() % 10) as u8;
                number.push(char::from(b'0' + if k == 0 { 1 + digit % 9 } else { digit }));
            }
            if next() % 2 == 0 {
                number.push('.');
                for _ in 0..(next() % 20) + 1 {
                    number.push(char::from(b'0' + (next() % 10) as u8));
                }
            }
            let exponent = 280 + (next() % 40) as i64 - int_len as i64;
            number.push_str(&format!("e{exponent}"));
            assert_eq!(is_finite_f64(&number), reference(&number), "{number}");
        }
        // Prefixes of the boundary itself, nudged up or down in their last digit.
        for _ in 0..20_000 {
            let k = (next() % 60) as usize + 1;
            let mut digits: std::vec::Vec<u8> = OVERFLOW[..k].to_vec();
            match next() % 3 {
                0 if digits[k - 1] < b'9' => digits[k - 1] += 1,
                1 if digits[k - 1] > b'0' && k > 1 => digits[k - 1] -= 1,
                _ => {}
            }
            let digits = String::from_utf8(digits).unwrap();
            let number = format!("{}.{}e{}", &digits[..1], &digits[1..], 308);
            let number = if k == 1 { format!("{digits}e308") } else { number };
            assert_eq!(is_finite_f64(&number), reference(&number), "{number}");
        }
    }
}
