//! [`run`]: the selected partitions of one sstable, to a sink.

use std::collections::HashSet;

use super::{Error, Feed, Note, Notes, Selection, Shape, Sink, Table};
use crate::component::Component;
use crate::data::{DataPos, Fragment, ScanReader};
use crate::read::{Absence, BigIndex, PartitionHandle, ReadOptions, ReversedReader, Slice};
use crate::validate::hex;
use crate::{ErrorKind, Sstable};

/// Read the partitions `sel` selects from `sst`, shaped by `shape`, into
/// `sink`; what is noticed on the way goes to `notes`.
///
/// A scan reads Data.db sequentially and steps over unselected partitions
/// by their size fields without decoding them; a key list is looked up in
/// the partition index and only those partitions are read (an sstable
/// without an index is scanned and filtered). With
/// [`Shape::reverse`] each partition comes through its row index in
/// reverse clustering order ([`ReversedReader`]).
pub fn run(
    sst: &Sstable,
    t: &Table<'_>,
    sel: &Selection,
    shape: &Shape,
    sink: &mut dyn Sink,
    notes: &mut Notes<'_>,
) -> Result<(), Error> {
    if shape.limit == 0 {
        return Ok(());
    }
    if shape.reverse && !shape.keys_only {
        return run_reversed(sst, t, sel, shape, sink);
    }
    let mut reader = ScanReader::new(sst, t.header)?;
    let mut emitted: u64 = 0;
    if let Some(positions) = sel.positions(sst, t, notes)? {
        // Point lookups: each key's partition, in Data.db order.
        for pos in positions {
            reader.seek_partition(pos)?;
            let found = one_partition(&mut reader, t, sel, shape, sink, &Span::WHOLE).map_err(
                |s| match s {
                    Stop::Err(e) => e,
                    // The index points past the end of Data.db: damaged input.
                    Stop::End => Error::from(
                        crate::Error::at(
                            ErrorKind::BadValue(format!(
                                "the index lists a partition at {}, but Data.db ends before it",
                                pos.0
                            )),
                            Component::Data,
                            pos.0,
                            "partition",
                        )
                        .in_file(&sst.data_path()),
                    ),
                },
            )?;
            if found.1 {
                emitted += 1;
                if emitted >= shape.limit {
                    break;
                }
            }
        }
        return Ok(());
    }
    // A token range's partitions start where the index says, not at 0.
    let from = sel.scan_start(sst, t);
    if from.0 > 0 {
        reader.seek_partition(from)?;
    }
    // Keys asked for but not met in a whole scan are noted, as the index path does.
    let mut missing: Option<HashSet<Vec<u8>>> = sel.keys().map(|ks| ks.iter().cloned().collect());
    // A wrapping range's gap is stepped over once, at its first partition.
    let mut gap_done = false;
    loop {
        notes(Note::Progress {
            done: reader.position().0,
            total: reader.data_len(),
        });
        match one_partition(&mut reader, t, sel, shape, sink, &Span::WHOLE) {
            Ok((key, written)) => {
                if let Some(m) = &mut missing {
                    m.remove(&key);
                }
                if !written && sel.past_end(t, &key) {
                    break;
                }
                if !written && !gap_done && sel.in_gap(t, &key) {
                    gap_done = true;
                    if let Some(to) = sel.after_gap(sst, t) {
                        if to > reader.next_position() {
                            reader.seek_partition(to)?;
                        }
                    }
                }
                if written {
                    emitted += 1;
                    if emitted >= shape.limit {
                        // Stopped early: the keys not yet met were not looked for.
                        missing = None;
                        break;
                    }
                }
            }
            Err(Stop::End) => break,
            Err(Stop::Err(e)) => return Err(e),
        }
    }
    if let (Some(missing), Some(keys)) = (missing, sel.keys()) {
        // In the order asked (Data.db order), skipping keys the selection excludes.
        for key in keys
            .iter()
            .filter(|k| missing.contains(*k) && sel.wants(t, k))
        {
            notes(Note::KeyAbsent {
                key,
                absence: Absence::Data,
            });
        }
    }
    Ok(())
}

/// What [`run_unit`] and [`run_rows`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ran {
    /// Partitions written (a part counts its partition only when it ends it).
    pub written: u64,
    /// Where the read stopped in Data.db: the next partition's start (the
    /// next row's, for a part). A unit cut where no partition starts (a
    /// damaged index) stops elsewhere than its end: the caller checks.
    pub end: DataPos,
}

/// [`run`] over one work unit ([`units`](super::units)): the partitions
/// that start in `[unit.start, unit.end)`, scanned forward from the first.
/// At most [`Shape::limit`] are written. Key lists (lookups) and reversed
/// reads are not cut into units: [`run`] reads them.
pub fn run_unit(
    sst: &Sstable,
    t: &Table<'_>,
    sel: &Selection,
    shape: &Shape,
    unit: &super::Unit,
    sink: &mut dyn Sink,
) -> Result<Ran, Error> {
    let mut emitted: u64 = 0;
    if shape.limit == 0 {
        return Ok(Ran {
            written: 0,
            end: unit.start,
        });
    }
    let mut reader = ScanReader::new(sst, t.header)?;
    // The unit's bytes in one planned read (object storage: one request).
    reader.plan_unit(Some(unit.end));
    reader.seek_partition(unit.start)?;
    while reader.next_position() < unit.end {
        match one_partition(&mut reader, t, sel, shape, sink, &Span::WHOLE) {
            Ok((_, written)) => {
                if written {
                    emitted += 1;
                    if emitted >= shape.limit {
                        break;
                    }
                }
            }
            Err(Stop::End) => break,
            Err(Stop::Err(e)) => return Err(e),
        }
    }
    Ok(Ran {
        written: emitted,
        end: reader.next_position(),
    })
}

/// Which part of a partition [`one_partition`] reads.
pub(super) struct Span {
    /// Where the part's first row or marker starts (`None`: the first
    /// part, read from the partition's start).
    pub from: Option<DataPos>,
    /// Where the next part starts (`None`: the last part, to the
    /// partition's end).
    pub to: Option<DataPos>,
}

impl Span {
    /// The whole partition.
    const WHOLE: Span = Span {
        from: None,
        to: None,
    };
}

/// [`run`] over one part of a large partition ([`row_parts`](super::row_parts)):
/// the sink gets the partition's start and static row (every part: its
/// state depends on them), then the rows and markers from `part.from` up to
/// `part.to`, and the partition's end only in the last part (which alone
/// counts the partition as written).
pub fn run_rows(
    sst: &Sstable,
    t: &Table<'_>,
    sel: &Selection,
    shape: &Shape,
    part: &super::RowPart,
    sink: &mut dyn Sink,
) -> Result<Ran, Error> {
    let mut reader = ScanReader::new(sst, t.header)?;
    // A later part plans its read at its first block (`one_partition`):
    // planned from the partition's start, it would fetch the partition's
    // first MiB to read its header. Its header is not read ahead of either:
    // the blocks after it are other parts'.
    if part.from.is_none() {
        reader.plan_unit(part.to);
    } else {
        reader.set_read_kind(crate::io::ReadKind::Point);
    }
    reader.seek_partition(part.partition)?;
    let span = Span {
        from: part.from,
        to: part.to,
    };
    match one_partition(&mut reader, t, sel, shape, sink, &span) {
        Ok((_, written)) => Ok(Ran {
            written: u64::from(written && part.to.is_none()),
            end: reader.next_position(),
        }),
        Err(Stop::End) => Err(Error::from(
            crate::Error::at(
                ErrorKind::BadValue("the index lists a partition past the end of Data.db".into()),
                Component::Data,
                part.partition.0,
                "partition",
            )
            .in_file(&sst.data_path()),
        )),
        Err(Stop::Err(e)) => Err(e),
    }
}

/// Why [`one_partition`] did not return a partition.
enum Stop {
    /// No partition left.
    End,
    /// An error.
    Err(Error),
}

impl From<crate::Error> for Stop {
    fn from(e: crate::Error) -> Self {
        Stop::Err(Error::from(e))
    }
}

impl From<std::io::Error> for Stop {
    fn from(e: std::io::Error) -> Self {
        Stop::Err(Error::Output(e))
    }
}

/// Read the next partition: its key, and whether it was selected and written.
fn one_partition(
    reader: &mut ScanReader<'_>,
    t: &Table<'_>,
    sel: &Selection,
    shape: &Shape,
    sink: &mut dyn Sink,
    span: &Span,
) -> Result<(Vec<u8>, bool), Stop> {
    let start = reader.next_position();
    let (key, deletion) = match reader.next_fragment()? {
        None => return Err(Stop::End),
        Some(Fragment::PartitionStart { key, deletion, .. }) => (key.to_vec(), deletion),
        Some(other) => {
            return Err(Stop::from(crate::Error::at(
                ErrorKind::BadValue("expected a partition start".into()),
                Component::Data,
                other.position().0,
                "partition",
            )))
        }
    };
    if !sel.wants(t, &key) || !sink.takes_partition(t, &key)? {
        reader.skip_partition()?;
        return Ok((key, false));
    }
    if shape.keys_only {
        reader.skip_partition()?;
        sink.key_only(t, &key)?;
        return Ok((key, true));
    }
    let mut started = false;
    let lazy = sink.takes_lazy_rows();
    let r = (|| -> Result<(), Stop> {
        if let Some(from) = span.from {
            // A later part of the partition: its header and static row
            // (for the sink's state), then a jump to the part's first block.
            match reader.next_fragment()? {
                Some(Fragment::StaticRow(r)) => {
                    let end = r.position.0 + r.size;
                    sink.partition_start(t, &key, &deletion, end)?;
                    started = true;
                    sink.static_row(t, &r, end)?;
                }
                Some(other) => {
                    let end = other.position().0;
                    sink.partition_start(t, &key, &deletion, end)?;
                    started = true;
                }
                None => {
                    return Err(Stop::from(crate::Error::new(
                        ErrorKind::UnexpectedEof { need: 1, have: 0 },
                        "end of partition",
                    )))
                }
            }
            sink.rows_resume()?;
            reader.plan_read(span.to);
            reader.seek_to(start, &key, from)?;
        }
        loop {
            if span.to.is_some_and(|to| reader.next_position() >= to) {
                // The part ends here; a later one ends the partition.
                return Ok(());
            }
            let next = if lazy {
                match reader.next_lazy()? {
                    // Clustered rows go to the sink undecoded.
                    Some(Fragment::Row(r)) => {
                        if !started {
                            sink.partition_start(t, &key, &deletion, r.position.0)?;
                            started = true;
                        }
                        sink.lazy_row(t, r).map_err(Stop::Err)?;
                        continue;
                    }
                    Some(other) => Some(other.into_decoded()?),
                    None => None,
                }
            } else {
                reader.next_fragment()?
            };
            let Some(f) = next else {
                return Err(Stop::from(crate::Error::new(
                    ErrorKind::UnexpectedEof { need: 1, have: 0 },
                    "end of partition",
                )));
            };
            let mut first_static = false;
            if !started {
                let header_end = match &f {
                    Fragment::StaticRow(r) => r.position.0 + r.size,
                    other => other.position().0,
                };
                sink.partition_start(t, &key, &deletion, header_end)?;
                started = true;
                if let Fragment::StaticRow(r) = &f {
                    sink.static_row(t, r, header_end)?;
                    first_static = true;
                }
            }
            let mut end = false;
            match &f {
                _ if first_static => {}
                Fragment::StaticRow(r) => sink.static_row(t, r, r.position.0)?,
                Fragment::Row(r) => sink.row(t, r)?,
                Fragment::Marker(m) => sink.marker(t, m)?,
                Fragment::PartitionEnd { .. } => {
                    sink.partition_end(t)?;
                    end = true;
                }
                Fragment::PartitionStart { position, .. } => {
                    return Err(Stop::from(crate::Error::at(
                        ErrorKind::BadValue("partition start inside a partition".into()),
                        Component::Data,
                        position.0,
                        "partition",
                    )))
                }
            }
            // The next rows reuse this one's allocations.
            let spare = f.into_spare();
            reader.recycle(spare);
            if end {
                return Ok(());
            }
        }
    })();
    match r {
        Ok(()) => Ok((key, sink.last_partition_written())),
        Err(e) => {
            // Close what was opened so the output stays well-formed (not
            // after an output error: the writer may be mid-token).
            if started && !matches!(e, Stop::Err(Error::Output(_))) {
                let _ = sink.abort_partition(t);
            }
            Err(match e {
                Stop::Err(e) => Stop::Err(e.in_partition(&key)),
                e => e,
            })
        }
    }
}

/// The selected partitions in Data.db order, each in reverse clustering
/// order ([`ReversedReader`]).
///
/// Partitions are walked through the index (the row index of each is what
/// bounds the memory): with a key list, one lookup per key (in Data.db
/// order); otherwise, BIG: Index.db is read sequentially
/// ([`BigIndex::scan`]) and the selection filters the entries before any
/// Data.db read; BTI: from each partition's start in Data.db, its key is
/// read and looked up in Partitions.db, which gives its row index and
/// where the next partition starts. Partitions without a row index are
/// read whole (with read-ahead, each chunk decompressed once), the others
/// block group by block group from their end.
fn run_reversed(
    sst: &Sstable,
    t: &Table<'_>,
    sel: &Selection,
    shape: &Shape,
    sink: &mut dyn Sink,
) -> Result<(), Error> {
    let mut index = crate::read::open_index(sst, t.partitioner.clone(), t.header)?;
    let mut reader = ReversedReader::new(sst, t.header)?;
    let slice = Slice::all();
    let ropts = ReadOptions::default();
    let mut emitted = 0u64;
    let mut one =
        |reader: &mut ReversedReader<'_>, h: &mut PartitionHandle| -> Result<bool, Error> {
            if !sink.takes_partition(t, &h.key)? {
                return Ok(false);
            }
            let mut feed = Feed::new(&mut *sink, t, None);
            match reader.read(h, &slice, &ropts, &mut |ev| feed.event(ev)) {
                Ok(_) => Ok(sink.last_partition_written()),
                Err(e) => {
                    feed.abort(&e);
                    Err(e.in_partition(&h.key))
                }
            }
        };
    if let Some(keys) = sel.keys() {
        // Lookups, in Data.db order (the selection sorts its keys).
        for key in keys {
            if !sel.wants(t, key) {
                continue;
            }
            let Some(mut h) = index.find(key)? else {
                continue;
            };
            if one(&mut reader, &mut h)? {
                emitted += 1;
                if emitted >= shape.limit {
                    break;
                }
            }
        }
        return Ok(());
    }
    reader.set_scan(true);
    if !sst.features().trie_index {
        // BIG: Index.db in order.
        let big = BigIndex::open(
            sst,
            t.partitioner.clone(),
            &t.header.clustering_fixed_lens(),
        )?;
        let mut scan = big.scan();
        while let Some(mut h) = scan.next_handle()? {
            if !sel.wants(t, &h.key) {
                continue;
            }
            if one(&mut reader, &mut h)? {
                emitted += 1;
                if emitted >= shape.limit {
                    break;
                }
            }
        }
        return Ok(());
    }
    // BTI: from partition to partition in Data.db, each key looked up in
    // the trie for the partition's row index and end.
    let mut pos = DataPos(0);
    while let Some(key) = reader.partition_key(pos)? {
        let Some(mut h) = index.find(&key)? else {
            return Err(Error::from(
                crate::Error::at(
                    ErrorKind::BadValue(format!(
                        "partition key 0x{} at this position is not in the index",
                        hex(&key)
                    )),
                    Component::Data,
                    pos.0,
                    "partition",
                )
                .in_file(&sst.data_path()),
            ));
        };
        if h.position != pos {
            return Err(Error::from(
                crate::Error::at(
                    ErrorKind::BadValue(format!(
                        "the index places partition 0x{} at {}",
                        hex(&key),
                        h.position
                    )),
                    Component::Data,
                    pos.0,
                    "partition",
                )
                .in_file(&sst.data_path()),
            ));
        }
        let next = h.data_end(sst)?;
        if sel.wants(t, &key) && one(&mut reader, &mut h)? {
            emitted += 1;
            if emitted >= shape.limit {
                break;
            }
        }
        match next {
            Some(n) if n > pos => pos = n,
            // The last partition (its end unknown: the end of the data).
            _ => break,
        }
    }
    Ok(())
}
