//! Small serde helpers that keep wire decoding free of per-chunk allocations.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};

/// A JSON array that is almost always of length one: the first element lives inline, so the
/// common case allocates nothing. `null` reads as empty.
#[derive(Debug)]
pub(crate) struct InlineVec<T> {
    first: Option<T>,
    rest: Vec<T>,
}

impl<T> Default for InlineVec<T> {
    fn default() -> Self {
        Self {
            first: None,
            rest: Vec::new(),
        }
    }
}

impl<T> InlineVec<T> {
    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> {
        self.first.iter().chain(self.rest.iter())
    }

    pub(crate) fn first(&self) -> Option<&T> {
        self.first.as_ref()
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for InlineVec<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = InlineVec<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array or null")
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(InlineVec::default())
            }
            fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(InlineVec::default())
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                d.deserialize_seq(self)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut out = InlineVec {
                    first: seq.next_element()?,
                    rest: Vec::new(),
                };
                while let Some(item) = seq.next_element()? {
                    out.rest.push(item);
                }
                Ok(out)
            }
        }
        deserializer.deserialize_option(V(PhantomData))
    }
}

/// A string field that some servers send as a JSON value instead (tool-call arguments as an
/// object); the value is kept as its JSON text.
#[derive(Debug, Default)]
pub(crate) struct TextOrJson<'a>(pub(crate) Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for TextOrJson<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = TextOrJson<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or a JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(TextOrJson(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(TextOrJson(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(TextOrJson(Cow::Owned(v)))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(TextOrJson::default())
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                let value =
                    serde_json::Value::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(TextOrJson(Cow::Owned(value.to_string())))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                let value =
                    serde_json::Value::deserialize(de::value::SeqAccessDeserializer::new(seq))?;
                Ok(TextOrJson(Cow::Owned(value.to_string())))
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// Token counts as the wire sends them: absent or `null` read as zero.
pub(crate) fn count<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    Ok(Option::<u64>::deserialize(d)?.unwrap_or(0))
}

/// A cost in USD as gateways report it: a number, or a number in a string. Anything else
/// (absent, `null`, negative, not a number) reads as unknown rather than failing the chunk.
pub(crate) fn cost<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    let value = Option::<serde_json::Value>::deserialize(d)?;
    let cost = match value {
        Some(serde_json::Value::Number(n)) => n.as_f64(),
        Some(serde_json::Value::String(s)) => s.trim().parse().ok(),
        _ => None,
    };
    Ok(cost.filter(|c: &f64| c.is_finite() && *c >= 0.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Holder<'a> {
        #[serde(default)]
        list: InlineVec<u32>,
        #[serde(borrow, default)]
        args: TextOrJson<'a>,
    }

    #[test]
    fn inline_vec_reads_arrays_and_null() {
        let h: Holder<'_> = serde_json::from_str(r#"{"list":[1,2,3]}"#).unwrap();
        assert_eq!(h.list.iter().copied().collect::<Vec<_>>(), vec![1, 2, 3]);
        assert_eq!(h.list.first(), Some(&1));
        let h: Holder<'_> = serde_json::from_str(r#"{"list":null}"#).unwrap();
        assert_eq!(h.list.iter().count(), 0);
        let h: Holder<'_> = serde_json::from_str(r#"{"list":[]}"#).unwrap();
        assert_eq!(h.list.first(), None);
    }

    #[test]
    fn text_or_json_borrows_plain_strings_and_keeps_objects_as_json() {
        let h: Holder<'_> = serde_json::from_str(r#"{"args":"{\"a\":1}"}"#).unwrap();
        assert_eq!(h.args.0, r#"{"a":1}"#);
        let h: Holder<'_> = serde_json::from_str(r#"{"args":"plain"}"#).unwrap();
        assert!(matches!(h.args.0, Cow::Borrowed("plain")));
        let h: Holder<'_> = serde_json::from_str(r#"{"args":{"a":[1,true]}}"#).unwrap();
        assert_eq!(h.args.0, r#"{"a":[1,true]}"#);
        let h: Holder<'_> = serde_json::from_str(r#"{"args":null}"#).unwrap();
        assert_eq!(h.args.0, "");
    }
}
