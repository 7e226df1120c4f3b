//! What the log records: [`Effect`], one change to the keyspace.

/// A change to the keyspace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    /// The key holds this value and deadline (0: none).
    Set {
        /// Key.
        key: Vec<u8>,
        /// Value.
        value: Vec<u8>,
        /// Deadline, ms since the epoch; 0 for none.
        expires_at: u64,
    },
    /// The key is gone.
    Del {
        /// Key.
        key: Vec<u8>,
    },
    /// The key's deadline changed (0: persistent).
    Deadline {
        /// Key.
        key: Vec<u8>,
        /// Deadline, ms since the epoch; 0 for none.
        at: u64,
    },
    /// Every key is gone.
    Clear,
    /// A change to a hash or set, as the write command that makes it (HSET, HDEL,
    /// SADD, SREM), key second; replayed by [`apply`].
    Cmd(Vec<Vec<u8>>),
    /// The changes of one transaction (EXEC), in order: one record, so replay applies
    /// all of them or, from a torn tail, none. Never nested.
    Batch(Vec<Effect>),
    /// A change to the function libraries, as the command that makes it (`FUNCTION
    /// LOAD REPLACE code`, `FUNCTION DELETE name`, `FUNCTION FLUSH`): not about a key.
    Function(Vec<Vec<u8>>),
    /// Databases `a` and `b` exchanged their keys (SWAPDB).
    SwapDb {
        /// One database.
        a: u32,
        /// The other.
        b: u32,
    },
    /// A replica's place in its primary's stream once the changes before it are
    /// applied: the primary's replication id (empty: no place, the server took writes
    /// of its own since) and the offset. Logged with the changes it follows, in one
    /// record, so a replica restarted from its log resumes with PSYNC from there.
    Position {
        /// The replication id.
        replid: Vec<u8>,
        /// The offset.
        offset: u64,
    },
    /// Not a change: a primary's request, in its replication stream, that each replica
    /// acknowledge its offset at once (WAIT). Never logged.
    GetAck,
    /// A change to a database other than 0 (SELECT): `effect` is never a batch, a
    /// swap or another of these. Changes to database 0 are not wrapped.
    Db {
        /// The database.
        db: u32,
        /// The change.
        effect: Box<Effect>,
    },
}

/// True for an XGROUP record (its key is the third argument).
fn is_xgroup(argv: &[Vec<u8>]) -> bool {
    argv.first()
        .is_some_and(|n| n.eq_ignore_ascii_case(b"xgroup"))
}

impl Effect {
    /// The key a single change is about (none for [`Effect::Clear`] and batches).
    pub fn key(&self) -> Option<&[u8]> {
        match self {
            Effect::Set { key, .. } | Effect::Del { key } | Effect::Deadline { key, .. } => {
                Some(key)
            }
            // XGROUP's key follows its subcommand.
            Effect::Cmd(argv) if is_xgroup(argv) => argv.get(2).map(Vec::as_slice),
            Effect::Cmd(argv) => argv.get(1).map(Vec::as_slice),
            Effect::Db { effect, .. } => effect.key(),
            Effect::Clear
            | Effect::Batch(_)
            | Effect::SwapDb { .. }
            | Effect::Function(_)
            | Effect::Position { .. }
            | Effect::GetAck => None,
        }
    }

    /// The database a single change is about.
    pub fn db(&self) -> usize {
        match self {
            Effect::Db { db, .. } => *db as usize,
            _ => 0,
        }
    }

    /// The change itself, out of its database wrapper.
    pub fn inner(&self) -> &Effect {
        match self {
            Effect::Db { effect, .. } => effect,
            e => e,
        }
    }

    /// `e` as a change to database `db`.
    pub fn in_db(db: usize, e: Effect) -> Effect {
        match e {
            e if db == 0 => e,
            Effect::Batch(b) => {
                Effect::Batch(b.into_iter().map(|e| Effect::in_db(db, e)).collect())
            }
            Effect::Db { effect, .. } => Effect::in_db(db, *effect),
            e @ (Effect::SwapDb { .. }
            | Effect::Function(_)
            | Effect::Position { .. }
            | Effect::GetAck) => e,
            e => Effect::Db {
                db: db as u32,
                effect: Box::new(e),
            },
        }
    }
}
