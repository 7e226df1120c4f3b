//! Where users come from besides ACL SETUSER: `user` directives (the configuration
//! file, `--user`), the ACL file (`aclfile`, read at start and by ACL LOAD, written by
//! ACL SAVE), and `requirepass`.
//!
//! The ACL file has one `user NAME RULES...` a line, words split on single spaces, as
//! Redis reads and writes it; blank lines are skipped, anything else (comments too) is
//! an error. A file with an error changes nothing: every bad line is named in one
//! message. Without a `default` user in it, the default user is the one a fresh server
//! has. ACL SAVE writes a temporary file beside it, syncs it and renames it over.
//!
//! Both at once (`user` directives and `aclfile`) are refused at start, as Redis
//! refuses them: the users would be defined in two places.

use std::fmt;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{has_spaces, merge_selectors, RuleError, User, Users, MAX_RULES};
use crate::config::Config;

/// Largest ACL file read (bytes).
pub const MAX_FILE: u64 = 64 << 20;
/// Longest line of an ACL file (bytes).
pub const MAX_LINE: usize = 1 << 20;
/// Errors of an ACL file said (the rest are counted).
const MAX_REPORTED: usize = 10;

/// Why an ACL file was not loaded.
#[derive(Debug)]
pub enum LoadError {
    /// It could not be opened or read.
    Open {
        /// The file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// It is larger than [`MAX_FILE`].
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        size: u64,
    },
    /// Lines that are not valid user definitions (each named with its line).
    Invalid(String),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Open { path, error } => write!(
                f,
                "Error loading ACLs, opening file '{}': {error}",
                path.display()
            ),
            LoadError::TooLarge { path, size } => write!(
                f,
                "Error loading ACLs, file '{}' is {size} bytes, more than the {MAX_FILE} an ACL file may have",
                path.display()
            ),
            LoadError::Invalid(errors) => f.write_str(errors),
        }
    }
}

impl std::error::Error for LoadError {}

/// Reads the ACL file `path`: the users it defines (`all_channels`: the
/// `acl-pubsub-default` of new users).
pub fn load(path: &Path, all_channels: bool) -> Result<Users, LoadError> {
    let open = |error| LoadError::Open {
        path: path.to_path_buf(),
        error,
    };
    let file = std::fs::File::open(path).map_err(open)?;
    let size = file.metadata().map_err(open)?.len();
    if size > MAX_FILE {
        return Err(LoadError::TooLarge {
            path: path.to_path_buf(),
            size,
        });
    }
    let mut text = Vec::new();
    file.take(MAX_FILE + 1)
        .read_to_end(&mut text)
        .map_err(open)?;
    if text.len() as u64 > MAX_FILE {
        return Err(LoadError::TooLarge {
            path: path.to_path_buf(),
            size: text.len() as u64,
        });
    }
    parse(&text, &path.display().to_string(), all_channels).map_err(LoadError::Invalid)
}

/// `s` without the bytes of `set` at either end.
fn trim<'a>(mut s: &'a [u8], set: &[u8]) -> &'a [u8] {
    while let Some((f, rest)) = s.split_first() {
        if !set.contains(f) {
            break;
        }
        s = rest;
    }
    while let Some((l, rest)) = s.split_last() {
        if !set.contains(l) {
            break;
        }
        s = rest;
    }
    s
}

/// The users of an ACL file's `text` (`name`: the file, for the messages).
pub fn parse(text: &[u8], name: &str, all_channels: bool) -> Result<Users, String> {
    let mut errors: Vec<String> = Vec::new();
    let mut map = std::collections::BTreeMap::new();
    for (i, raw) in text.split(|&b| b == b'\n').enumerate() {
        let n = i + 1;
        if raw.len() > MAX_LINE {
            errors.push(format!(
                "{name}:{n}: line of {} bytes, longer than the {MAX_LINE} an ACL line may be. ",
                raw.len()
            ));
            continue;
        }
        let line = trim(raw, b" \t\r\n");
        if line.is_empty() {
            continue;
        }
        let words: Vec<&[u8]> = line.split(|&b| b == b' ').collect();
        if words[0] != b"user" || words.len() < 2 {
            errors.push(format!(
                "{name}:{n} should start with user keyword followed by the username. "
            ));
            continue;
        }
        let uname = words[1];
        if has_spaces(uname) {
            errors.push(format!(
                "'{name}:{n}: username '{}' contains invalid characters. ",
                String::from_utf8_lossy(uname)
            ));
            continue;
        }
        if map.contains_key(uname) {
            errors.push(format!(
                "WARNING: Duplicate user '{}' found on line {n}. ",
                String::from_utf8_lossy(uname)
            ));
            continue;
        }
        let mut user = User::new(uname, all_channels);
        let Ok(ops) = merge_selectors(&words[2..]) else {
            errors.push(format!(
                "{name}:{n}: Unmatched parenthesis in selector definition."
            ));
            continue;
        };
        if ops.len() > MAX_RULES {
            errors.push(format!(
                "{name}:{n}: {} rules, more than the {MAX_RULES} a user may be given at once. ",
                ops.len()
            ));
            continue;
        }
        let mut reported = false;
        for op in &ops {
            let op = trim(op, b"\t\r\n");
            match user.apply(op, all_channels) {
                Ok(()) => {}
                Err(RuleError::Unknown) => errors.push(format!(
                    "{name}:{n}: Error in applying operation '{}': {}. ",
                    String::from_utf8_lossy(op),
                    RuleError::Unknown.message()
                )),
                Err(e) if !reported => {
                    reported = true;
                    errors.push(format!("{name}:{n}: {}. ", e.message()));
                }
                Err(_) => {}
            }
        }
        map.insert(uname.to_vec(), Arc::new(user));
    }
    if !errors.is_empty() {
        // A file of garbage is said in one line of reasonable length.
        let more = errors.len().saturating_sub(MAX_REPORTED);
        errors.truncate(MAX_REPORTED);
        if more > 0 {
            errors.push(format!("({more} more errors) "));
        }
        errors.push(
            "WARNING: ACL errors detected, no change to the previously active ACL rules was performed"
                .into(),
        );
        return Err(errors.concat());
    }
    map.entry(b"default".to_vec())
        .or_insert_with(|| Arc::new(User::default_user()));
    Ok(Users::from_map(map))
}

/// The users in the ACL file's form.
pub fn render(users: &Users) -> Vec<u8> {
    let mut out = Vec::new();
    for u in users.iter() {
        out.extend_from_slice(b"user ");
        out.extend_from_slice(u.name());
        out.push(b' ');
        out.extend_from_slice(&u.describe());
        out.push(b'\n');
    }
    out
}

/// ACL SAVE: writes the users to `path` (a temporary file beside it, synced, renamed
/// over it, the directory synced).
pub fn save(users: &Users, path: &Path) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(
        ".tmp-{}-{}",
        std::process::id(),
        wirespeed_util::time::unix_ms()
    ));
    let tmp = PathBuf::from(tmp);
    let written = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(&render(users))?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        std::fs::File::open(dir)?.sync_all()
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// A `user NAME RULES...` directive (the configuration file, `--user`): checked now
/// and kept for the start ([`load_at_start`]); a name given twice is refused.
pub fn add_config_user(config: &mut Config, words: &[&[u8]]) -> Result<(), String> {
    let Some((name, rules)) = words.split_first() else {
        return Err("user needs a name and its rules".into());
    };
    if has_spaces(name) {
        return Err("Spaces not allowed in ACL usernames".into());
    }
    if config
        .acl_users
        .iter()
        .any(|u| u.first().map(Vec::as_slice) == Some(*name))
    {
        return Err("Duplicate user found. A user can only be defined once in config files".into());
    }
    let ops = merge_selectors(rules).map_err(|i| {
        format!(
            "Unmatched parenthesis in acl selector starting at '{}'.",
            String::from_utf8_lossy(rules[i])
        )
    })?;
    let mut scratch = User::new(name, config.acl_pubsub_all);
    super::apply_all(&mut scratch, &ops, config.acl_pubsub_all).map_err(|(op, e)| {
        format!(
            "Error in user declaration '{}': {}",
            String::from_utf8_lossy(&op),
            e.message()
        )
    })?;
    config
        .acl_users
        .push(words.iter().map(|w| w.to_vec()).collect());
    Ok(())
}

/// The users a server starts with: the default user with `requirepass`, then the
/// `user` directives (a `user default` line starts from a reset default user), or the
/// ACL file. The error is one line.
pub fn load_at_start(config: &mut Config) -> Result<(), String> {
    if config.aclfile.is_some() && !config.acl_users.is_empty() {
        return Err("users are defined both by user directives and in an ACL file (aclfile): define them in one place only".into());
    }
    let all_channels = config.acl_pubsub_all;
    let mut users = Users::initial(config.requirepass.as_deref());
    for words in &config.acl_users {
        let (name, rules) = words
            .split_first()
            .ok_or("a user directive without a name")?;
        let rules: Vec<&[u8]> = rules.iter().map(Vec::as_slice).collect();
        let mut ops: Vec<&[u8]> = Vec::with_capacity(rules.len() + 1);
        if name == b"default" {
            ops.push(b"reset");
        }
        ops.extend(rules);
        users = users
            .set_user(name, &ops, all_channels)
            .map_err(|e| {
                format!(
                    "the user '{}' of the configuration: {e}",
                    String::from_utf8_lossy(name)
                )
            })?
            .0;
    }
    if let Some(path) = &config.aclfile {
        users = load(path, all_channels)
            .map_err(|e| format!("the ACL file (aclfile) did not load: {e}"))?;
    }
    config.acl = Arc::new(users);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_loads_whole_or_not_at_all() {
        let text = b"user alice on allcommands allkeys &* >alice\n\nuser bob on -@all +@set +acl ~set* &* >bob\r\nuser default on nopass ~* &* +@all\nuser sel on (~a* +get) (%W~b* +set &c)\n";
        let users = parse(text, "users.acl", false).expect("loads");
        assert_eq!(users.len(), 4);
        assert_eq!(users.get(b"sel").unwrap().selector_fields().len(), 3);
        assert!(users.authenticate(b"bob", b"bob").is_some());
        assert!(users.open());
        let back = render(&users);
        let again = parse(&back, "users.acl", false).expect("its own output loads");
        assert_eq!(render(&again), back);
        // No default user in the file: a fresh one.
        let users = parse(b"user x on nopass\n", "f", false).unwrap();
        assert!(users.get(b"default").unwrap().unrestricted());
        for (text, says) in [
            (&b"# a comment\n"[..], "f:1 should start with user keyword"),
            (
                b"user a on\nuser a off\n",
                "Duplicate user 'a' found on line 2",
            ),
            (
                b"user a +nosuch +@nosuch\n",
                "f:1: Error in applying operation '+nosuch'",
            ),
            (b"user a on (+get\n", "f:1: Unmatched parenthesis"),
            (
                b"user a ~x allkeys ~y\n",
                "f:1: Adding a pattern after the *",
            ),
            (b"usr a\n", "should start with user keyword"),
            (b"user\n", "should start with user keyword"),
            (b"\xff\xfe garbage\x00\n", "should start with user keyword"),
        ] {
            let e = parse(text, "f", false).expect_err("refused");
            assert!(e.contains(says), "{e}");
            assert!(e.ends_with("no change to the previously active ACL rules was performed"));
        }
        // Garbage is said in one line of reasonable length.
        let garbage: Vec<u8> = (0..100_000u32)
            .flat_map(|i| [0xff, (i % 251) as u8, b'\n'])
            .collect();
        let e = parse(&garbage, "f", false).err().unwrap();
        assert!(e.len() < 2000 && e.contains("more errors)"), "{e}");
        let huge = [b"user a ".to_vec(), vec![b'~'; MAX_LINE]].concat();

        let e = parse(&huge, "f", false).err().unwrap();
        assert!(e.contains("longer than"), "{e}");
    }

    #[test]
    fn config_users_and_an_acl_file_do_not_mix() {
        let mut c = Config::default();
        add_config_user(
            &mut c,
            &[b"default", b"on", b"nopass", b"~*", b"+@all", b"-flushdb"],
        )
        .unwrap();
        add_config_user(&mut c, &[b"bob", b"on", b">pw", b"(+get", b"~k)"]).unwrap();
        assert!(add_config_user(&mut c, &[b"bob"])
            .unwrap_err()
            .contains("Duplicate user"));
        assert!(add_config_user(&mut c, &[b"x", b"+nosuch"])
            .unwrap_err()
            .contains("'+nosuch'"));
        c.requirepass = Some(b"pw".to_vec());
        load_at_start(&mut c).unwrap();
        let d = c.acl.get(b"default").unwrap();
        assert!(
            c.acl.open(),
            "user default ... nopass wins over requirepass"
        );
        assert_eq!(d.selector_fields()[0][2].1, b"", "reset: no channels");
        assert!(c.acl.authenticate(b"bob", b"pw").is_some());
        c.aclfile = Some(PathBuf::from("/nonexistent/users.acl"));
        assert!(load_at_start(&mut c).unwrap_err().contains("one place"));
        c.acl_users.clear();
        let e = load_at_start(&mut c).unwrap_err();
        assert!(e.contains("/nonexistent/users.acl"), "{e}");
    }
}
