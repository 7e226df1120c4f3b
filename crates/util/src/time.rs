//! UTC calendar time from the system clock, without a date-time dependency: the civil
//! date of a Unix time (H. Hinnant's `civil_from_days`, the proleptic Gregorian calendar
//! in 400-year eras of 146,097 days counted from March 1st).

use std::time::{SystemTime, UNIX_EPOCH};

/// A moment in UTC, to the second.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Utc {
    /// The year (proleptic Gregorian).
    pub year: i64,
    /// 1..=12.
    pub month: u32,
    /// 1..=31.
    pub day: u32,
    /// 0..=23.
    pub hour: u32,
    /// 0..=59.
    pub minute: u32,
    /// 0..=59.
    pub second: u32,
}

impl Utc {
    /// Now (a clock set before 1970 reads as 1970-01-01T00:00:00Z).
    pub fn now() -> Utc {
        Utc::at(SystemTime::now())
    }

    /// The moment `t` (before 1970 reads as 1970-01-01T00:00:00Z).
    pub fn at(t: SystemTime) -> Utc {
        Utc::from_unix(t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()))
    }

    /// `secs` seconds after 1970-01-01T00:00:00Z.
    pub fn from_unix(secs: u64) -> Utc {
        let (days, rem) = (secs / 86_400, secs % 86_400);
        let (year, month, day) = civil_from_days(days as i64);
        Utc {
            year,
            month,
            day,
            hour: (rem / 3_600) as u32,
            minute: (rem / 60 % 60) as u32,
            second: (rem % 60) as u32,
        }
    }

    /// RFC 3339 to the second, e.g. `2026-11-25T14:05:01Z`.
    pub fn rfc3339(&self) -> String {
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }

    /// The compact form for file names, e.g. `20261125T140501Z`.
    pub fn compact(&self) -> String {
        format!(
            "{:04}{:02}{:02}T{:02}{:02}{:02}Z",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }
}

/// Milliseconds since the Unix epoch (0 for a clock set before it).
pub fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Days since 1970-01-01 to a proleptic Gregorian (year, month, day).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(civil_from_days(59), (1970, 3, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
        assert_eq!(civil_from_days(47_541), (2100, 3, 1));
    }

    #[test]
    fn every_day_follows_the_last() {
        // 1970 to 2400: each day is the next of the one before, months and leap years
        // included, against an independent count of month lengths.
        let leap = |y: i64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        let (mut y, mut m, mut d) = (1970i64, 1u32, 1u32);
        for z in 0..157_000i64 {
            assert_eq!(civil_from_days(z), (y, m, d), "day {z}");
            let len = match m {
                2 if leap(y) => 29,
                2 => 28,
                4 | 6 | 9 | 11 => 30,
                _ => 31,
            };
            d += 1;
            if d > len {
                d = 1;
                m += 1;
                if m > 12 {
                    m = 1;
                    y += 1;
                }
            }
        }
    }

    #[test]
    fn formats() {
        // 2026-11-25 14:05:01 UTC
        let t = Utc::from_unix(1_795_615_501);
        assert_eq!(t.rfc3339(), "2026-11-25T14:05:01Z");
        assert_eq!(t.compact(), "20261125T140501Z");
        assert_eq!(Utc::from_unix(0).rfc3339(), "1970-01-01T00:00:00Z");
    }
}
