//! [`SliceSource`]: one sstable's part of a merged single-partition read,
//! positioned through its partition index the way [`crate::read::BoundedReader`]
//! reads a slice.
//!
//! ```text
//! PartitionHandle ─► header + static row (from the index, or its bytes)
//!                 ─► the promoted-index blocks that can hold the slice
//!                    (point reads of that Data.db range only)
//!                 ─► rows and markers inside the slice, clipped to it
//! ```
//!
//! The range tombstone open before the first block read (its predecessor's
//! `end_open_marker`) is re-opened at the slice start by a synthetic bound,
//! and one open past the slice end is closed there, as the bounded read does
//! (it is the same clipping, [`crate::read::Clip`]): the merger sees a
//! well-formed stream that holds exactly the slice. A partition without a
//! row index (small by construction) is read from its start to the next
//! partition's position in one request and clipped the same way.
//!
//! Memory: the current fragment and the few units it produced, never the
//! slice.

use std::collections::VecDeque;

use crate::data::{DataPos, Fragment, RangeTombstoneMarker, Row, ScanReader};
use crate::error::{Error, ErrorKind, Result};
use crate::lookup::PartitionHandle;
use crate::read::{bad, indexed_start, point_reader, seek_indexed, Clip, Ctx, ReadPlan, Slice};
use crate::sstable::Sstable;
use crate::statistics::SerializationHeader;

use super::{ColumnMap, MMarker, Unit, UnitSource};

/// Where a [`SliceSource`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// At the partition start (a partition read whole: header next).
    Header,
    /// Just past the header read by this source: the static row may come.
    Static,
    /// Reading rows and markers.
    Rows,
    /// The partition end is queued.
    Done,
}

/// One sstable's slice of one partition as a [`UnitSource`] (see the
/// module docs).
pub struct SliceSource<'a> {
    reader: ScanReader<'a>,
    clip: Clip<'a>,
    map: ColumnMap,
    index: usize,
    key: Vec<u8>,
    /// Stop at this position (the end of the last block read, unless it is
    /// the partition's last).
    stop_at: Option<DataPos>,
    /// Units produced and not handed out yet.
    out: VecDeque<Unit>,
    state: State,
}

impl std::fmt::Debug for SliceSource<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SliceSource")
            .field("index", &self.index)
            .field("state", &self.state)
            .finish()
    }
}

/// An owned unit of a lent fragment.
fn unit_of_lent(
    f: Fragment<'_, &Row<'_>, &RangeTombstoneMarker<'_>>,
    map: &ColumnMap,
    source: usize,
) -> Unit {
    match f {
        Fragment::PartitionStart {
            key,
            deletion,
            position,
            header_end,
        } => Unit::Start {
            key: key.to_vec(),
            deletion,
            position,
            header_end: header_end.unwrap_or_default(),
        },
        Fragment::StaticRow(r) => Unit::Static(Box::new(map.row(r, source))),
        Fragment::Row(r) => Unit::Row(Box::new(map.row(r, source))),
        Fragment::Marker(m) => Unit::Marker(Box::new(MMarker {
            position: m.position,
            source,
            bound: crate::read::OwnedClustering::of(&m.bound),
            deletion: m.deletion,
        })),
        Fragment::PartitionEnd { .. } => Unit::End,
    }
}

impl<'a> SliceSource<'a> {
    /// Source number `index` of a merge: `slice` of partition `h` of `sst`
    /// (decoded with `header`, columns mapped by `map`); `h` can open the
    /// next source of the same partition (a reversed read's windows). With `header_only`
    /// only the partition header and static row are read (the slice is
    /// outside what the sstable holds, but its partition deletion counts).
    /// Reads the header now (the index may give it without a read).
    #[allow(clippy::too_many_arguments)]
    pub fn open(
        sst: &'a Sstable,
        header: &'a SerializationHeader,
        h: &mut PartitionHandle,
        slice: &'a Slice,
        header_only: bool,
        map: ColumnMap,
        index: usize,
    ) -> Result<SliceSource<'a>> {
        let mut reader = point_reader(sst, header)?;
        let mut clip = Clip::new(&header.clustering_types, slice, u64::MAX, false);
        if header_only {
            clip.limited = true;
        }
        let mut out = VecDeque::new();
        let mut stop_at = None;
        let state = match h.row_index.as_mut() {
            Some(ri) if !reader.is_legacy() => {
                let ctx = Ctx::new(sst, header);
                let data = seek_indexed::<Error>(
                    &ctx,
                    &mut reader,
                    &h.key,
                    h.position,
                    h.end,
                    ri.as_mut(),
                    &mut clip,
                    !header_only,
                    &mut |f| {
                        out.push_back(unit_of_lent(f, &map, index));
                        Ok(())
                    },
                )?;
                match data {
                    Some(d) if !clip.limited => {
                        reader.plan_read(Some(d.stop));
                        reader.seek_to(h.position, &h.key, d.start)?;
                        stop_at = (!d.last).then_some(d.stop);
                        State::Rows
                    }
                    // Nothing to read past the header (an empty slice, or
                    // one that falls between two blocks).
                    _ => {
                        let at = DataPos(h.position.0 + ri.header_length());
                        finish(&mut clip, &map, index, &mut out, at)?;
                        State::Done
                    }
                }
            }
            _ => {
                // Small (no row index) or pre-3.0 (its index names cells):
                // from the partition start to its end, in requests of at
                // most 1 MiB.
                reader.plan_read(h.end);
                reader.seek_partition(h.position)?;
                State::Header
            }
        };
        Ok(SliceSource {
            reader,
            clip,
            map,
            index,
            key: h.key.clone(),
            stop_at,
            out,
            state,
        })
    }

    /// What the read chose: the row index's blocks and the range read.
    pub fn plan(&self) -> &ReadPlan {
        &self.clip.plan
    }

    /// The source's number in its merge.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The partition deletion (the header is read by [`SliceSource::open`]
    /// for an indexed partition, else here).
    pub fn peek_start(&mut self) -> Result<Option<crate::deletion::DeletionTime>> {
        if self.out.is_empty() && self.state == State::Header {
            self.step()?;
        }
        Ok(match self.out.front() {
            Some(Unit::Start { deletion, .. }) => Some(*deletion),
            _ => None,
        })
    }

    /// Read one fragment (and queue what it gives).
    fn step(&mut self) -> Result<()> {
        let SliceSource {
            reader,
            clip,
            map,
            index,
            key,
            stop_at,
            out,
            state,
        } = self;
        if stop_at.is_some_and(|e| reader.position() >= e) {
            let at = reader.position();
            *state = State::Done;
            return finish(clip, map, *index, out, at);
        }
        let at = reader.position();
        let mut push = |f: Fragment<'_, &Row<'_>, &RangeTombstoneMarker<'_>>| -> Result<()> {
            out.push_back(unit_of_lent(f, map, *index));
            Ok(())
        };
        let (go, stopped) = match reader.next_fragment()? {
            Some(f @ Fragment::PartitionStart { .. }) if *state == State::Header => {
                let deletion = indexed_start(Some(&f), key, at, "partition")?;
                let header_end = reader.position();
                out.push_back(Unit::Start {
                    key: key.clone(),
                    deletion,
                    position: at,
                    header_end,
                });
                *state = State::Static;
                return Ok(());
            }
            Some(Fragment::StaticRow(r)) if *state == State::Static => {
                push(Fragment::StaticRow(&r))?;
                *state = State::Rows;
                let spare = Fragment::StaticRow(r).into_spare();
                reader.recycle(spare);
                return Ok(());
            }
            Some(Fragment::Row(r)) => {
                let go = clip.row(&r, &mut push)?;
                let p = r.position;
                let spare = Fragment::Row(r).into_spare();
                reader.recycle(spare);
                (go, p)
            }
            Some(Fragment::Marker(m)) => {
                let go = clip.marker(&m, &mut push)?;
                let p = m.position;
                let spare = Fragment::Marker(m).into_spare();
                reader.recycle(spare);
                (go, p)
            }
            Some(Fragment::PartitionEnd { position }) => (false, position),
            Some(other) => {
                return Err(bad(
                    "unfiltered",
                    "partition start or static row inside a partition".into(),
                    other.position(),
                ))
            }
            None => {
                return Err(Error::at(
                    ErrorKind::UnexpectedEof { need: 1, have: 0 },
                    crate::component::Component::Data,
                    at.0,
                    "end of partition",
                ))
            }
        };
        *state = State::Rows;
        if !go {
            *state = State::Done;
            finish(clip, map, *index, out, stopped)?;
        }
        Ok(())
    }
}

/// The end of the slice at `at`: what is still open is closed at the slice
/// end, then the partition ends.
fn finish(
    clip: &mut Clip<'_>,
    map: &ColumnMap,
    index: usize,
    out: &mut VecDeque<Unit>,
    at: DataPos,
) -> Result<()> {
    clip.finish::<Error>(at, &mut |f| {
        out.push_back(unit_of_lent(f, map, index));
        Ok(())
    })?;
    out.push_back(Unit::End);
    Ok(())
}

impl UnitSource for SliceSource<'_> {
    fn progress(&self) -> (u64, u64) {
        (self.reader.position().0, self.reader.data_len())
    }

    fn next_unit(&mut self) -> Result<Option<Unit>> {
        loop {
            if let Some(u) = self.out.pop_front() {
                return Ok(Some(u));
            }
            if self.state == State::Done {
                return Ok(None);
            }
            self.step()?;
        }
    }
}
