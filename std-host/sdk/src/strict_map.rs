//! Entries listed twice are refused, never read as whichever came last: a JSON object read
//! into a map that refuses a key written twice, and the first repeat in a list. serde's maps keep the last
//! copy silently, so a state file naming one plugin twice was read as whichever came last and
//! the next write dropped the other (and its approval) without a word.

use serde::de::{Deserializer, Error, MapAccess, Visitor};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

/// Reads a JSON object into a map, refusing a key given twice (`deserialize_with`); the error
/// names the key and `what` the entries are, and says to remove one copy.
pub fn unique_keys<'de, D, V>(deserializer: D, what: &'static str) -> Result<BTreeMap<String, V>, D::Error>
where
    D: Deserializer<'de>,
    V: Deserialize<'de>,
{
    struct Unique<V> {
        what: &'static str,
        value: PhantomData<V>,
    }

    impl<'de, V: Deserialize<'de>> Visitor<'de> for Unique<V> {
        type Value = BTreeMap<String, V>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "an object of {}", self.what)
        }

        fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
            let mut map = BTreeMap::new();
            while let Some(key) = access.next_key::<String>()? {
                if map.contains_key(&key) {
                    return Err(A::Error::custom(format!(
                        "{} `{}` is listed twice (which copy holds what you meant is not for tdm to guess): \
                         remove one of the two entries",
                        self.what,
                        crate::files::truncated(&key, 80)
                    )));
                }
                let value = access.next_value()?;
                map.insert(key, value);
            }
            Ok(map)
        }
    }

    deserializer.deserialize_map(Unique { what, value: PhantomData })
}

/// The positions of the first item of `items` equal to an earlier one, and of that earlier one:
/// `(earlier, again)`.
pub fn first_repeat<K: std::hash::Hash + Eq>(items: impl Iterator<Item = K>) -> Option<(usize, usize)> {
    let mut seen = std::collections::HashMap::new();
    items.enumerate().find_map(|(n, item)| seen.insert(item, n).map(|earlier| (earlier, n)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    struct Holder {
        #[serde(deserialize_with = "entries")]
        map: BTreeMap<String, u32>,
    }

    fn entries<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<String, u32>, D::Error> {
        unique_keys(d, "entry")
    }

    #[test]
    fn a_key_given_twice_is_refused_and_named() {
        let fine: Holder = serde_json::from_str(r#"{"map": {"a": 1, "b": 2}}"#).unwrap();
        assert_eq!(fine.map.len(), 2);
        let error = serde_json::from_str::<Holder>(r#"{"map": {"a": 1, "a": 2}}"#).unwrap_err().to_string();
        assert!(error.contains("entry `a` is listed twice"), "{error}");
        assert_eq!(first_repeat(["a", "b", "c", "b", "a"].into_iter()), Some((1, 3)));
        assert_eq!(first_repeat(["a", "b"].into_iter()), None);
    }
}
