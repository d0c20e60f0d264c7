//! `--pin-tools` and `--pin-file`: the tool pins of a run (see `mcp_sansio_net::pins`), kept
//! between runs in a file, and the notes of a tool that changed since it was pinned.
//!
//! The file holds only pin sets (keys `pins:…`; the store refuses any other entry): the magic
//! line `mcp-probe pins 1`, then per entry the key's length (2 bytes big-endian), the key, the
//! value's length (4 bytes big-endian), the value. It is read once, bounded
//! ([`MAX_FILE_BYTES`]); a file that does not read back is taken as empty (and replaced at the
//! next write), and every pin set in it is checked again when a session reads it. It is written
//! whole after every change, with mode 0600 through a temporary file (never through a symbolic
//! link).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use mcp_sansio_net::cache::Store;

/// What starts the file.
const MAGIC: &[u8] = b"mcp-probe pins 1\n";

/// The largest file read: 16 pin sets at their bound.
pub const MAX_FILE_BYTES: usize = 16 * (mcp_sansio::pin::MAX_PIN_SET_BYTES + 128);

/// The pin store of `--pin-file`.
#[derive(Debug)]
pub struct FileStore {
    path: PathBuf,
    entries: Mutex<BTreeMap<Vec<u8>, Vec<u8>>>,
}

/// The entries of the file's bytes, if they read back.
fn read(bytes: &[u8]) -> Option<BTreeMap<Vec<u8>, Vec<u8>>> {
    let mut rest = bytes.strip_prefix(MAGIC)?;
    let mut entries = BTreeMap::new();
    while !rest.is_empty() {
        let (len, after) = rest.split_first_chunk::<2>()?;
        let key = after.get(..usize::from(u16::from_be_bytes(*len)))?;
        let after = &after[key.len()..];
        let (len, after) = after.split_first_chunk::<4>()?;
        let value = after.get(..u32::from_be_bytes(*len) as usize)?;
        rest = &after[value.len()..];
        if !key.starts_with(b"pins:") {
            return None;
        }
        entries.insert(key.to_vec(), value.to_vec());
    }
    Some(entries)
}

impl FileStore {
    /// The store of `path`: its entries if it exists and reads back, else none. Fails only when
    /// the file exists and cannot be read.
    pub fn open(path: &Path) -> Result<FileStore, String> {
        let entries = match std::fs::File::open(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
            Err(e) => return Err(format!("cannot read the pin file {}: {e}", path.display())),
            Ok(f) => {
                use std::io::Read;
                let mut bytes = Vec::new();
                f.take(MAX_FILE_BYTES as u64 + 1)
                    .read_to_end(&mut bytes)
                    .map_err(|e| format!("cannot read the pin file {}: {e}", path.display()))?;
                if bytes.len() > MAX_FILE_BYTES {
                    BTreeMap::new()
                } else {
                    read(&bytes).unwrap_or_default()
                }
            }
        };
        Ok(FileStore {
            path: path.to_owned(),
            entries: Mutex::new(entries),
        })
    }

    fn write(&self, entries: &BTreeMap<Vec<u8>, Vec<u8>>) {
        let mut out = MAGIC.to_vec();
        for (k, v) in entries {
            let (Ok(kl), Ok(vl)) = (u16::try_from(k.len()), u32::try_from(v.len())) else {
                continue;
            };
            out.extend_from_slice(&kl.to_be_bytes());
            out.extend_from_slice(k);
            out.extend_from_slice(&vl.to_be_bytes());
            out.extend_from_slice(v);
        }
        if let Err(e) = crate::oauth::write_private(&self.path, &out) {
            eprintln!(
                "mcp-probe: cannot write the pin file {}: {e}",
                self.path.display()
            );
        }
    }
}

impl Store for FileStore {
    fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.entries.lock().ok()?.get(key).cloned()
    }

    fn put(&self, key: &[u8], value: Vec<u8>) {
        if !key.starts_with(b"pins:") || u16::try_from(key.len()).is_err() {
            return;
        }
        let Ok(mut entries) = self.entries.lock() else {
            return;
        };
        let before = entries.insert(key.to_vec(), value);
        let size: usize = entries.iter().map(|(k, v)| k.len() + v.len() + 6).sum();
        if MAGIC.len() + size > MAX_FILE_BYTES {
            // The file is full: the set stored before stays (dropping it would let the server
            // wash its own pins out by growing its set).
            match before {
                Some(v) => entries.insert(key.to_vec(), v),
                None => entries.remove(key),
            };
            eprintln!(
                "mcp-probe: the pin file {} is full ({MAX_FILE_BYTES} bytes): new pins not kept",
                self.path.display()
            );
            return;
        }
        self.write(&entries);
    }

    fn remove(&self, key: &[u8]) {
        let Ok(mut entries) = self.entries.lock() else {
            return;
        };
        if entries.remove(key).is_some() {
            self.write(&entries);
        }
    }
}

/// Prints the notes of the last operation of `session` on stderr, the server's text made inert.
pub fn print_notes(session: &mcp_sansio_tokio::Session) {
    for change in session.tool_changes() {
        eprintln!(
            "mcp-probe: note: {}",
            crate::inert::line(&change.to_string())
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The file keeps pin sets between runs, and only them; a file that does not read back is
    /// empty.
    #[test]
    fn the_file_keeps_pin_sets_and_nothing_else() {
        let dir = std::env::temp_dir().join(format!("mcp-probe-pins-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("pins");
        let _ = std::fs::remove_file(&path);
        let store = FileStore::open(&path).unwrap();
        store.put(b"pins:abc", b"value".to_vec());
        store.put(b"era:abc", b"m".to_vec());
        let again = FileStore::open(&path).unwrap();
        assert_eq!(again.get(b"pins:abc"), Some(b"value".to_vec()));
        assert_eq!(again.get(b"era:abc"), None);
        again.remove(b"pins:abc");
        assert_eq!(FileStore::open(&path).unwrap().get(b"pins:abc"), None);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.extend_from_slice(&[0, 9, b'p']);
        std::fs::write(&path, &bytes).unwrap();
        store.put(b"pins:x", b"1".to_vec());
        std::fs::write(&path, b"mcp-probe pins 1\n\x00\x03era\x00\x00\x00\x00").unwrap();
        assert_eq!(FileStore::open(&path).unwrap().get(b"era"), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A set that would overflow the file leaves the set stored before it in place (in memory
    /// and in the file), and a new key that would overflow it is not kept.
    #[test]
    fn a_set_that_overflows_the_file_keeps_the_one_stored_before() {
        let dir = std::env::temp_dir().join(format!("mcp-probe-pins-full-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("pins");
        let _ = std::fs::remove_file(&path);
        let store = FileStore::open(&path).unwrap();
        store.put(b"pins:a", b"first".to_vec());
        store.put(b"pins:a", vec![7; MAX_FILE_BYTES]);
        assert_eq!(store.get(b"pins:a"), Some(b"first".to_vec()));
        store.put(b"pins:b", vec![7; MAX_FILE_BYTES]);
        assert_eq!(store.get(b"pins:b"), None);
        store.put(b"pins:c", b"third".to_vec());
        let again = FileStore::open(&path).unwrap();
        assert_eq!(again.get(b"pins:a"), Some(b"first".to_vec()));
        assert_eq!(again.get(b"pins:c"), Some(b"third".to_vec()));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
