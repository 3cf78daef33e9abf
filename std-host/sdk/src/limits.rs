//! The limit flags every subcommand that runs guest code shares (`--fuel`, `--timeout`,
//! `--max-memory`), as data: how each is parsed (sizes with units, `1_000_000`, `500ms`), how
//! they change a policy, and the rule for installed plugins: a flag may lower what the
//! approval allows, never raise it.

use contour_core::Policy;
use contour_core::WASM_PAGE_BYTES;
use std::fmt;
use std::time::Duration;

/// The largest `--max-memory`: what a wasm32 memory can address.
pub const MAX_MEMORY_LIMIT: u64 = 4 * 1024 * 1024 * 1024;
/// The longest `--timeout`: one day.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(86_400);

/// The limits asked for on the command line (`None`: the plugin's own).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Limits {
    /// `--fuel N`.
    pub fuel: Option<u64>,
    /// `--timeout SECS`.
    pub timeout: Option<Duration>,
    /// `--max-memory SIZE`, in bytes.
    pub max_memory: Option<u64>,
    /// `--no-simd`: refuse a module that uses SIMD (it only ever narrows a policy).
    pub no_simd: bool,
}

/// A limit flag above what an installed plugin's approval allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AboveApproval {
    /// The flag, e.g. `--fuel`.
    pub flag: &'static str,
    /// What was asked, as shown.
    pub asked: String,
    /// What the approval allows, as shown.
    pub allowed: String,
}

impl fmt::Display for AboveApproval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} is above what the approval allows ({}); an installed plugin runs within its approved limits: \
             give at most {}",
            self.flag, self.asked, self.allowed, self.allowed
        )
    }
}

impl std::error::Error for AboveApproval {}

fn timeout_ms(timeout: Duration) -> u64 {
    u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX).max(1)
}

impl Limits {
    /// `base` with the asked limits in place.
    pub fn apply(&self, base: &Policy) -> Policy {
        let mut policy = base.clone();
        if let Some(fuel) = self.fuel {
            policy.fuel_per_intent = fuel;
        }
        if let Some(timeout) = self.timeout {
            policy.timeout_ms = timeout_ms(timeout);
        }
        if let Some(bytes) = self.max_memory {
            policy.max_memory_bytes = bytes;
        }
        if self.no_simd {
            policy.simd = false;
        }
        policy
    }

    /// `approved` with the asked limits in place, each at most the approved one (an installed
    /// plugin never runs with more than its approval shows).
    pub fn within(&self, approved: &Policy) -> Result<Policy, AboveApproval> {
        if let Some(fuel) = self.fuel.filter(|&fuel| fuel > approved.fuel_per_intent) {
            return Err(AboveApproval {
                flag: "--fuel",
                asked: fuel.to_string(),
                allowed: approved.fuel_per_intent.to_string(),
            });
        }
        if let Some(timeout) = self.timeout.filter(|&t| timeout_ms(t) > approved.timeout_ms) {
            return Err(AboveApproval {
                flag: "--timeout",
                asked: format!("{}s", timeout.as_secs_f64()),
                allowed: format!("{}s", Duration::from_millis(approved.timeout_ms).as_secs_f64()),
            });
        }
        if let Some(bytes) = self.max_memory.filter(|&bytes| bytes > approved.max_memory_bytes) {
            return Err(AboveApproval {
                flag: "--max-memory",
                asked: format_size(bytes),
                allowed: format_size(approved.max_memory_bytes),
            });
        }
        Ok(self.apply(approved))
    }
}

/// Why a limit's text was refused: the text as given, and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitTextError {
    /// The text as given.
    pub text: String,
    /// What is wrong with it.
    pub problem: LimitProblem,
}

/// What is wrong with a limit's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitProblem {
    /// A fuel budget of 0.
    FuelZero,
    /// A negative fuel budget.
    FuelNegative,
    /// Not a whole number that fits.
    NotFuel,
    /// Not seconds or milliseconds.
    NotDuration,
    /// A timeout of 0 or less, or above a day.
    TimeoutOutOfRange,
    /// Not bytes or a number with a unit.
    NotSize,
    /// More bytes than fit in 64 bits.
    TooLarge,
    /// A memory limit under one WebAssembly page.
    BelowOnePage,
    /// A memory limit above what a wasm32 memory can address.
    AboveAddressable,
}

impl LimitTextError {
    fn new(text: &str, problem: LimitProblem) -> Self {
        Self { text: text.to_string(), problem }
    }
}

impl fmt::Display for LimitTextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = &self.text;
        match self.problem {
            LimitProblem::FuelZero => f.write_str("the fuel budget must be at least 1 (e.g. --fuel 1_000_000)"),
            LimitProblem::FuelNegative => write!(
                f,
                "`{text}` is negative: the fuel budget is a whole number of at least 1 (e.g. --fuel 1_000_000)"
            ),
            LimitProblem::NotFuel => write!(
                f,
                "`{text}` is not a fuel budget: give a whole number of at least 1, at most {} (e.g. --fuel 1_000_000)",
                u64::MAX
            ),
            LimitProblem::NotDuration => {
                write!(f, "`{text}` is not a duration: give seconds (2, 0.5, 2s) or milliseconds (500ms)")
            }
            LimitProblem::TimeoutOutOfRange => {
                write!(f, "`{text}`: the timeout must be more than 0 and at most 86400 seconds")
            }
            LimitProblem::NotSize => {
                write!(f, "`{text}` is not a size: give bytes or a number with a unit, e.g. 64MiB, 512KiB, 1GiB")
            }
            LimitProblem::TooLarge => write!(f, "`{text}` is too large"),
            LimitProblem::BelowOnePage => write!(
                f,
                "`{text}` is less than one WebAssembly page: the memory limit must be at least 64KiB (e.g. --max-memory 16MiB)"
            ),
            LimitProblem::AboveAddressable => write!(f, "`{text}` is above the 4GiB a wasm32 memory can address"),
        }
    }
}

impl std::error::Error for LimitTextError {}

/// Parses `--fuel`: a whole number of at least 1; `_` may group digits (`2_000_000`).
pub fn parse_fuel(text: &str) -> Result<u64, LimitTextError> {
    let digits = text.trim().replace('_', "");
    match digits.parse::<u64>() {
        Ok(0) => Err(LimitTextError::new(text, LimitProblem::FuelZero)),
        Ok(fuel) => Ok(fuel),
        Err(_) if digits.starts_with('-') => Err(LimitTextError::new(text, LimitProblem::FuelNegative)),
        Err(_) => Err(LimitTextError::new(text, LimitProblem::NotFuel)),
    }
}

/// Parses `--timeout`: seconds (`2`, `0.5`, `2s`) or milliseconds (`500ms`), more than 0 and at
/// most a day.
pub fn parse_timeout(text: &str) -> Result<Duration, LimitTextError> {
    let trimmed = text.trim();
    let (number, scale) = if let Some(ms) = trimmed.strip_suffix("ms") {
        (ms, 0.001)
    } else {
        (trimmed.strip_suffix('s').unwrap_or(trimmed), 1.0)
    };
    let secs = number
        .trim()
        .parse::<f64>()
        .map(|n| n * scale)
        .map_err(|_| LimitTextError::new(text, LimitProblem::NotDuration))?;
    if !secs.is_finite() || secs <= 0.0 || secs > MAX_TIMEOUT.as_secs_f64() {
        return Err(LimitTextError::new(text, LimitProblem::TimeoutOutOfRange));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// The units a size may carry, lower-cased, with their factor.
const UNITS: [(&str, u64); 10] = [
    ("b", 1),
    ("kib", 1024),
    ("mib", 1024 * 1024),
    ("gib", 1024 * 1024 * 1024),
    ("k", 1024),
    ("m", 1024 * 1024),
    ("g", 1024 * 1024 * 1024),
    ("kb", 1000),
    ("mb", 1000 * 1000),
    ("gb", 1000 * 1000 * 1000),
];

/// Parses a size: bytes (`65536`), or a number with a unit (`64MiB`, `512KiB`, `1GiB`, `64M`,
/// `1.5MiB`; `KB`/`MB`/`GB` are powers of 1000). Case and a space before the unit don't matter.
pub fn parse_size(text: &str) -> Result<u64, LimitTextError> {
    let trimmed = text.trim();
    let split = trimmed.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_')).unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let unit = unit.trim().to_ascii_lowercase();
    let bad = || LimitTextError::new(text, LimitProblem::NotSize);
    let factor = if unit.is_empty() {
        1
    } else {
        UNITS.iter().find(|(name, _)| *name == unit).map(|(_, factor)| *factor).ok_or_else(bad)?
    };
    let number = number.replace('_', "");
    if number.is_empty() {
        return Err(bad());
    }
    if let Ok(whole) = number.parse::<u64>() {
        return whole.checked_mul(factor).ok_or_else(|| LimitTextError::new(text, LimitProblem::TooLarge));
    }
    let value: f64 = number.parse().map_err(|_| bad())?;
    let bytes = value * factor as f64;
    if !bytes.is_finite() || bytes >= u64::MAX as f64 {
        return Err(LimitTextError::new(text, LimitProblem::TooLarge));
    }
    Ok(bytes.round() as u64)
}

/// Parses `--max-memory`: a size of at least one WebAssembly page (64KiB) and at most 4GiB.
pub fn parse_memory(text: &str) -> Result<u64, LimitTextError> {
    let bytes = parse_size(text)?;
    if bytes < WASM_PAGE_BYTES {
        return Err(LimitTextError::new(text, LimitProblem::BelowOnePage));
    }
    if bytes > MAX_MEMORY_LIMIT {
        return Err(LimitTextError::new(text, LimitProblem::AboveAddressable));
    }
    Ok(bytes)
}

/// A size for people: `64 MiB`, `512 KiB`, `1.5 MiB`, or bytes.
pub fn format_size(bytes: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * KIB;
    const GIB: u64 = 1024 * MIB;
    for (unit, size) in [("GiB", GIB), ("MiB", MIB), ("KiB", KIB)] {
        if bytes >= size {
            return if bytes.is_multiple_of(size) {
                format!("{} {unit}", bytes / size)
            } else {
                format!("{:.1} {unit}", bytes as f64 / size as f64)
            };
        }
    }
    format!("{bytes} B")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_units() {
        for (text, bytes) in [
            ("65536", 65_536),
            ("64MiB", 64 << 20),
            ("64 mib", 64 << 20),
            ("512KiB", 512 << 10),
            ("1GiB", 1 << 30),
            ("64M", 64 << 20),
            ("1.5MiB", 3 << 19),
            ("2MB", 2_000_000),
            ("1_048_576", 1 << 20),
            ("10b", 10),
        ] {
            assert_eq!(parse_size(text), Ok(bytes), "{text}");
        }
        for text in ["", "MiB", "64XB", "-1", "1e3", "99999999999999999999GiB"] {
            assert!(parse_size(text).is_err(), "{text}");
        }
        assert!(parse_memory("1").unwrap_err().to_string().contains("at least 64KiB"));
        assert!(parse_memory("5GiB").unwrap_err().to_string().contains("4GiB"));
        assert_eq!(format_size(64 << 20), "64 MiB");
        assert_eq!(format_size(3 << 19), "1.5 MiB");
        assert_eq!(format_size(100), "100 B");
    }

    #[test]
    fn fuel_and_timeout_say_what_is_wrong() {
        assert_eq!(parse_fuel("2_000_000"), Ok(2_000_000));
        assert!(parse_fuel("0").unwrap_err().to_string().contains("at least 1"));
        assert!(parse_fuel("-1").unwrap_err().to_string().contains("negative"));
        assert!(parse_fuel("lots").unwrap_err().to_string().contains("not a fuel budget"));
        assert!(!parse_fuel("0").unwrap_err().to_string().contains("fuel_per_intent"));
        assert_eq!(parse_timeout("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_timeout("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_timeout("0.25"), Ok(Duration::from_millis(250)));
        assert!(parse_timeout("-1").is_err() && parse_timeout("0").is_err() && parse_timeout("x").is_err());
    }

    #[test]
    fn installed_limits_never_exceed_the_approval() {
        let approved =
            Policy { fuel_per_intent: 1000, timeout_ms: 2000, max_memory_bytes: 1 << 20, ..Policy::default() };
        let lower =
            Limits { fuel: Some(10), timeout: Some(Duration::from_secs(1)), max_memory: Some(1 << 16), no_simd: false };
        let policy = lower.within(&approved).expect("lower is fine");
        assert_eq!((policy.fuel_per_intent, policy.timeout_ms, policy.max_memory_bytes), (10, 1000, 1 << 16));
        let above = Limits { fuel: Some(1001), ..Limits::default() }.within(&approved).unwrap_err();
        assert_eq!(above.flag, "--fuel");
        assert!(above.to_string().contains("at most 1000"), "{above}");
        assert!(Limits { timeout: Some(Duration::from_secs(3)), ..Limits::default() }.within(&approved).is_err());
        assert!(Limits { max_memory: Some(2 << 20), ..Limits::default() }.within(&approved).is_err());
    }
}
