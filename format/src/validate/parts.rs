//! One large partition's rows and markers walked in parts on threads
//! ([`super::parallel`]): cut at the row-index blocks its index entry
//! lists (BIG: the promoted index of its Index.db entry; BTI: its Rows.db
//! entry), each part checked with a [`DataChecker`] of its own that starts
//! inside the partition, with the range tombstone the index says is open
//! there and no previous clustering.
//!
//! A part's result is taken only when the part is clean: nothing found
//! (no problem, no reader finding, every promoted-index block of the part
//! met and matching), and decoded to exactly where the next part starts
//! (the last part: through its END_OF_PARTITION). [`PartsJoin`] then checks
//! what a part cannot see alone, at each boundary: the part's first
//! clustering sorts after the previous part's last, the range tombstone
//! open where it starts is the one it assumed, and its first
//! `prev_unfiltered_size` is the distance from the previous part's last
//! unfiltered. When every part is clean and every boundary holds, one
//! thread walking the partition finds nothing in its body either, and
//! ends with the same counts and state; otherwise the calling thread walks
//! the partition itself, as one thread does.

use std::cmp::Ordering;
use std::ops::Range;

use crate::compare::{ClusteringComparator, OwnedPrefix};
use crate::component::Component;
use crate::cur::Cur;
use crate::data::{DataPos, Fragment, ScanReader};
use crate::deletion::DeletionTime;
use crate::index::{decode_index_info, IndexReader};
use crate::read::{BtiIndex, PartitionIndex};
use crate::sstable::Sstable;

use super::data::{BodyCounts, DataChecker};
use super::problem::Problems;
use super::promoted::{PiCheck, PiPart};
use super::walk::{IndexAt, Shared};

/// A part of a large partition: from a row-index block's start to the
/// next part's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Part {
    /// Where the part starts: the partition's start (the first part) or
    /// the start of its first block.
    pub(super) from: u64,
    /// Where the next part starts (`None`: the last part, to the
    /// partition's end).
    pub(super) to: Option<u64>,
    /// Its blocks in the row index.
    blocks: Range<usize>,
    /// Where the first of them is in Index.db (BIG): the blocks follow
    /// one another from there.
    at: u64,
    /// The range tombstone the index says is open where the part starts.
    pub(super) open: Option<DeletionTime>,
}

/// A large partition cut into parts.
#[derive(Debug)]
pub(super) struct Plan {
    /// The partition's start in Data.db.
    start: u64,
    /// Where the unit holding it ends.
    end: u64,
    key: Vec<u8>,
    /// Its promoted index's header length and deletion (BIG): the parts
    /// check the blocks of its promoted index.
    header: Option<(Option<u64>, DeletionTime)>,
    /// Where that promoted index starts in Index.db: the walk takes the
    /// parts only when its own check of the partition is of this one.
    pub(super) pi_position: Option<u64>,
    pub(super) parts: Vec<Part>,
}

/// Where the parts of a partition at `start` (in a unit ending at `end`)
/// start, from its blocks (their offsets relative to `start`, the range
/// tombstone open at their ends, where they are in Index.db), each part
/// about `target` bytes.
/// `None` when the blocks are out of order, past the unit, or too few.
fn cut(
    start: u64,
    end: u64,
    target: u64,
    blocks: impl Iterator<Item = crate::Result<(u64, Option<DeletionTime>, u64)>>,
) -> Option<Vec<Part>> {
    let mut parts = Vec::new();
    let (mut from, mut first, mut open, mut first_at) = (start, 0, None, 0);
    let (mut prev, mut prev_open, mut count) = (None::<u64>, None, 0);
    for (i, b) in blocks.enumerate() {
        let (offset, end_open, index_at) = b.ok()?;
        if i == 0 {
            first_at = index_at;
        }
        let at = start.checked_add(offset)?;
        if prev.is_some_and(|p| at <= p) || at >= end {
            return None;
        }
        if i > 0 && at - from >= target {
            parts.push(Part {
                from,
                to: Some(at),
                blocks: first..i,
                at: first_at,
                open,
            });
            (from, first, open, first_at) = (at, i, prev_open, index_at);
        }
        (prev, prev_open, count) = (Some(at), end_open, i + 1);
    }
    parts.push(Part {
        from,
        to: None,
        blocks: first..count,
        at: first_at,
        open,
    });
    (parts.len() > 1).then_some(parts)
}

/// Cut the large partition at the start of the unit `[start, end)` into
/// parts of about `target` bytes at its row-index blocks. BIG: from the
/// promoted index of the Index.db entry the walk takes there (`at`); BTI:
/// its key read from Data.db and looked up in Partitions.db (`bti`, opened
/// at the first large partition). `None` when it has no row index to cut
/// at, or one that disagrees with the unit: the partition is then walked
/// whole.
pub(super) fn plan<'s>(
    sst: &'s Sstable,
    sh: &Shared<'_>,
    (start, end): (u64, u64),
    at: IndexAt,
    target: u64,
    bti: &mut Option<Option<BtiIndex<'s>>>,
) -> Option<Plan> {
    let target = target.max(1);
    if sh.index.is_some() {
        let IndexAt::Next(off) = at else { return None };
        let bytes = sh.index?.get(usize::try_from(off).ok()?..)?;
        let e = IndexReader::at(bytes, off, sh.features).next().ok()??;
        let pi = e.promoted.as_ref().filter(|p| !p.is_legacy())?;
        if e.position != start {
            return None;
        }
        let blocks = pi.blocks(&sh.fixed).ok()?;
        let parts = cut(
            start,
            end,
            target,
            blocks
                .iter()
                .map(|b| Ok((b.offset, b.end_open_marker, b.position))),
        )?;
        return Some(Plan {
            start,
            end,
            key: e.key.to_vec(),
            header: Some((pi.header_length, pi.deletion)),
            pi_position: Some(pi.position),
            parts,
        });
    }
    if !sst.features().trie_index {
        return None;
    }
    let key = {
        let mut reader = ScanReader::with_options(sst, sh.header, sh.reader).ok()?;
        // Only the key is read here: the parts read the partition.
        reader.set_read_kind(crate::io::ReadKind::Point);
        reader.seek_partition(DataPos(start)).ok()?;
        match reader.next_fragment() {
            Ok(Some(Fragment::PartitionStart { key, .. })) => key.to_vec(),
            _ => return None,
        }
    };
    let index = bti
        .get_or_insert_with(|| {
            BtiIndex::open_without_filter(sst, sh.partitioner.clone(), &sh.header.clustering_types)
                .ok()
        })
        .as_mut()?;
    let mut h = index.find(&key).ok()??;
    if h.position.0 != start {
        return None;
    }
    let ri = h.row_index.as_mut()?;
    let n = ri.block_count();
    let parts = cut(
        start,
        end,
        target,
        (0..n).map(|i| {
            ri.block_walk(sst, i)
                .map(|b| (b.offset, b.end_open_marker, 0))
        }),
    )?;
    Some(Plan {
        start,
        end,
        key,
        header: None,
        pi_position: None,
        parts,
    })
}

/// What the walk of one part found: whether it is clean, and what the
/// join checks at its boundaries. Holds no row of the part.
#[derive(Debug)]
pub(super) struct PartDone {
    clean: bool,
    /// Where decoding stopped.
    end: u64,
    /// The part's first unfiltered: its start, its stored
    /// `prev_unfiltered_size` and its clustering.
    first: Option<(u64, u64, OwnedPrefix)>,
    /// The part's last unfiltered: its start and its clustering.
    last: Option<(u64, OwnedPrefix)>,
    /// The range tombstone open at the part's end.
    open: Option<DeletionTime>,
    counts: BodyCounts,
}

/// Walk part `k` of `plan` on this thread (with `sst`, this thread's
/// handle). `None` when the reader cannot be made (the part is then not
/// taken).
pub(super) fn walk_part(sst: &Sstable, sh: &Shared<'_>, plan: &Plan, k: usize) -> Option<PartDone> {
    let part = plan.parts.get(k)?;
    let first_part = k == 0;
    let mut reader = ScanReader::with_options(sst, sh.header, sh.reader).ok()?;
    // The part's bytes in one planned read (object storage: one request).
    reader.plan_unit(Some(DataPos(part.to.unwrap_or(plan.end))));
    let mut checker = DataChecker::new(sh.header, sh.partitioner.clone(), sh.chunk_len);
    // Anything found makes the part unclean: one is enough to keep.
    let mut problems = Problems::with_max(1);
    let mut pi = match (plan.header, plan.pi_position) {
        (Some((header_length, deletion)), Some(position)) => {
            let whole = PiPart {
                key: &plan.key,
                header_length,
                deletion,
                position,
            };
            // The part's blocks one after the other from its first: the
            // plan checked them against the offsets array.
            let bytes = sh.index?.get(usize::try_from(part.at).ok()?..)?;
            let mut cur = Cur::new(bytes, Component::Index, part.at);
            let blocks = part
                .blocks
                .clone()
                .map(|_| decode_index_info(&mut cur, &sh.fixed, &sh.features));
            Some(PiCheck::for_part(
                &whole,
                blocks,
                part.blocks.start,
                first_part,
            )?)
        }
        _ => None,
    };
    let mut done = PartDone {
        clean: false,
        end: part.from,
        first: None,
        last: None,
        open: None,
        counts: BodyCounts::default(),
    };
    if first_part {
        reader.seek_partition(DataPos(plan.start)).ok()?;
        match reader.next_fragment() {
            Ok(Some(Fragment::PartitionStart { key, deletion, .. })) => {
                // The header's findings are the calling thread's, which
                // reads it again.
                let mut header = Problems::with_max(0);
                checker.partition_start(key, &deletion, plan.start, false, &mut header);
            }
            _ => return Some(done),
        }
    } else {
        reader
            .seek_to(DataPos(plan.start), &plan.key, DataPos(part.from))
            .ok()?;
        checker.resume_partition(&plan.key, plan.start, part.open, part.from);
    }
    let mut ended = false;
    loop {
        if part.to.is_some_and(|to| reader.position().0 >= to) {
            break;
        }
        // Matched in place (see `Walk::body`).
        let next = reader.next_fragment();
        let Ok(Some(ref f)) = next else {
            return Some(done);
        };
        let unf = match f {
            Fragment::Row(r) => Some((r.position.0, r.prev_unfiltered_size, &r.clustering)),
            Fragment::Marker(m) => Some((m.position.0, m.prev_unfiltered_size, &m.bound)),
            _ => None,
        };
        if let Some((pos, prev, c)) = unf {
            if done.first.is_none() {
                done.first = Some((pos, prev, OwnedPrefix::of(c)));
            }
            if let Some(p) = pi.as_mut() {
                let rel = pos.saturating_sub(plan.start);
                let (last, open) = (checker.last_clustering(), checker.open_marker());
                p.unfiltered(rel, c, last, open, &mut problems);
            }
            done.last = Some((pos, OwnedPrefix::default()));
        }
        match *f {
            Fragment::PartitionStart { .. } => return Some(done),
            Fragment::PartitionEnd { position } => {
                if part.to.is_some() {
                    // The partition ends before the part does.
                    return Some(done);
                }
                if let Some(p) = pi.as_mut() {
                    let rel = position.0.saturating_sub(plan.start);
                    let (last, open) = (checker.last_clustering(), checker.open_marker());
                    p.end(rel, last, open, &mut problems);
                }
                checker.partition_end(position.0, &mut problems);
                ended = true;
                break;
            }
            _ => {
                checker.fragment(f, &mut problems);
                if let Ok(Some(f)) = next {
                    let spare = f.into_spare();
                    reader.recycle(spare);
                }
            }
        }
    }
    done.end = reader.position().0;
    let (findings, dropped) = reader.take_findings();
    let reached = match part.to {
        Some(to) => done.end == to,
        None => ended,
    };
    if let (Some(to), Some(p), true) = (part.to, pi.as_mut(), reached) {
        let rel = to.saturating_sub(plan.start);
        p.part_end(
            rel,
            checker.last_clustering(),
            checker.open_marker(),
            &mut problems,
        );
    }
    if let (Some(l), Some(c)) = (done.last.as_mut(), checker.last_clustering()) {
        l.1.clone_from(c);
    }
    done.open = checker.open_marker();
    done.counts = checker.counts();
    done.clean = reached
        && problems.is_empty()
        && findings.is_empty()
        && dropped == 0
        && done.first.is_some();
    Some(done)
}

/// The parts of one partition joined in order: whether all are clean and
/// agree at their boundaries, and what they counted.
#[derive(Debug, Default)]
pub(super) struct PartsJoin {
    /// Every part so far is clean and follows the one before it.
    pub(super) clean: bool,
    pub(super) counts: BodyCounts,
    /// The last unfiltered so far: its start and clustering.
    pub(super) last: Option<(u64, OwnedPrefix)>,
    /// The range tombstone open after it.
    open: Option<DeletionTime>,
    /// Where the last part joined stopped (the partition's end, once all are).
    pub(super) end: u64,
    /// Parts joined.
    pub(super) parts: u64,
}

impl PartsJoin {
    pub(super) fn new() -> PartsJoin {
        PartsJoin {
            clean: true,
            ..PartsJoin::default()
        }
    }

    /// Join part `k` of `plan` (what its walk found, `None` when it could
    /// not walk). `prev_sizes`: the reader checks `prev_unfiltered_size`.
    pub(super) fn add(
        &mut self,
        plan: &Plan,
        k: usize,
        done: Option<PartDone>,
        cmp: &ClusteringComparator,
        prev_sizes: bool,
    ) {
        let Some(d) = done.filter(|d| d.clean && self.clean) else {
            self.clean = false;
            return;
        };
        let Some(part) = plan.parts.get(k) else {
            self.clean = false;
            return;
        };
        if k > 0 {
            let follows = match (&d.first, &self.last) {
                (Some((pos, stored, c)), Some((last_start, last))) => {
                    self.end == part.from
                        && *pos == part.from
                        && self.open == part.open
                        && cmp.compare_any(last, c) == Ordering::Less
                        && (!prev_sizes || pos.checked_sub(*last_start) == Some(*stored))
                }
                _ => false,
            };
            if !follows {
                self.clean = false;
                return;
            }
        }
        self.counts.add(&d.counts);
        self.last = d.last;
        self.open = d.open;
        self.end = d.end;
        self.parts += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(target: u64, blocks: &[(u64, Option<i64>)], end: u64) -> Option<Vec<Part>> {
        let del = |t: i64| DeletionTime {
            marked_for_delete_at: t,
            local_deletion_time: 1,
        };
        cut(
            100,
            end,
            target,
            blocks.iter().map(|&(o, m)| Ok((o, m.map(del), 0))),
        )
    }

    #[test]
    fn parts_start_at_blocks_with_the_marker_open_there() {
        let got = parts(
            10,
            &[
                (5, None),
                (9, Some(7)),
                (16, None),
                (30, Some(8)),
                (33, None),
            ],
            200,
        )
        .unwrap();
        let starts: Vec<_> = got
            .iter()
            .map(|p| (p.from, p.to, p.blocks.clone()))
            .collect();
        assert_eq!(
            starts,
            vec![
                (100, Some(116), 0..2),
                (116, Some(130), 2..3),
                (130, None, 3..5)
            ]
        );
        assert_eq!(got[0].open, None);
        assert_eq!(got[1].open.map(|d| d.marked_for_delete_at), Some(7));
        assert_eq!(got[2].open, None);
        // Out of order, past the unit, or one part: not cut.
        assert!(parts(10, &[(5, None), (40, None), (30, None)], 200).is_none());
        assert!(parts(10, &[(5, None), (40, None)], 120).is_none());
        assert!(parts(100, &[(5, None), (40, None)], 200).is_none());
    }
}
