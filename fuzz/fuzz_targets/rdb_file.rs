//! The RDB file reader on arbitrary bytes: never panics and never allocates beyond
//! what the file's lengths can honestly need; the bytes are tried as a whole file and
//! behind a valid header (so the opcodes and values are reached). A file that loads
//! is written back and read again to the same keys.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wirespeed_kvs::cmd::dump::rdb::{read, version_for, RdbKey, RdbWriter};

fn load(buf: &[u8]) -> Option<Vec<RdbKey>> {
    let mut keys = Vec::new();
    read(buf, 16, |k| keys.push(k)).ok().map(|_| keys)
}

fuzz_target!(|data: &[u8]| {
    let _ = load(data);
    let mut file = b"REDIS0011".to_vec();
    file.extend_from_slice(data);
    if let Some(keys) = load(&file) {
        let v = version_for(false, keys.iter().map(|k| &k.value));
        let mut w = RdbWriter::new(Vec::new(), v);
        let mut db = usize::MAX;
        for k in &keys {
            if k.db != db {
                db = k.db;
                w.select_db(db, 0, 0).unwrap();
            }
            w.key(&k.key, &k.value, k.expires_at, k.idle_s).unwrap();
        }
        let (again, _) = w.finish().unwrap();
        let back = load(&again).expect("a file written here reads back");
        assert_eq!(back.len(), keys.len());
        for (a, b) in keys.iter().zip(&back) {
            assert_eq!(
                (a.db, &a.key, &a.value, a.expires_at),
                (b.db, &b.key, &b.value, b.expires_at)
            );
        }
    }
});
