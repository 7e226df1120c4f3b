//! The kernel's count of the datagrams it dropped for a UDP socket: the loss a pipeline
//! reading from a socket cannot see in its own counters.
//!
//! Linux counts, per socket and from its creation on, the datagrams it could not queue
//! on it (`sk_drops`: the receive buffer was full, or, rarely, the socket's memory
//! accounting or a socket filter refused one), and shows the count in the last column,
//! `drops`, of `/proc/self/net/udp` (`udp6` for an IPv6 socket), on the line whose
//! `inode` is the socket's (the target of `/proc/self/fd/N` reads `socket:[INODE]`).
//! [`KernelDrops`] finds that line; the source tile reads it about once a second and the
//! pipeline once more when the run ends, so the total covers the whole run.
//!
//! Why this and not `SO_RXQ_OVFL`: the source reads with `recv` (no ancillary data),
//! and that option reports the count only with the next datagram queued, so drops after
//! the last datagram of a run would never be seen; the table can be read at any time.
//!
//! [`KernelDrops`] holds its own handle (a duplicate) of the socket, so the socket and
//! its line stay in the table until the last read, after the source tile has closed
//! its handle. The kernel's count is 32 bits wide; [`KernelDrops::total`] widens it to
//! 64, which is exact while fewer than 2^32 drops happen between two reads.
//!
//! Where `/proc/self/net` is missing (not Linux, or no /proc), [`KernelDrops::of`]
//! fails and the pipeline reports no count rather than a zero it did not read. A read
//! scans one line per UDP socket of the network namespace (kernel text, read line by
//! line: nothing is sized by it).

use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::net::UdpSocket;
use std::os::fd::AsRawFd;
use std::path::PathBuf;

/// Why the kernel's drop count of a socket could not be read.
#[derive(Debug)]
pub enum DropsError {
    /// A /proc file could not be read (no /proc, or not Linux).
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        source: io::Error,
    },
    /// The socket's handle does not name a socket inode.
    NotASocket {
        /// What `/proc/self/fd/N` pointed at.
        target: String,
    },
    /// The socket's inode is not in the table (closed, or another network namespace).
    NotListed {
        /// The socket's inode.
        inode: u64,
        /// The table read.
        table: PathBuf,
    },
    /// The table is not laid out as expected (no `inode` and `drops` columns, or a
    /// line too short).
    Malformed {
        /// The table read.
        table: PathBuf,
    },
}

impl std::fmt::Display for DropsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DropsError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            DropsError::NotASocket { target } => {
                write!(f, "the socket's handle points at {target:?}, not a socket")
            }
            DropsError::NotListed { inode, table } => {
                write!(f, "socket inode {inode} is not in {}", table.display())
            }
            DropsError::Malformed { table } => write!(
                f,
                "{}: not the expected table of UDP sockets (inode and drops columns)",
                table.display()
            ),
        }
    }
}

impl std::error::Error for DropsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            DropsError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Column of the inode on a socket line of the table (the header names columns
/// differently: `tx_queue rx_queue` and `tr tm->when` are one field each on a line).
const INODE_FIELD: usize = 9;
/// Fields of a socket line: sl, local, remote, st, tx:rx, tr:when, retrnsmt, uid,
/// timeout, inode, ref, pointer, drops.
const FIELDS: usize = 13;

/// Reads the kernel's count of datagrams dropped for one UDP socket.
#[derive(Debug)]
pub struct KernelDrops {
    /// A duplicate handle: keeps the socket (and its line) alive until the last read.
    _socket: UdpSocket,
    inode: u64,
    table: PathBuf,
}

impl KernelDrops {
    /// The reader for `socket`; fails where the count cannot be read (checked with one
    /// read here).
    pub fn of(socket: &UdpSocket) -> Result<KernelDrops, DropsError> {
        let io = |path: PathBuf| move |source| DropsError::Io { path, source };
        let link = PathBuf::from(format!("/proc/self/fd/{}", socket.as_raw_fd()));
        let target = std::fs::read_link(&link).map_err(io(link.clone()))?;
        let target = target.to_string_lossy().into_owned();
        let inode = target
            .strip_prefix("socket:[")
            .and_then(|s| s.strip_suffix(']'))
            .and_then(|s| s.parse::<u64>().ok())
            .ok_or(DropsError::NotASocket { target })?;
        let v6 = socket.local_addr().map_err(io(link))?.is_ipv6();
        let table = PathBuf::from(if v6 {
            "/proc/self/net/udp6"
        } else {
            "/proc/self/net/udp"
        });
        let own = socket.try_clone().map_err(io(table.clone()))?;
        let d = KernelDrops {
            _socket: own,
            inode,
            table,
        };
        d.read()?;
        Ok(d)
    }

    /// The kernel's count now (32 bits, wrapping).
    pub fn read(&self) -> Result<u32, DropsError> {
        let file = File::open(&self.table).map_err(|source| DropsError::Io {
            path: self.table.clone(),
            source,
        })?;
        drops_of(BufReader::new(file), self.inode).map_err(|e| match e {
            TableError::Io(source) => DropsError::Io {
                path: self.table.clone(),
                source,
            },
            TableError::Malformed => DropsError::Malformed {
                table: self.table.clone(),
            },
            TableError::NotListed => DropsError::NotListed {
                inode: self.inode,
                table: self.table.clone(),
            },
        })
    }

    /// The drops since the socket was created, given the total of the last read
    /// (0 at first): the kernel's 32-bit count widened by what it moved since.
    pub fn total(&self, last: u64) -> Result<u64, DropsError> {
        Ok(widen(last, self.read()?))
    }
}

/// `last` (a 64-bit total whose low 32 bits were the kernel's count then) moved on to
/// the kernel's count `now`, across a wrap of the 32-bit count.
pub fn widen(last: u64, now: u32) -> u64 {
    last.wrapping_add(u64::from(now.wrapping_sub(last as u32)))
}

#[derive(Debug)]
enum TableError {
    Io(io::Error),
    Malformed,
    NotListed,
}

/// The `drops` of the socket `inode` in a table laid out as /proc/net/udp.
fn drops_of(table: impl BufRead, inode: u64) -> Result<u32, TableError> {
    let mut lines = table.lines();
    let header = lines
        .next()
        .ok_or(TableError::Malformed)?
        .map_err(TableError::Io)?;
    let names: Vec<&str> = header.split_whitespace().collect();
    if names.last() != Some(&"drops") || !names.contains(&"inode") {
        return Err(TableError::Malformed);
    }
    let want = inode.to_string();
    for line in lines {
        let line = line.map_err(TableError::Io)?;
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() < FIELDS {
            return Err(TableError::Malformed);
        }
        if fields[INODE_FIELD] == want {
            return fields[FIELDS - 1]
                .parse::<u32>()
                .map_err(|_| TableError::Malformed);
        }
    }
    Err(TableError::NotListed)
}

#[cfg(test)]
mod tests {
    use super::*;

    // As the kernel writes it: padded header, trailing blanks.
    const TABLE: &str = concat!(
        "   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   ",
        "uid  timeout inode ref pointer drops            \n",
        "  274: 0100007F:A3F1 00000000:0000 07 00000000:00002200 00:00000000 00000000  ",
        "1000        0 881234 2 0000000000000000 0         \n",
        "  861: 00000000:0044 00000000:0000 07 00000000:00000000 00:00000000 00000000     ",
        "0        0 19345 2 0000000000000000 4242      \n",
    );

    #[test]
    fn the_drops_column_of_the_sockets_line_is_read() {
        let drops = |inode| drops_of(TABLE.as_bytes(), inode);
        assert_eq!(drops(19345).ok(), Some(4242));
        assert_eq!(drops(881234).ok(), Some(0));
        assert!(matches!(drops(1934), Err(TableError::NotListed)));
        // Another layout is refused, not misread.
        let other = TABLE.replace("pointer drops", "pointer");
        assert!(matches!(
            drops_of(other.as_bytes(), 19345),
            Err(TableError::Malformed)
        ));
        let short = TABLE.replace(" 0000000000000000 4242", "");
        assert!(matches!(
            drops_of(short.as_bytes(), 19345),
            Err(TableError::Malformed)
        ));
        assert!(matches!(drops_of(&b""[..], 1), Err(TableError::Malformed)));
    }

    #[test]
    fn the_32_bit_count_widens_across_a_wrap() {
        assert_eq!(widen(0, 0), 0);
        assert_eq!(widen(0, 7), 7);
        assert_eq!(widen(7, 7), 7);
        let near = u64::from(u32::MAX) - 2;
        assert_eq!(widen(near, 5), near + 8);
        assert_eq!(widen((1 << 32) + 10, 12), (1 << 32) + 12);
    }

    #[test]
    fn a_fresh_socket_has_dropped_nothing() {
        let Ok(sock) = UdpSocket::bind("127.0.0.1:0") else {
            return;
        };
        // Where there is no /proc the reader says so; where there is, it reads 0.
        match KernelDrops::of(&sock) {
            Ok(d) => assert_eq!(d.total(0).ok(), Some(0)),
            Err(e) => assert!(!std::path::Path::new("/proc/self/net/udp").exists(), "{e}"),
        }
    }
}
