//! The promoted index of one partition against its data: header length,
//! partition deletion, and for each IndexInfo block its offset (at an
//! unfiltered boundary), first and last clustering, width and open marker.

use crate::compare::{OwnedPrefix, PrefixLike};
use crate::component::Component;
use crate::deletion::DeletionTime;
use crate::index::{IndexEntry, IndexInfo, IndexName};

use super::problem::{Problem, ProblemClass, Problems};

#[derive(Debug)]
struct Block {
    offset: u64,
    width: u64,
    first: Option<OwnedPrefix>,
    last: Option<OwnedPrefix>,
    end_open_marker: Option<DeletionTime>,
    position: u64,
}

/// What the check of a part of a partition needs of its promoted index
/// besides the part's blocks.
#[derive(Debug, Clone)]
pub(crate) struct PiPart<'k> {
    pub(crate) key: &'k [u8],
    pub(crate) header_length: Option<u64>,
    pub(crate) deletion: DeletionTime,
    /// Where the promoted index starts in Index.db.
    pub(crate) position: u64,
}

/// Checks one partition's promoted index while its fragments stream by.
#[derive(Debug)]
pub(crate) struct PiCheck {
    blocks: Vec<Block>,
    next: usize,
    header_length: Option<u64>,
    deletion: DeletionTime,
    pi_position: u64,
    key: Vec<u8>,
    seen_unfiltered: bool,
    /// Index of `blocks[0]` in the promoted index (a part's check holds
    /// only the blocks of its part).
    base: usize,
}

impl Block {
    /// What the check keeps of a decoded IndexInfo block.
    fn of(b: &IndexInfo<'_>) -> Block {
        Block {
            offset: b.offset,
            width: b.width,
            first: name_prefix(&b.first_name),
            last: name_prefix(&b.last_name),
            end_open_marker: b.end_open_marker,
            position: b.position,
        }
    }
}

fn name_prefix(n: &IndexName<'_>) -> Option<OwnedPrefix> {
    n.as_prefix().map(OwnedPrefix::of)
}

fn show(p: &impl PrefixLike) -> String {
    let vals: Vec<String> = (0..p.size())
        .map(|i| match p.value(i) {
            None => "null".into(),
            Some(v) => v.iter().map(|b| format!("{b:02x}")).collect(),
        })
        .collect();
    format!("{}({})", p.kind().name(), vals.join(","))
}

impl PiCheck {
    /// The check for `e`'s promoted index (None when it has none). Blocks
    /// that do not decode are reported and the check is skipped.
    pub(crate) fn from_entry(
        e: &IndexEntry<'_>,
        fixed: &[Option<usize>],
        out: &mut Problems,
    ) -> Option<PiCheck> {
        let pi = e.promoted.as_ref()?;
        if pi.is_legacy() {
            return None;
        }
        let blocks = match pi.blocks(fixed) {
            Ok(b) => b,
            Err(err) => {
                let mut p = Problem::from_error(&err, Component::Index, pi.position).key(e.key);
                p.class = ProblemClass::PromotedIndexMismatch;
                out.push(p);
                return None;
            }
        };
        Some(PiCheck {
            blocks: blocks.iter().map(Block::of).collect(),
            next: 0,
            header_length: pi.header_length,
            deletion: pi.deletion,
            pi_position: pi.position,
            key: e.key.to_vec(),
            seen_unfiltered: false,
            base: 0,
        })
    }

    /// The check of some blocks of a promoted index alone (`blocks`,
    /// the first of them block `base`), for a part of the partition that
    /// starts at the first of them (`first`: the first part, which starts
    /// at the partition's start and has the header). None when a block
    /// does not decode (the part then is not taken: the calling thread
    /// walks the partition, as one thread does).
    pub(crate) fn for_part<'a>(
        whole: &PiPart<'_>,
        blocks: impl Iterator<Item = crate::Result<IndexInfo<'a>>>,
        base: usize,
        first: bool,
    ) -> Option<PiCheck> {
        let blocks = blocks
            .map(|b| b.map(|b| Block::of(&b)))
            .collect::<crate::Result<Vec<Block>>>()
            .ok()?;
        Some(PiCheck {
            blocks,
            next: 0,
            header_length: whole.header_length,
            deletion: whole.deletion,
            pi_position: whole.position,
            key: whole.key.to_vec(),
            seen_unfiltered: !first,
            base,
        })
    }

    /// Where the promoted index starts in Index.db (which entry's it is).
    pub(crate) fn position(&self) -> u64 {
        self.pi_position
    }

    fn problem(&self, at: u64, msg: String) -> Problem {
        Problem::new(
            ProblemClass::PromotedIndexMismatch,
            Component::Index,
            at,
            msg,
        )
        .key(&self.key)
    }

    /// The partition header was decoded with `deletion`.
    pub(crate) fn partition_start(&self, deletion: &DeletionTime, out: &mut Problems) {
        if *deletion != self.deletion {
            out.push(self.problem(
                self.pi_position,
                format!(
                    "promoted index partition deletion {} differs from the data's {}",
                    self.deletion, deletion
                ),
            ));
        }
    }

    fn header_end(&mut self, rel: u64, out: &mut Problems) {
        if self.seen_unfiltered {
            return;
        }
        self.seen_unfiltered = true;
        if let Some(h) = self.header_length {
            if h != rel {
                out.push(self.problem(
                    self.pi_position,
                    format!(
                        "promoted index header length {h}, but the partition header (key, \
                         deletion, static row) is {rel} bytes"
                    ),
                ));
            }
        }
    }

    /// Close block `i` (ending at relative offset `end`), given the clustering
    /// of its last unfiltered and the range tombstone open after it.
    fn close_block(
        &self,
        i: usize,
        end: &[u64],
        last: Option<&OwnedPrefix>,
        open: Option<DeletionTime>,
        out: &mut Problems,
    ) {
        let Some(b) = self.blocks.get(i) else { return };
        let i = self.base + i;
        let w = end
            .iter()
            .map(|e| e.saturating_sub(b.offset))
            .collect::<Vec<_>>();
        if !w.contains(&b.width) {
            out.push(self.problem(
                b.position,
                format!(
                    "block {i} width {} but the block spans {} bytes",
                    b.width,
                    w.first().copied().unwrap_or(0)
                ),
            ));
        }
        if let (Some(want), Some(got)) = (&b.last, last) {
            if !want.same_as(got) {
                out.push(self.problem(
                    b.position,
                    format!(
                        "block {i} last clustering {} but the block's last unfiltered is {}",
                        show(want),
                        show(got)
                    ),
                ));
            }
        }
        if b.end_open_marker != open {
            out.push(self.problem(
                b.position,
                format!(
                    "block {i} end-open marker {} but the open range tombstone at the block's \
                     end is {}",
                    marker(b.end_open_marker.as_ref()),
                    marker(open.as_ref())
                ),
            ));
        }
    }

    /// An unfiltered (row or marker, not the static row) starts at `rel`
    /// (relative to the partition start), with clustering `c`; `last` and
    /// `open` are the checker's state *before* it.
    pub(crate) fn unfiltered(
        &mut self,
        rel: u64,
        c: &impl PrefixLike,
        last: Option<&OwnedPrefix>,
        open: Option<DeletionTime>,
        out: &mut Problems,
    ) {
        self.header_end(rel, out);
        while let Some(b) = self.blocks.get(self.next) {
            if b.offset > rel {
                break;
            }
            let (i, n) = (self.next, self.base + self.next);
            if b.offset < rel {
                out.push(self.problem(
                    b.position,
                    format!(
                        "block {n} starts at partition offset {} which is not the start of an \
                         unfiltered",
                        b.offset
                    ),
                ));
            } else if let Some(want) = &b.first {
                if !want.same_as(c) {
                    out.push(self.problem(
                        b.position,
                        format!(
                            "block {n} first clustering {} but the unfiltered at its offset is {}",
                            show(want),
                            show(c)
                        ),
                    ));
                }
            }
            // A part's first block closes the block before it in the part
            // before ([`PiCheck::part_end`]).
            if i > 0 {
                self.close_block(i - 1, &[b.offset], last, open, out);
            }
            self.next += 1;
        }
    }

    /// The END_OF_PARTITION byte is at `rel`.
    pub(crate) fn end(
        &mut self,
        rel: u64,
        last: Option<&OwnedPrefix>,
        open: Option<DeletionTime>,
        out: &mut Problems,
    ) {
        self.header_end(rel, out);
        // C* counts the END_OF_PARTITION byte in the last block; Scylla
        // (CorrectLastPiBlockWidth) does not.
        self.close_last(&[rel + 1, rel], last, open, out, || {
            format!("but the partition's rows end at {rel}")
        });
    }

    /// Every block was met: the last one closes at one of `ends`. A block
    /// not met yet is reported, with `why` it should have been.
    fn close_last(
        &mut self,
        ends: &[u64],
        last: Option<&OwnedPrefix>,
        open: Option<DeletionTime>,
        out: &mut Problems,
        why: impl FnOnce() -> String,
    ) {
        if let Some(b) = self.blocks.get(self.next) {
            out.push(self.problem(
                b.position,
                format!(
                    "block {} starts at partition offset {} {}",
                    self.base + self.next,
                    b.offset,
                    why()
                ),
            ));
            return;
        }
        if let Some(i) = self.blocks.len().checked_sub(1) {
            self.close_block(i, ends, last, open, out);
        }
    }
}

impl PiCheck {
    /// A part of the partition ends where the next part's first block
    /// starts (at `rel`): every block of the part was met, and its last
    /// block closes there, as the next unfiltered closes it in one walk.
    pub(crate) fn part_end(
        &mut self,
        rel: u64,
        last: Option<&OwnedPrefix>,
        open: Option<DeletionTime>,
        out: &mut Problems,
    ) {
        self.close_last(&[rel], last, open, out, || {
            format!("inside the unfiltered before {rel}")
        });
    }
}

/// An end-open marker for messages: its deletion, or `none`.
fn marker(m: Option<&DeletionTime>) -> String {
    m.map_or_else(|| "none".to_string(), |d| d.to_string())
}
