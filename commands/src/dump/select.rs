//! Partition selection for `dump-data`: `--key`, `--key-hex`, `--keys-file`,
//! `--exclude-key`, `--token-range`, and the index lookup of single keys.
//!
//! Keys typed by the user are parsed per sstable, with its partition key type
//! ([`sstkit_format::value::parse_key_arg`]: CQL literal or Cassandra string
//! form, composite keys `a:b` with `\:` for a literal colon).
//!
//! Point lookups ([`lookup_positions`]) go through `format`'s partition
//! index ([`sstkit_format::read::PartitionIndex`], the one way from a key to
//! a position): Filter.db first (a key it rules out costs no further read),
//! then BIG: Summary.db and the Index.db page(s) between two samples; BTI:
//! Partitions.db. Partitions are then read in Data.db order.

// `CmdError` wraps `sstkit_format::Error` by value, which clippy finds large
// for every `CmdResult`; boxing it is a crate-wide change (lib.rs), not this
// module's.

use std::collections::HashSet;
use std::path::PathBuf;

use sstkit_format::component::Component;
use sstkit_format::data::DataPos;
use sstkit_format::read::Absence;
use sstkit_format::token::{Partitioner, Token};
use sstkit_format::value::literal::unhex;
use sstkit_format::value::{key_type_name, parse_key_arg};
use sstkit_format::Sstable;

use super::Table;
use crate::cli::KeySelectArgs;
use crate::render::note_key_absent;
use crate::{CmdError, CmdResult};

/// A key as the user gave it.
#[derive(Debug, Clone)]
pub enum KeyArg {
    /// CQL literal form (composite `a:b`).
    Literal(String),
    /// Hex of the serialized key.
    Hex(Vec<u8>),
}

/// The selection flags, parsed once (independent of any sstable).
#[derive(Debug, Clone, Default)]
pub struct Spec {
    /// `--key`, `--key-hex`, `--keys-file`; `None` = every key.
    pub keys: Option<Vec<KeyArg>>,
    /// `--exclude-key`.
    pub exclude: Vec<String>,
    /// `--token-range START,END` as given.
    pub token_range: Option<(String, String)>,
}

impl Spec {
    /// Parse and check the flags (usage errors exit 2).
    pub fn from_args(a: &KeySelectArgs) -> CmdResult<Spec> {
        Spec::new(
            &a.key,
            &a.key_hex,
            a.keys_file.as_ref(),
            &a.exclude_key,
            a.token_range.as_deref(),
        )
    }

    /// Parse and check the flags given one by one.
    pub fn new(
        key: &[String],
        key_hex: &[String],
        keys_file: Option<&PathBuf>,
        exclude_key: &[String],
        token_range: Option<&str>,
    ) -> CmdResult<Spec> {
        let mut keys: Vec<KeyArg> = key.iter().map(|k| KeyArg::Literal(k.clone())).collect();
        for h in key_hex {
            keys.push(KeyArg::Hex(parse_hex(h)?));
        }
        let mut any = !key.is_empty() || !key_hex.is_empty();
        if let Some(f) = keys_file {
            any = true;
            keys.extend(read_keys_file(f)?);
        }
        let token_range = match token_range {
            None => None,
            Some(r) => {
                let (s, e) = r.split_once(',').ok_or_else(|| {
                    CmdError::Usage(format!("--token-range {r:?}: expected START,END"))
                })?;
                Some((s.trim().to_string(), e.trim().to_string()))
            }
        };
        Ok(Spec {
            keys: any.then_some(keys),
            exclude: exclude_key.to_vec(),
            token_range,
        })
    }
}

fn parse_hex(h: &str) -> CmdResult<Vec<u8>> {
    let t = h.trim();
    let t = t
        .strip_prefix("0x")
        .or_else(|| t.strip_prefix("0X"))
        .unwrap_or(t);
    unhex(t)
        .ok_or_else(|| CmdError::Usage(format!("--key-hex {h:?}: not an even-length hex string")))
}

fn read_keys_file(f: &PathBuf) -> CmdResult<Vec<KeyArg>> {
    let text = std::fs::read_to_string(f)
        .map_err(|e| CmdError::from(sstkit_format::Error::from(e).in_file(f)))?;
    let mut v = Vec::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            continue;
        }
        let l = line.trim_end_matches('\r');
        if let Some(h) = l.trim().strip_prefix("0x") {
            v.push(KeyArg::Hex(parse_hex(h)?));
        } else {
            v.push(KeyArg::Literal(l.to_string()));
        }
    }
    Ok(v)
}

/// The selection resolved against one sstable's key type and partitioner.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Serialized keys, in Data.db (decorated key) order, deduplicated.
    pub keys: Option<Vec<Vec<u8>>>,
    key_set: HashSet<Vec<u8>>,
    exclude: HashSet<Vec<u8>>,
    range: Option<(Token, Token)>,
}

fn parse_token(p: &Partitioner, s: &str) -> CmdResult<Token> {
    let bad = || CmdError::Usage(format!("--token-range: {s:?} is not a {} token", p.name()));
    Ok(match p {
        Partitioner::Murmur3 => Token::Murmur3(s.parse().map_err(|_| bad())?),
        Partitioner::Random => {
            if s == "-1" {
                Token::Random(None)
            } else {
                Token::Random(Some(s.parse().map_err(|_| bad())?))
            }
        }
        Partitioner::ByteOrdered => Token::ByteOrdered(parse_hex(s).map_err(|_| bad())?),
        Partitioner::OrderPreserving => Token::OrderPreserving(s.to_string()),
        Partitioner::Local(_) => Token::Local(parse_hex(s).map_err(|_| bad())?),
    })
}

impl Selection {
    /// Resolve `spec` for the sstable described by `t`.
    pub fn resolve(spec: &Spec, t: &Table<'_>) -> CmdResult<Selection> {
        let kt = &t.header.partition_key_type;
        let parse = |s: &str| {
            parse_key_arg(kt, s).map_err(|e| {
                CmdError::Usage(format!(
                    "key {s:?} is not a valid {} value: {}",
                    key_type_name(kt),
                    e.kind
                ))
            })
        };
        let keys = match &spec.keys {
            None => None,
            Some(args) => {
                let mut v = Vec::with_capacity(args.len());
                for a in args {
                    v.push(match a {
                        KeyArg::Literal(s) => parse(s)?,
                        KeyArg::Hex(b) => b.clone(),
                    });
                }
                v.sort_by(|a, b| t.partitioner.compare_decorated(a, b));
                v.dedup();
                Some(v)
            }
        };
        let mut exclude = HashSet::new();
        for s in &spec.exclude {
            exclude.insert(parse(s)?);
        }
        let range = match &spec.token_range {
            None => None,
            Some((s, e)) => Some((
                parse_token(&t.partitioner, s)?,
                parse_token(&t.partitioner, e)?,
            )),
        };
        let key_set = keys.iter().flatten().cloned().collect();
        Ok(Selection {
            keys,
            key_set,
            exclude,
            range,
        })
    }

    /// True when the partition with serialized key `key` is selected.
    pub fn wants(&self, t: &Table<'_>, key: &[u8]) -> bool {
        if self.keys.is_some() && !self.key_set.contains(key) {
            return false;
        }
        if self.exclude.contains(key) {
            return false;
        }
        if let Some((start, end)) = &self.range {
            let tok = t.partitioner.token(key);
            // (start, end], wrapping when start >= end (Cassandra's Range).
            let after_start = tok.partial_cmp(start) == Some(std::cmp::Ordering::Greater);
            let upto_end = tok.partial_cmp(end) != Some(std::cmp::Ordering::Greater);
            let wraps = start.partial_cmp(end) != Some(std::cmp::Ordering::Less);
            let inside = if wraps {
                after_start || upto_end
            } else {
                after_start && upto_end
            };
            if !inside {
                return false;
            }
        }
        true
    }
}

/// The Data.db positions of the selected keys, through the sstable's
/// partition index ([`sstkit_format::read::open_index`]: BIG Filter.db,
/// Summary.db and Index.db; BTI Filter.db and Partitions.db), in Data.db
/// order; absent keys are said on stderr and skipped. `None` when the
/// selection is not a key list, or the sstable has no index to look keys
/// up with (the caller scans).
pub fn lookup_positions(
    sst: &Sstable,
    t: &Table<'_>,
    sel: &Selection,
) -> CmdResult<Option<Vec<DataPos>>> {
    let Some(keys) = &sel.keys else {
        return Ok(None);
    };
    let indexed = if sst.features().trie_index {
        sst.io.exists(Component::Partitions)
    } else {
        sst.io.exists(Component::Index) && sst.io.exists(Component::Summary)
    };
    if !indexed {
        return Ok(None);
    }
    let mut index = sstkit_format::read::open_index(sst, t.partitioner.clone(), t.header)?;
    let label = crate::sstable_label(sst);
    let mut out = Vec::new();
    for key in keys {
        if sel.exclude.contains(key) || !sel.wants(t, key) {
            continue;
        }
        match index.find(key)? {
            Some(h) => out.push(h.position),
            None => note_key_absent(
                &label,
                &key_text(t, key),
                index.last_absence().unwrap_or(Absence::Index),
            ),
        }
    }
    out.sort();
    out.dedup();
    Ok(Some(out))
}

/// A format error located in the partition `key`, named by its text form
/// and its hex, as the data commands report it; other errors unchanged.
pub fn in_partition(t: &Table<'_>, key: &[u8], e: CmdError) -> CmdError {
    match e {
        CmdError::Format(e) => CmdError::from(e.in_partition(format!(
            "{} (0x{})",
            key_text(t, key),
            crate::output::hex(key)
        ))),
        e => e,
    }
}

/// The text form of a selected key, for messages.
pub fn key_text(t: &Table<'_>, key: &[u8]) -> String {
    let mut s = String::new();
    crate::render::render(
        &t.header.partition_key_type,
        key,
        crate::render::Form::Str,
        &mut s,
    );
    s
}
