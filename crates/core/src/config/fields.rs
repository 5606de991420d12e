//! The field names a derived `Deserialize` expects, asked of the derive itself: the list of
//! known keys (for "did you mean" and "known keys" hints) cannot drift from the struct.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, Visitor};

/// The keys `T` (a struct with a derived `Deserialize`) accepts, by their `serde` names.
pub(crate) fn field_names<T: for<'de> Deserialize<'de>>() -> &'static [&'static str] {
    let mut names: &'static [&'static str] = &[];
    // The probe fails on purpose once it has the names: nothing is deserialized.
    let _ = T::deserialize(Probe(&mut names));
    names
}

/// A deserializer that records the fields a struct asks for and stops there.
struct Probe<'a>(&'a mut &'static [&'static str]);

/// The probe's way to stop.
#[derive(Debug, thiserror::Error)]
#[error("probe")]
struct Stop;

impl de::Error for Stop {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Stop
    }
}

impl<'de> Deserializer<'de> for Probe<'_> {
    type Error = Stop;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
        Err(Stop)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Stop> {
        *self.0 = fields;
        Err(Stop)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_names_are_the_serde_names_in_order() {
        #[derive(serde::Deserialize)]
        #[expect(dead_code, reason = "only its field names are read")]
        struct Example {
            first: u32,
            #[serde(rename = "second_key")]
            second: String,
        }
        assert_eq!(field_names::<Example>(), ["first", "second_key"]);
    }
}
