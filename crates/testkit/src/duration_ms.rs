//! Serde for durations as (fractional) milliseconds, so script files read `"chunk_delay_ms": 5`.

use std::time::Duration;

use serde::{Deserialize, Deserializer, Serializer, de::Error as _};

pub(crate) fn serialize<S: Serializer>(
    duration: &Duration,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_f64(duration.as_secs_f64() * 1000.0)
}

pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Duration, D::Error> {
    let millis = f64::deserialize(deserializer)?;
    Duration::try_from_secs_f64(millis / 1000.0)
        .map_err(|_| D::Error::custom(format!("{millis} is not a valid number of milliseconds")))
}
