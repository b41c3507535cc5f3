//! Partition selection for `dump-data`: `--key`, `--key-hex`, `--keys-file`,
//! `--exclude-key`, `--token-range`, and the index lookup of single keys.
//!
//! Keys typed by the user are parsed per sstable, with its partition key type
//! ([`sstkit_format::value::parse_key_arg`]: CQL literal or Cassandra string
//! form, composite keys `a:b` with `\:` for a literal colon).
//!
//! Point lookups ([`lookup_positions`], BIG sstables with Summary.db and
//! Index.db): Filter.db first (a key it rules out costs no further read),
//! then a binary search of Summary.db and one bounded read of the Index.db
//! range between two samples, scanned for the exact key. Partitions are then
//! read in Data.db order.

// `CmdError` wraps `sstkit_format::Error` by value, which clippy finds large
// for every `CmdResult`; boxing it is a crate-wide change (lib.rs), not this
// module's.

use std::collections::HashSet;
use std::path::PathBuf;

use sstkit_format::component::Component;
use sstkit_format::data::DataPos;
use sstkit_format::filter::BloomFilter;
use sstkit_format::index::IndexReader;
use sstkit_format::io::ReadKind;
use sstkit_format::read::Absence;
use sstkit_format::summary::Summary;
use sstkit_format::token::{Partitioner, Token};
use sstkit_format::value::literal::unhex;
use sstkit_format::value::{key_type_name, parse_key_arg};
use sstkit_format::Sstable;

use super::Table;
use crate::cli::DumpDataArgs;
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
    pub fn from_args(a: &DumpDataArgs) -> CmdResult<Spec> {
        let mut keys: Vec<KeyArg> = a.key.iter().map(|k| KeyArg::Literal(k.clone())).collect();
        for h in &a.key_hex {
            keys.push(KeyArg::Hex(parse_hex(h)?));
        }
        let mut any = !a.key.is_empty() || !a.key_hex.is_empty();
        if let Some(f) = &a.keys_file {
            any = true;
            keys.extend(read_keys_file(f)?);
        }
        let token_range = match &a.token_range {
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
            exclude: a.exclude_key.clone(),
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

/// Data.db positions of the selected keys found through the index (Data.db
/// order), or `None` when the selection is not a key list or the sstable has
/// no Summary.db/Index.db to look keys up with (then the caller scans).
pub fn lookup_positions(
    sst: &Sstable,
    t: &Table<'_>,
    sel: &Selection,
) -> CmdResult<Option<Vec<DataPos>>> {
    let Some(keys) = &sel.keys else {
        return Ok(None);
    };
    if !sst.io.exists(Component::Index) || !sst.io.exists(Component::Summary) {
        return Ok(None);
    }
    let features = sst.features();
    let filter = if sst.io.exists(Component::Filter) {
        let b = sst.io.read_all(Component::Filter)?;
        Some(
            BloomFilter::parse(&b, &features)
                .map_err(|e| e.in_file(&sst.path(Component::Filter)))?,
        )
    } else {
        None
    };
    let sb = sst.io.read_all(Component::Summary)?;
    let summary = Summary::parse(&sb, &sst.features())
        .map_err(|e| e.in_file(&sst.path(Component::Summary)))?;
    let index_len = sst.io.len(Component::Index)?;
    let label = crate::sstable_label(sst);
    let mut out = Vec::new();
    for key in keys {
        if sel.exclude.contains(key) || !sel.wants(t, key) {
            continue;
        }
        let absent = |why| note_key_absent(&label, &key_text(t, key), why);
        if let Some(f) = &filter {
            if !f.may_contain(key) {
                absent(Absence::Filter);
                continue;
            }
        }
        let Some(i) = summary.floor(|k| t.partitioner.compare_decorated(k, key)) else {
            absent(Absence::KeyRange);
            continue;
        };
        let Some((start, end)) = summary.index_range(i) else {
            absent(Absence::Index);
            continue;
        };
        let end = end.unwrap_or(index_len).min(index_len);
        if end <= start {
            absent(Absence::Index);
            continue;
        }
        let buf = sst.io.read(
            Component::Index,
            start,
            (end - start) as usize,
            ReadKind::Point,
        )?;
        let mut r = IndexReader::at(&buf, start, features);
        let mut found = false;
        while let Some(e) = r
            .next()
            .map_err(|e| e.in_file(&sst.path(Component::Index)))?
        {
            match t.partitioner.compare_decorated(e.key, key) {
                std::cmp::Ordering::Less => continue,
                std::cmp::Ordering::Equal => {
                    out.push(DataPos(e.position));
                    found = true;
                    break;
                }
                std::cmp::Ordering::Greater => break,
            }
        }
        if !found {
            absent(Absence::Index);
        }
    }
    Ok(Some(out))
}

/// The text form of a selected key, for messages.
pub fn key_text(t: &Table<'_>, key: &[u8]) -> String {
    let mut s = String::new();
    crate::dump::values::render(
        &t.header.partition_key_type,
        key,
        crate::dump::values::Form::Str,
        &mut s,
    );
    s
}
