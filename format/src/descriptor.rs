//! SSTable file names: which sstable a path belongs to, and finding sstables.
//!
//! Two naming schemes (Cassandra `o.a.c/io/sstable/Descriptor.java`
//! `filenameTokens`, Scylla `sstables/sstables.cc` `parse_path`):
//!
//! | scheme | pattern | example |
//! |---|---|---|
//! | modern (`la`+) | `<ver>-<gen>-<format>-<Component>` | `nb-1-big-Data.db`, `nb-3g7k_0ajz_1ov2o2n6b2m5u8dwsj-big-Data.db` |
//! | legacy (`ka`) | `<ks>-<table>-<ver>-<gen>-<Component>` | `ks-cf-ka-1-Data.db` |
//!
//! A generation is a decimal integer or a 28-character base-36 UUID-based id
//! (`UUIDBasedSSTableId`). Generations order numerically, then UUID ids by
//! their time fields (which is also their string order).

use std::path::{Path, PathBuf};

use crate::component::Component;
use crate::error::{Error, ErrorKind, Result};
use crate::io::store;
use crate::version::{FormatKind, Version};

/// `s3://b/dir/` as `s3://b/dir` (so joined names get one `/`); local
/// paths as given.
fn trim_url_slash(p: &Path) -> PathBuf {
    match p.to_str() {
        Some(s) if store::is_url(p) && s.ends_with('/') => PathBuf::from(s.trim_end_matches('/')),
        _ => p.to_path_buf(),
    }
}

/// A generation id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Generation {
    /// Sequential integer generation.
    Int(u64),
    /// UUID-based id in its 28-character base-36 form.
    Uuid(String),
}

impl std::fmt::Display for Generation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Generation::Int(n) => write!(f, "{n}"),
            Generation::Uuid(s) => f.write_str(s),
        }
    }
}

/// Identifies one sstable: its directory, name prefix, version and format.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Descriptor {
    /// Directory holding the components.
    pub dir: PathBuf,
    /// File-name prefix up to and including the last `-` before the component
    /// (e.g. `nb-1-big-`, `ks-cf-ka-1-`).
    pub prefix: String,
    /// Format version.
    pub version: Version,
    /// Generation.
    pub generation: Generation,
    /// `big` or `bti`.
    pub format: FormatKind,
    /// Keyspace and table, for the legacy naming scheme.
    pub ks_table: Option<(String, String)>,
}

/// The result of parsing one file name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedName {
    /// The sstable the file belongs to.
    pub descriptor: Descriptor,
    /// The component suffix as written (e.g. `Data.db`, `Digest.crc32`,
    /// `SI_idx.db`), possibly not a known component.
    pub component: String,
}

fn parse_generation(s: &str) -> Option<Generation> {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return s.parse().ok().map(Generation::Int);
    }
    let b = s.as_bytes();
    let uuid_like = b.len() == 28
        && b[4] == b'_'
        && b[9] == b'_'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 9 || c.is_ascii_digit() || c.is_ascii_lowercase());
    uuid_like.then(|| Generation::Uuid(s.to_string()))
}

/// Parse a component file name (no directory part).
pub fn parse_file_name(dir: &Path, name: &str) -> Result<ParsedName> {
    let bad = || Error::new(ErrorKind::BadFileName(name.to_string()), "file name");
    // The component is everything after the last token; tokens are split on '-'.
    let toks: Vec<&str> = name.split('-').collect();
    let (ver_i, ks_table) = match toks.len() {
        4 => (0, None),
        5 | 6 => {
            // Legacy: ks-table-ver-gen-Component (6 tokens for secondary indexes
            // whose table name carries a '.' part are still 5; accept 6 loosely).
            let n = toks.len();
            (n - 3, Some((toks[0].to_string(), toks[1..n - 3].join("-"))))
        }
        _ => return Err(bad()),
    };
    let version = Version::parse(toks[ver_i]).map_err(|e| {
        // An sstable of a release too old to read says so, not "bad name".
        if crate::version::release_before_jb(toks[ver_i]).is_some() {
            e
        } else {
            bad()
        }
    })?;
    let generation = parse_generation(toks[ver_i + 1]).ok_or_else(bad)?;
    let (format, component) = if ks_table.is_none() {
        let f = match toks[2] {
            "big" => FormatKind::Big,
            "bti" => FormatKind::Bti,
            _ => return Err(bad()),
        };
        (f, toks[3])
    } else {
        (FormatKind::Big, toks[toks.len() - 1])
    };
    if component.is_empty() {
        return Err(bad());
    }
    let prefix = name[..name.len() - component.len()].to_string();
    Ok(ParsedName {
        descriptor: Descriptor {
            dir: dir.to_path_buf(),
            prefix,
            version,
            generation,
            format,
            ks_table,
        },
        component: component.to_string(),
    })
}

impl Descriptor {
    /// Parse the descriptor of any component path.
    pub fn from_path(path: &Path) -> Result<(Descriptor, String)> {
        let name = path.file_name().and_then(|n| n.to_str()).ok_or_else(|| {
            Error::new(
                ErrorKind::BadFileName(path.display().to_string()),
                "file name",
            )
        })?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let p = parse_file_name(&dir, name).map_err(|e| e.in_file(path))?;
        Ok((p.descriptor, p.component))
    }

    /// Path of a component file given its suffix as written.
    pub fn path_of(&self, suffix: &str) -> PathBuf {
        self.dir.join(format!("{}{}", self.prefix, suffix))
    }

    /// Path of a known component (Digest uses the version's default name).
    pub fn component_path(&self, c: Component) -> PathBuf {
        self.path_of(c.suffix())
    }

    /// Path of Data.db, the conventional name of the whole sstable.
    pub fn data_path(&self) -> PathBuf {
        self.component_path(Component::Data)
    }
}

/// Expand command-line arguments into sstables: a component path stands for
/// its sstable; a directory for every sealed sstable in it (one with a TOC.txt
/// or, failing that, a Data.db), ordered by generation. Stray files in a
/// directory are ignored. Duplicates are removed, first occurrence kept.
pub fn find_sstables(args: &[PathBuf]) -> Result<Vec<Descriptor>> {
    let mut out: Vec<Descriptor> = Vec::new();
    for arg in args {
        let is_dir = store::is_dir_arg(arg).map_err(|e| Error::from(e).in_file(arg))?;
        if is_dir {
            // A URL prefix given with a trailing `/` names the same directory.
            let dir = trim_url_slash(arg);
            let mut found: Vec<(Descriptor, bool)> = Vec::new();
            // An sstable too old to read, reported when nothing else is found.
            let mut too_old: Option<Error> = None;
            let ents = store::list_dir(&dir).map_err(|e| Error::from(e).in_file(arg))?;
            for ent in ents {
                let name = ent.name.as_str();
                let p = match parse_file_name(&dir, name) {
                    Ok(p) => p,
                    Err(e) => {
                        let old = matches!(e.kind, ErrorKind::UnknownVersion(_));
                        if old && too_old.is_none() && name.ends_with("-Data.db") {
                            too_old = Some(e.in_file(&ent.path));
                        }
                        continue;
                    }
                };
                let sealed = p.component == "TOC.txt";
                let data = p.component == "Data.db";
                if !(sealed || data) {
                    continue;
                }
                match found.iter_mut().find(|(d, _)| *d == p.descriptor) {
                    Some(slot) => slot.1 |= sealed,
                    None => found.push((p.descriptor, sealed)),
                }
            }
            if let (true, Some(e)) = (found.is_empty(), too_old) {
                return Err(e);
            }
            // Prefer sealed sstables; a directory with only Data.db files (no
            // TOC at all, e.g. test golden files) still yields them.
            let any_sealed = found.iter().any(|(_, s)| *s);
            let mut ds: Vec<Descriptor> = found
                .into_iter()
                .filter(|(_, s)| *s || !any_sealed)
                .map(|(d, _)| d)
                .collect();
            ds.sort_by(|a, b| {
                (&a.generation, a.version, &a.prefix).cmp(&(&b.generation, b.version, &b.prefix))
            });
            for d in ds {
                if !out.contains(&d) {
                    out.push(d);
                }
            }
        } else {
            let (d, _) = Descriptor::from_path(arg)?;
            if !out.contains(&d) {
                out.push(d);
            }
        }
    }
    Ok(out)
}

/// Where an sstable sits in a Cassandra or Scylla data directory, guessed
/// from the folders around it as `sstablepartitions` does
/// (`ExtendedDescriptor.guessFromFile`): `<keyspace>/<table>-<id>/`, with
/// `.<index>/` (secondary index), `backups/` or `snapshots/<name>/` below it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Location {
    /// Keyspace (the folder above the table folder).
    pub keyspace: Option<String>,
    /// Table name (the table folder without its `-<id>`).
    pub table: Option<String>,
    /// Table id: the 32 hex digits after the table name.
    pub table_id: Option<String>,
    /// Secondary index name (from a `.<index>` folder).
    pub index: Option<String>,
    /// Snapshot name (from `snapshots/<name>`).
    pub snapshot: Option<String>,
    /// `backups` when the sstable is in a table's backups folder.
    pub backup: Option<String>,
}

impl Location {
    /// Guess from the directory holding an sstable's components.
    pub fn of_dir(dir: &Path) -> Location {
        let name = |p: Option<&Path>| {
            p.and_then(|p| p.file_name())
                .and_then(|n| n.to_str())
                .map(str::to_string)
                .unwrap_or_default()
        };
        // Relative paths are resolved so `.` and `..` name real folders.
        let abs = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
        let mut parent: Option<&Path> = Some(abs.as_path());
        let mut loc = Location::default();
        let n = name(parent);
        if n.len() > 1 && n.starts_with('.') && !n.starts_with("..") {
            loc.index = Some(n[1..].to_string());
            parent = parent.and_then(Path::parent);
        }
        if name(parent) == "backups" {
            loc.backup = Some("backups".into());
            parent = parent.and_then(Path::parent);
        }
        if name(parent.and_then(Path::parent)) == "snapshots" {
            loc.snapshot = Some(name(parent));
            parent = parent.and_then(Path::parent).and_then(Path::parent);
        }
        if let Some((table, id)) = table_and_id(&name(parent)) {
            loc.keyspace = Some(name(parent.and_then(Path::parent))).filter(|k| !k.is_empty());
            loc.table = Some(table);
            loc.table_id = Some(id);
        }
        loc
    }

    /// `keyspace.table` when known.
    pub fn table_name(&self) -> Option<String> {
        match (&self.keyspace, &self.table) {
            (Some(k), Some(t)) => Some(format!("{k}.{t}")),
            (None, Some(t)) => Some(t.clone()),
            _ => None,
        }
    }
}

impl Descriptor {
    /// Where this sstable sits: [`Location::of_dir`] of its directory, with
    /// the keyspace and table of a legacy file name (`ks-cf-ka-1-Data.db`)
    /// when the folders do not name them.
    pub fn location(&self) -> Location {
        let mut loc = Location::of_dir(&self.dir);
        if let Some((k, t)) = &self.ks_table {
            loc.keyspace.get_or_insert_with(|| k.clone());
            loc.table.get_or_insert_with(|| t.clone());
        }
        loc
    }
}

/// `name-<32 hex>` (a table folder): the name and the id.
fn table_and_id(dir_name: &str) -> Option<(String, String)> {
    let (table, id) = dir_name.rsplit_once('-')?;
    let ok = !table.is_empty() && id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit());
    ok.then(|| (table.to_string(), id.to_string()))
}

/// How [`find_sstables_with`] walks directories.
#[derive(Debug, Clone, Default)]
pub struct Discovery {
    /// Walk sub-directories too (a data directory's `keyspace/table-id/` tree).
    pub recursive: bool,
    /// Include sstables under `snapshots/` (when walking).
    pub snapshots: bool,
    /// Include sstables under `backups/` (when walking).
    pub backups: bool,
    /// Only sstables of this keyspace (from the folder layout).
    pub keyspace: Option<String>,
    /// Only sstables of this table (from the folder layout).
    pub table: Option<String>,
}

impl Discovery {
    /// An sstable whose keyspace (or table) is unknown is left out by a
    /// keyspace (or table) filter: the filter keeps only what it can name.
    fn wants(&self, d: &Descriptor) -> bool {
        let loc = d.location();
        self.keyspace
            .as_ref()
            .is_none_or(|k| loc.keyspace.as_ref() == Some(k))
            && self
                .table
                .as_ref()
                .is_none_or(|t| loc.table.as_ref() == Some(t))
    }
}

/// [`find_sstables`] with a data directory walk: with `recursive`, every
/// sub-directory of a directory argument is searched too (in name order),
/// except `snapshots/` and `backups/` folders unless asked for; the
/// `keyspace`/`table` filters keep the sstables whose folders name them.
/// Symbolic links to directories are not followed (no cycles).
pub fn find_sstables_with(args: &[PathBuf], how: &Discovery) -> Result<Vec<Descriptor>> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for arg in args {
        let is_dir = store::is_dir_arg(arg).map_err(|e| Error::from(e).in_file(arg))?;
        if is_dir && how.recursive {
            walk(&trim_url_slash(arg), how, &mut dirs)?;
        } else {
            dirs.push(arg.clone());
        }
    }
    let mut out = Vec::new();
    for d in dirs {
        // A sub-directory without sstables is not an error when walking.
        let found = match find_sstables(std::slice::from_ref(&d)) {
            Ok(f) => f,
            Err(e) if how.recursive && (store::is_url(&d) || d.is_dir()) && !args.contains(&d) => {
                if matches!(e.kind, ErrorKind::UnknownVersion(_)) {
                    return Err(e);
                }
                continue;
            }
            Err(e) => return Err(e),
        };
        for s in found {
            if how.wants(&s) && !out.contains(&s) {
                out.push(s);
            }
        }
    }
    Ok(out)
}

/// `dir` and its sub-directories, depth first in name order.
fn walk(dir: &Path, how: &Discovery, out: &mut Vec<PathBuf>) -> Result<()> {
    out.push(dir.to_path_buf());
    let ents = store::list_dir(dir).map_err(|e| Error::from(e).in_file(dir))?;
    let mut subs: Vec<PathBuf> = Vec::new();
    for ent in ents {
        if !ent.is_dir {
            continue;
        }
        let name = ent.name.as_str();
        let skip = (name == "snapshots" && !how.snapshots) || (name == "backups" && !how.backups);
        if !skip {
            subs.push(ent.path);
        }
    }
    subs.sort();
    for s in subs {
        walk(&s, how, out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn location_and_filters_use_folders_then_legacy_names() {
        let id = "0123456789abcdef0123456789abcdef";
        let dir = format!("/d/shop/orders-{id}/snapshots/s1");
        let (d, _) = Descriptor::from_path(Path::new(&format!("{dir}/nb-3-big-Data.db"))).unwrap();
        let l = d.location();
        assert_eq!(
            (
                l.keyspace.as_deref(),
                l.table.as_deref(),
                l.snapshot.as_deref()
            ),
            (Some("shop"), Some("orders"), Some("s1"))
        );
        // A legacy name says what the folders do not.
        let (legacy, _) = Descriptor::from_path(Path::new("/tmp/x/ks-cf-ka-1-Data.db")).unwrap();
        let l = legacy.location();
        assert_eq!(
            (l.keyspace.as_deref(), l.table.as_deref()),
            (Some("ks"), Some("cf"))
        );
        let (plain, _) = Descriptor::from_path(Path::new("/tmp/x/nb-1-big-Data.db")).unwrap();
        let only = |k: Option<&str>, t: Option<&str>| Discovery {
            keyspace: k.map(str::to_string),
            table: t.map(str::to_string),
            ..Discovery::default()
        };
        assert!(only(Some("shop"), Some("orders")).wants(&d));
        assert!(!only(Some("shop"), Some("users")).wants(&d));
        assert!(only(Some("ks"), None).wants(&legacy));
        // Unknown keyspace and table: kept without a filter, left out by one.
        assert!(only(None, None).wants(&plain));
        assert!(!only(Some("shop"), None).wants(&plain));
        assert!(!only(None, Some("orders")).wants(&plain));
    }

    #[test]
    fn modern_and_legacy_names() {
        let p = parse_file_name(Path::new("/d"), "nb-1-big-Data.db").unwrap();
        assert_eq!(p.descriptor.prefix, "nb-1-big-");
        assert_eq!(p.descriptor.generation, Generation::Int(1));
        assert_eq!(p.component, "Data.db");
        let p = parse_file_name(
            Path::new("/d"),
            "da-3gsm_0lob_1zdg02we44my8dy25w-bti-Rows.db",
        )
        .unwrap();
        assert_eq!(p.descriptor.format, FormatKind::Bti);
        assert!(matches!(p.descriptor.generation, Generation::Uuid(_)));
        let p = parse_file_name(Path::new("/d"), "ks-cf-ka-12-Digest.sha1").unwrap();
        assert_eq!(p.descriptor.ks_table, Some(("ks".into(), "cf".into())));
        assert_eq!(p.descriptor.version.as_str(), "ka");
        assert_eq!(p.descriptor.prefix, "ks-cf-ka-12-");
        assert!(parse_file_name(Path::new("/d"), "schema.cql").is_err());
        assert!(parse_file_name(Path::new("/d"), "zz-1-big-Data.db").is_err());
        assert!(parse_file_name(Path::new("/d"), "nb-x1-big-Data.db").is_err());
    }

    #[test]
    fn locations_in_a_data_directory() {
        let id = "3fbb65f0e68911f1b41253bd8bb18368";
        let l = Location::of_dir(Path::new(&format!(
            "/var/lib/cassandra/data/ks1/users-{id}"
        )));
        assert_eq!(l.keyspace.as_deref(), Some("ks1"));
        assert_eq!(l.table.as_deref(), Some("users"));
        assert_eq!(l.table_id.as_deref(), Some(id));
        assert_eq!((l.snapshot, l.backup, l.index), (None, None, None));
        let l = Location::of_dir(Path::new(&format!("/d/ks1/users-{id}/snapshots/before")));
        assert_eq!(l.snapshot.as_deref(), Some("before"));
        assert_eq!(l.table_name().as_deref(), Some("ks1.users"));
        let l = Location::of_dir(Path::new(&format!("/d/ks1/users-{id}/backups")));
        assert_eq!(l.backup.as_deref(), Some("backups"));
        let l = Location::of_dir(Path::new(&format!("/d/ks1/users-{id}/.users_by_mail")));
        assert_eq!(l.index.as_deref(), Some("users_by_mail"));
        assert_eq!(l.table.as_deref(), Some("users"));
        // A table-named folder needs its 32-hex id.
        assert_eq!(
            Location::of_dir(Path::new("/tmp/users-123")),
            Location::default()
        );
    }
}
