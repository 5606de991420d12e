//! UTC calendar time from a `SystemTime`, without a date-time dependency.

use std::time::{SystemTime, UNIX_EPOCH};

/// A UTC date and time to the millisecond.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct UtcTime {
    year: i64,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    second: u32,
    millis: u32,
}

impl UtcTime {
    /// The calendar time of `time`; times before 1970 count as 1970-01-01.
    pub(crate) fn from_system(time: SystemTime) -> Self {
        let since_epoch = time.duration_since(UNIX_EPOCH).unwrap_or_default();
        let secs = since_epoch.as_secs();
        let days = i64::try_from(secs / 86_400).unwrap_or(i64::MAX / 2);
        let (year, month, day) = civil_from_days(days);
        let of_day = u32::try_from(secs % 86_400).unwrap_or(0);
        UtcTime {
            year,
            month,
            day,
            hour: of_day / 3600,
            minute: of_day / 60 % 60,
            second: of_day % 60,
            millis: since_epoch.subsec_millis(),
        }
    }

    /// `YYYY-MM-DD`.
    pub(crate) fn date(&self) -> String {
        format!("{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }

    /// RFC 3339 with milliseconds: `YYYY-MM-DDTHH:MM:SS.mmmZ` (sorts as text).
    pub(crate) fn rfc3339(&self) -> String {
        format!(
            "{}T{:02}:{:02}:{:02}.{:03}Z",
            self.date(),
            self.hour,
            self.minute,
            self.second,
            self.millis
        )
    }

    /// `YYYYMMDD-HHMMSS`, for file names that sort by time.
    pub(crate) fn compact(&self) -> String {
        format!(
            "{:04}{:02}{:02}-{:02}{:02}{:02}",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }
}

/// Howard Hinnant's days-to-civil algorithm: days since 1970-01-01 to (year, month, day).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (
        year,
        u32::try_from(month).unwrap_or(1),
        u32::try_from(day).unwrap_or(1),
    )
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn at(secs: u64, millis: u64) -> UtcTime {
        UtcTime::from_system(UNIX_EPOCH + Duration::from_millis(secs * 1000 + millis))
    }

    #[test]
    fn formats_known_instants() {
        assert_eq!(at(0, 0).rfc3339(), "1970-01-01T00:00:00.000Z");
        // 2000-02-29 (a leap day in a century leap year) 12:34:56.789 UTC.
        assert_eq!(at(951_827_696, 789).rfc3339(), "2000-02-29T12:34:56.789Z");
        // 2024-12-31 23:59:59 UTC.
        let end_of_2024 = at(1_735_689_599, 0);
        assert_eq!(end_of_2024.date(), "2024-12-31");
        assert_eq!(end_of_2024.compact(), "20241231-235959");
        assert_eq!(at(1_735_689_600, 0).date(), "2025-01-01");
    }
}
