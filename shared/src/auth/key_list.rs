//! The one parser of a secret that holds a list of base64 keys separated
//! by spaces (`HOLD_TOKEN_KEYS`, `DRAW_SECRET`, `CONFIRM_SECRET`): each
//! entry after its prefix, if the list has one, standard base64 of at
//! least so many bytes, and at least one entry. Each secret words its own
//! refusal (the value itself is never shown).

/// How one secret writes its keys.
pub(crate) struct KeyList {
    /// What each entry starts with before its base64 (`whsec_`), or "".
    pub prefix: &'static str,
    /// The fewest bytes a key may decode to.
    pub min_bytes: usize,
}

/// Why a list of keys was refused; entries count from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyListError {
    Empty,
    NotBase64 { index: usize },
    Short { index: usize, bytes: usize },
}

impl KeyList {
    /// The keys of `value`, in order.
    pub(crate) fn parse(&self, value: &str) -> Result<Vec<Vec<u8>>, KeyListError> {
        use base64::Engine;
        let mut keys = Vec::new();
        for (i, entry) in value.split_whitespace().enumerate() {
            let index = i + 1;
            let key = entry
                .strip_prefix(self.prefix)
                .and_then(|encoded| {
                    base64::engine::general_purpose::STANDARD
                        .decode(encoded)
                        .ok()
                })
                .ok_or(KeyListError::NotBase64 { index })?;
            if key.len() < self.min_bytes {
                let bytes = key.len();
                return Err(KeyListError::Short { index, bytes });
            }
            keys.push(key);
        }
        match keys.is_empty() {
            true => Err(KeyListError::Empty),
            false => Ok(keys),
        }
    }
}
