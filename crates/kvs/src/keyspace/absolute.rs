//! A list change logged while a log rewrite runs, as the state it left (see
//! [`crate::aof::Log::append_with`]).

use super::Keys;
use crate::aof::Effect;

impl Keys<'_> {
    /// A change that is not the same applied twice (a list push, pop, trim, removal
    /// or insertion, which the log records as the command) as the state it left: the
    /// key's removal and, if it is there, its whole value (see [`Log::append_with`]);
    /// a transaction's changes likewise. None for changes already absolute.
    pub(super) fn absolute(&mut self, e: &Effect) -> Option<Vec<Effect>> {
        const RELATIVE: &[&str] = &["lpush", "rpush", "lpop", "rpop", "lrem", "linsert", "ltrim"];
        match e.inner() {
            Effect::Batch(b) => {
                let mut out = Vec::with_capacity(b.len());
                let mut changed = false;
                for x in b {
                    match self.absolute(x) {
                        Some(state) => {
                            changed = true;
                            out.extend(state);
                        }
                        None => out.push(x.clone()),
                    }
                }
                changed.then(|| vec![Effect::Batch(out)])
            }
            Effect::Cmd(argv) if argv.len() >= 2 => {
                let name = std::str::from_utf8(&argv[0]).ok()?.to_ascii_lowercase();
                if !RELATIVE.contains(&name.as_str()) {
                    return None;
                }
                let (db, key) = (e.db(), &argv[1]);
                let i = db * self.shards() + self.shared.shard_of(key);
                let p = self.held.binary_search_by_key(&i, |h| h.index).ok()?;
                let mut state = vec![Effect::Del { key: key.clone() }];
                if let Some(entry) = self.held[p].store.peek(key) {
                    state.extend(crate::aof::dump(key, entry));
                }
                Some(state.into_iter().map(|x| Effect::in_db(db, x)).collect())
            }
            _ => None,
        }
    }
}
