//! [`Selection`]: which partitions a read wants, by key and by token.

use std::cmp::Ordering;
use std::collections::HashSet;

use super::{Note, Notes, Table};
use crate::component::Component;
use crate::data::DataPos;
use crate::read::{Absence, TokenBound};
use crate::token::Token;
use crate::Sstable;

/// The partitions a read selects: a key list (`None`: every partition),
/// keys to leave out, and a token range `(start, end]` (`start >= end`
/// wraps around the ring). Keys are in their stored (serialized) form.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    keys: Option<Vec<Vec<u8>>>,
    key_set: HashSet<Vec<u8>>,
    exclude: HashSet<Vec<u8>>,
    range: Option<(Token, Token)>,
}

impl Selection {
    /// Every partition.
    pub fn all() -> Selection {
        Selection::default()
    }

    /// A selection; `keys` are put in the partitioner's order (the order of
    /// Data.db), duplicates dropped.
    pub fn new(
        t: &Table<'_>,
        keys: Option<Vec<Vec<u8>>>,
        exclude: impl IntoIterator<Item = Vec<u8>>,
        range: Option<(Token, Token)>,
    ) -> Selection {
        let keys = keys.map(|mut v| {
            v.sort_by(|a, b| t.partitioner.compare_decorated(a, b));
            v.dedup();
            v
        });
        let key_set = keys.iter().flatten().cloned().collect();
        Selection {
            keys,
            key_set,
            exclude: exclude.into_iter().collect(),
            range,
        }
    }

    /// The keys asked for, in Data.db order; `None` for a scan.
    pub fn keys(&self) -> Option<&[Vec<u8>]> {
        self.keys.as_deref()
    }

    /// Whether the partition of `key` lies past the end of a token range
    /// that does not wrap: Data.db is in token order, so no later partition
    /// is selected and a scan can stop there.
    pub fn past_end(&self, t: &Table<'_>, key: &[u8]) -> bool {
        let Some((start, end)) = &self.range else {
            return false;
        };
        let wraps = start.partial_cmp(end) != Some(Ordering::Less);
        !wraps && t.partitioner.token(key).partial_cmp(end) == Some(Ordering::Greater)
    }

    /// The token range, when it does not wrap around the ring.
    fn straight_range(&self) -> Option<&(Token, Token)> {
        self.range
            .as_ref()
            .filter(|(s, e)| s.partial_cmp(e) == Some(Ordering::Less))
    }

    /// Where a scan of the selection can start in Data.db: at the first
    /// partition after the start of a token range that does not wrap,
    /// found through the partition index ([`super::seek::ceiling`]). The
    /// start of the data without such a range, or when the index cannot
    /// say (none, or damaged: the scan then meets what a scan from the
    /// start meets).
    pub fn scan_start(&self, sst: &Sstable, t: &Table<'_>) -> DataPos {
        let Some((start, _)) = self.straight_range() else {
            return DataPos(0);
        };
        self.seek(sst, t, start).unwrap_or(DataPos(0))
    }

    /// Where a scan of the selection can stop in Data.db: at the first
    /// partition after the end of a token range that does not wrap (`None`:
    /// the end of the data, or the index cannot say).
    pub fn scan_end(&self, sst: &Sstable, t: &Table<'_>) -> Option<DataPos> {
        let (_, end) = self.straight_range()?;
        self.seek(sst, t, end)
    }

    /// Whether the partition of `key` lies in the gap of a token range
    /// that wraps around the ring (`(start, MAX]` and `[MIN, end]`): after
    /// `end`, up to `start`.
    pub fn in_gap(&self, t: &Table<'_>, key: &[u8]) -> bool {
        let Some((start, end)) = &self.range else {
            return false;
        };
        if self.straight_range().is_some() {
            return false;
        }
        let tok = t.partitioner.token(key);
        tok.partial_cmp(end) == Some(Ordering::Greater)
            && tok.partial_cmp(start) != Some(Ordering::Greater)
    }

    /// Where the part of a wrapping token range after its start begins in
    /// Data.db, so a scan can step over the gap ([`Selection::in_gap`]);
    /// `None` without a wrapping range, or when the index cannot say.
    pub fn after_gap(&self, sst: &Sstable, t: &Table<'_>) -> Option<DataPos> {
        let (start, _) = self.range.as_ref()?;
        if self.straight_range().is_some() {
            return None;
        }
        self.seek(sst, t, start)
    }

    /// The first partition after token `tok`, through the index.
    fn seek(&self, sst: &Sstable, t: &Table<'_>, tok: &Token) -> Option<DataPos> {
        let bound = TokenBound {
            token: tok.clone(),
            exclusive: true,
        };
        super::seek::ceiling(sst, t, &bound).ok().flatten()
    }

    /// Whether the token range `(after, upto]` (`None`: the ring's start,
    /// or its end) can hold a selected partition: false only when it lies
    /// wholly outside a token range that does not wrap.
    pub fn may_hold(&self, after: Option<&Token>, upto: Option<&Token>) -> bool {
        let Some((start, end)) = self.straight_range() else {
            return true;
        };
        let before_end = after.is_none_or(|a| a.partial_cmp(end) == Some(Ordering::Less));
        let after_start = upto.is_none_or(|u| u.partial_cmp(start) == Some(Ordering::Greater));
        before_end && after_start
    }

    /// Whether the partition of `key` is selected.
    pub fn wants(&self, t: &Table<'_>, key: &[u8]) -> bool {
        if self.keys.is_some() && !self.key_set.contains(key) {
            return false;
        }
        if self.exclude.contains(key) {
            return false;
        }
        if let Some((start, end)) = &self.range {
            let tok = t.partitioner.token(key);
            let after_start = tok.partial_cmp(start) == Some(Ordering::Greater);
            let upto_end = tok.partial_cmp(end) != Some(Ordering::Greater);
            let wraps = start.partial_cmp(end) != Some(Ordering::Less);
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

    /// The Data.db positions of the selected keys, found through the
    /// sstable's partition index (BIG: Filter.db, Summary.db, Index.db;
    /// BTI: Filter.db, Partitions.db), in Data.db order; a key the index
    /// does not hold is a [`Note::KeyAbsent`]. `None` when the selection is
    /// a scan, or the sstable has no index to look keys up in (it is
    /// scanned and filtered then).
    pub fn positions(
        &self,
        sst: &Sstable,
        t: &Table<'_>,
        notes: &mut Notes<'_>,
    ) -> crate::Result<Option<Vec<DataPos>>> {
        let Some(keys) = &self.keys else {
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
        let mut index = crate::read::open_index(sst, t.partitioner.clone(), t.header)?;
        let mut out = Vec::new();
        for key in keys {
            if !self.wants(t, key) {
                continue;
            }
            match index.find(key)? {
                Some(h) => out.push(h.position),
                None => notes(Note::KeyAbsent {
                    key,
                    absence: index.last_absence().unwrap_or(Absence::Index),
                }),
            }
        }
        out.sort();
        out.dedup();
        Ok(Some(out))
    }
}
