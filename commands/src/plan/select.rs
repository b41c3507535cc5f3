//! Partition selection for `dump-data`: `--key`, `--key-hex`, `--keys-file`,
//! `--exclude-key`, `--token-range`, and the index lookup of single keys.
//!
//! Keys typed by the user are parsed per sstable, with its partition key type
//! ([`sstkit_format::value::parse_key_arg`]: CQL literal or Cassandra string
//! form, composite keys `a:b` with `\:` for a literal colon).
//!
//! The resolved [`Selection`] is the engine's: it looks the keys up through
//! `format`'s partition index ([`Selection::positions`]).

// `CmdError` wraps `sstkit_format::Error` by value, which clippy finds large
// for every `CmdResult`; boxing it is a crate-wide change (lib.rs), not this
// module's.

use std::path::PathBuf;

use sstkit_format::engine::Selection;
use sstkit_format::read::Absence;
use sstkit_format::token::{Partitioner, Token};
use sstkit_format::types::CqlType;
use sstkit_format::value::literal::unhex;
use sstkit_format::value::{key_type_name, parse_key_arg};

use crate::cli::KeySelectArgs;
use crate::sink::Table;
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
            keys.push(KeyArg::Hex(parse_hex("--key-hex", h)?));
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

/// Parse a key or value given in hex to the flag `flag`, with or without
/// `0x`: the one place hex arguments are checked, so every command says the
/// same (a usage error, exit 2).
pub fn parse_hex(flag: &str, h: &str) -> CmdResult<Vec<u8>> {
    let t = h.trim();
    let t = t
        .strip_prefix("0x")
        .or_else(|| t.strip_prefix("0X"))
        .unwrap_or(t);
    unhex(t).ok_or_else(|| CmdError::Usage(format!("{flag} {h:?}: not an even-length hex string")))
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
            v.push(KeyArg::Hex(parse_hex("--key-hex", h)?));
        } else {
            v.push(KeyArg::Literal(l.to_string()));
        }
    }
    Ok(v)
}

/// Parse one key typed by the user for the partition key type `kt`: the
/// one place a key is checked against its type, so every command says the
/// same (a usage error, exit 2).
pub fn parse_key(kt: &CqlType, s: &str) -> CmdResult<Vec<u8>> {
    parse_key_arg(kt, s).map_err(|e| {
        CmdError::Usage(format!(
            "key {s:?} is not a valid {} value: {}",
            key_type_name(kt),
            e.kind
        ))
    })
}

impl KeyArg {
    /// The key as the user wrote it.
    pub fn label(&self) -> String {
        match self {
            KeyArg::Literal(s) => s.clone(),
            KeyArg::Hex(b) => format!("0x{}", crate::output::hex(b)),
        }
    }

    /// The key's bytes for the partition key type `kt`.
    pub fn bytes(&self, kt: &CqlType) -> CmdResult<Vec<u8>> {
        match self {
            KeyArg::Literal(s) => parse_key(kt, s),
            KeyArg::Hex(b) => Ok(b.clone()),
        }
    }
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
        Partitioner::ByteOrdered => {
            Token::ByteOrdered(parse_hex("--token-range", s).map_err(|_| bad())?)
        }
        Partitioner::OrderPreserving => Token::OrderPreserving(s.to_string()),
        Partitioner::Local(_) => Token::Local(parse_hex("--token-range", s).map_err(|_| bad())?),
    })
}

/// Resolve `spec` for the sstable (or merged table) described by `t`.
pub fn resolve(spec: &Spec, t: &Table<'_>) -> CmdResult<Selection> {
    let kt = &t.header.partition_key_type;
    let keys = match &spec.keys {
        None => None,
        Some(args) => Some(
            args.iter()
                .map(|a| a.bytes(kt))
                .collect::<CmdResult<Vec<_>>>()?,
        ),
    };
    let exclude = spec
        .exclude
        .iter()
        .map(|s| parse_key(kt, s))
        .collect::<CmdResult<Vec<_>>>()?;
    let range = match &spec.token_range {
        None => None,
        Some((s, e)) => Some((
            parse_token(&t.partitioner, s)?,
            parse_token(&t.partitioner, e)?,
        )),
    };
    Ok(Selection::new(t, keys, exclude, range))
}

/// Say on stderr that a selected key is absent (an engine [`sstkit_format::engine::Note`]).
pub fn note_absent(label: &str, t: &Table<'_>, key: &[u8], absence: Absence) {
    note_key_absent(label, &key_text(t, key), absence);
}

/// An engine error as a command error, naming the partition it happened
/// in (its key text and hex) when the engine knows it.
pub fn located(t: &Table<'_>, e: sstkit_format::engine::Error) -> CmdError {
    match e {
        sstkit_format::engine::Error::Read {
            error,
            key: Some(key),
        } => in_partition(t, &key, CmdError::Format(error)),
        e => CmdError::from(e),
    }
}

/// Name the partition of `key` (its text and hex) in a read error.
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

/// Why a looked-up key is not in an sstable, in words.
pub fn absence_text(why: sstkit_format::read::Absence) -> &'static str {
    use sstkit_format::read::Absence;
    match why {
        Absence::Filter => "bloom filter says absent",
        Absence::KeyRange => "outside the sstable's key range",
        Absence::Index => "not in the index",
        Absence::Data => "not in Data.db (no index: every partition was read)",
    }
}

/// Tell on stderr that `key` (as the user wrote it, or its text form) is
/// not in the sstable `label`, and why: the command goes on (exit 0).
pub fn note_key_absent(label: &str, key: &str, why: sstkit_format::read::Absence) {
    crate::term::note(
        crate::term::Style::Warn,
        &format!("{label}: key '{key}' not found: {}", absence_text(why)),
    );
}
