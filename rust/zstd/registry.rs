//! The process-wide dictionaries, by ID: where [`decompress`] finds the
//! dictionary a frame names ([`register`], [`lookup`]).

use std::collections::btree_map::{BTreeMap, Entry};
use std::sync::{Arc, PoisonError, RwLock};

use super::dictionary::dictionary_header_id;
use super::{Dictionary, Error};

// What the documentation here links to.
#[cfg(doc)]
use super::decompress;

/// The process-wide dictionaries, by ID.
static REGISTRY: RwLock<BTreeMap<u32, Arc<Dictionary>>> = RwLock::new(BTreeMap::new());

/// Loads a standard zstd dictionary (see [`Dictionary::from_bytes`]) into
/// the process-wide registry, where [`decompress`] and [`lookup`] find it by
/// its ID, and returns that ID. Registering the same bytes again is a no-op;
/// different bytes with an ID already registered are
/// `DictionaryConflict(id)`. Dictionaries stay registered for the life of
/// the process.
///
/// ```
/// use cmrx::zstd::{lookup, register, train};
/// let samples: Vec<Vec<u8>> = (0..200).map(|i| format!("session:{i}:{}", i % 5).into_bytes()).collect();
/// let refs: Vec<&[u8]> = samples.iter().map(|s| &s[..]).collect();
/// let bytes = train(&refs, 1024).unwrap();
/// let id = register(&bytes).unwrap();
/// assert_eq!(register(&bytes), Ok(id));
/// assert_eq!(lookup(id).unwrap().id(), id);
/// ```
pub fn register(bytes: &[u8]) -> Result<u32, Error> {
    let id = dictionary_header_id(bytes)?;
    let same = |d: &Dictionary| {
        if d.as_bytes() == bytes {
            Ok(id)
        } else {
            Err(Error::DictionaryConflict(id))
        }
    };
    if let Some(d) = lookup(id) {
        return same(&d);
    }
    // Prepared outside the lock: readers are never held up by it.
    let dictionary = Arc::new(Dictionary::from_bytes(bytes)?);
    let mut map = REGISTRY.write().unwrap_or_else(PoisonError::into_inner);
    match map.entry(id) {
        Entry::Occupied(e) => same(e.get()),
        Entry::Vacant(e) => {
            e.insert(dictionary);
            Ok(id)
        }
    }
}

/// The registered dictionary with this ID, if any.
///
/// ```
/// assert!(cmrx::zstd::lookup(1).is_none());
/// ```
pub fn lookup(id: u32) -> Option<Arc<Dictionary>> {
    let map = REGISTRY.read().unwrap_or_else(PoisonError::into_inner);
    map.get(&id).cloned()
}

/// Every registered dictionary, by ID (a snapshot: what [`register`] adds
/// later is not in it).
///
/// ```
/// let ids: Vec<u32> = cmrx::zstd::registered_dictionaries().iter().map(|d| d.id()).collect();
/// assert!(ids.windows(2).all(|w| w[0] < w[1]));
/// ```
pub fn registered_dictionaries() -> Vec<Arc<Dictionary>> {
    let map = REGISTRY.read().unwrap_or_else(PoisonError::into_inner);
    map.values().cloned().collect()
}

/// What the registry holds for an ID, compared with some dictionary's bytes
/// (see [`registered`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Registered {
    /// No dictionary with that ID is registered.
    No,
    /// The dictionary registered with that ID has exactly these bytes.
    Same,
    /// Another dictionary has that ID: registering these bytes would be
    /// `DictionaryConflict`.
    Different,
}

/// Whether a dictionary with ID `id` is registered, and if so whether it is
/// `bytes` (so a tool can refuse an ID before it writes a dictionary that
/// could not be loaded beside the ones already in use).
///
/// ```
/// use cmrx::zstd::{register, registered, train, Registered};
/// let samples: Vec<Vec<u8>> = (0..200).map(|i| format!("cart:{i}:{}", i % 7).into_bytes()).collect();
/// let refs: Vec<&[u8]> = samples.iter().map(|s| &s[..]).collect();
/// let bytes = train(&refs, 1024).unwrap();
/// let id = register(&bytes).unwrap();
/// assert_eq!(registered(id, &bytes), Registered::Same);
/// assert_eq!(registered(id, b"other bytes"), Registered::Different);
/// assert_eq!(registered(3, &bytes), Registered::No);
/// ```
pub fn registered(id: u32, bytes: &[u8]) -> Registered {
    match lookup(id) {
        None => Registered::No,
        Some(d) if d.as_bytes() == bytes => Registered::Same,
        Some(_) => Registered::Different,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zstd::test_support::{dict, json_values, refs};
    use crate::zstd::{compress_vec, train, with_dictionary_id, MAX_LEVEL, MIN_LEVEL};

    #[test]
    fn registry() {
        let d = dict();
        let bytes = d.as_bytes().to_vec();
        assert_eq!(register(&bytes), Ok(d.id()));
        assert!(
            Arc::ptr_eq(&lookup(d.id()).unwrap(), d),
            "re-registering is a no-op"
        );
        // Same ID, different content.
        let mut other = bytes.clone();
        let last = other.len() - 1;
        other[last] ^= 1;
        assert_eq!(register(&other), Err(Error::DictionaryConflict(d.id())));
        assert!(Arc::ptr_eq(&lookup(d.id()).unwrap(), d));
        assert_eq!(register(b"not a dictionary"), Err(Error::BadDictionary));
        assert!(lookup(0).is_none());

        // Several threads registering the same new dictionary: one wins, all
        // get its ID.
        let samples = json_values(200, 14);
        let fresh = train(&refs(&samples), 2048).unwrap();
        let ids: Vec<_> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4).map(|_| s.spawn(|| register(&fresh))).collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let id = Dictionary::from_bytes(&fresh).unwrap().id();
        assert!(ids.iter().all(|r| *r == Ok(id)), "{ids:?}");
        assert_eq!(lookup(id).unwrap().as_bytes(), &fresh[..]);
    }

    #[test]
    fn prepared_tables_and_registry_state() {
        let samples = json_values(300, 23);
        let bytes = with_dictionary_id(&train(&refs(&samples), 4096).unwrap(), 4242).unwrap();
        assert_eq!(registered(4242, &bytes), Registered::No);
        let id = register(&bytes).unwrap();
        assert_eq!(id, 4242);
        assert_eq!(registered(4242, &bytes), Registered::Same);
        let mut other = bytes.clone();
        let last = other.len() - 1;
        other[last] ^= 1;
        assert_eq!(registered(4242, &other), Registered::Different);
        let d = lookup(id).unwrap();
        for level in [0, -7, 1, 9, 19, 22] {
            d.prepare(level).unwrap();
        }
        assert_eq!(d.prepare(MAX_LEVEL + 1), Err(Error::Arg));
        assert_eq!(d.prepare(MIN_LEVEL - 1), Err(Error::Arg));
        // A prepared level gives the frames a lazily prepared one does.
        let fresh = Dictionary::from_bytes(&bytes).unwrap();
        let v = &json_values(1, 24)[0];
        assert_eq!(
            compress_vec(v, 9, Some(&d)).unwrap(),
            compress_vec(v, 9, Some(&fresh)).unwrap()
        );
    }
}
