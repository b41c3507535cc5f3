//! [`UnitSource`]: one sstable's partitions as [`Unit`]s, its columns
//! mapped onto the merged schema ([`ScanSource`] over a [`ScanReader`],
//! [`VecSource`] for tests).

use crate::compare::OwnedPrefix;
use crate::data::{DataPos, Fragment, LazyRow, Next, RowHead, ScanReader, Spare};
use crate::error::{Error, ErrorKind, Result};
use crate::read::OwnedClustering;

use super::{ColumnMap, HeldRow, MMarker, MRow, Merger, Unit};

/// A stream of [`Unit`]s: one sstable's partitions, in Data.db order.
pub trait UnitSource {
    /// The next unit; `None` at the end.
    fn next_unit(&mut self) -> Result<Option<Unit>>;

    /// [`UnitSource::next_unit`], but a clustered row of a source that holds
    /// rows is returned with its head decoded, so that a row no other source
    /// has is decoded once; anything else goes to `unit` (and `None` is
    /// returned). A returned row not output at once is the held row of
    /// [`UnitSource::materialize`] and [`UnitSource::held_row`].
    fn next_row(&mut self, unit: &mut Option<Unit>) -> Result<Option<LazyRow<'_>>> {
        *unit = self.next_unit()?;
        Ok(None)
    }

    /// The owned row of the [`Unit::Held`] this source handed out last.
    fn materialize(&mut self, _held: HeldRow) -> Result<MRow> {
        Err(Error::new(
            ErrorKind::BadValue("a held row from a source that holds none".into()),
            "merge",
        ))
    }

    /// The [`Unit::Held`] this source handed out last, as stored (its
    /// columns decoded as they are consumed).
    fn held_row(&self) -> Result<LazyRow<'_>> {
        Err(Error::new(
            ErrorKind::BadValue("a held row from a source that holds none".into()),
            "merge",
        ))
    }

    /// Take back a [`Unit::Held`] that is done with (its buffers are reused).
    fn recycle(&mut self, _held: HeldRow) {}

    /// Take back the allocations of a row decoded from [`UnitSource::held_row`].
    fn recycle_spare(&mut self, _spare: Spare) {}

    /// The row [`UnitSource::next_row`] gave is held: keep its parsed head
    /// ([`LazyRow::head`]) for [`UnitSource::held_row`].
    fn keep_head(&mut self, _head: Option<RowHead>) {}

    /// Uncompressed Data.db bytes read so far and in all, for a progress bar
    /// (`(0, 0)` for sources that are not a Data.db scan).
    fn progress(&self) -> (u64, u64) {
        (0, 0)
    }
}

/// Units given in advance (tests, and slices read by other readers).
#[derive(Debug, Default)]
pub struct VecSource {
    units: std::collections::VecDeque<Unit>,
}

impl VecSource {
    /// A source handing out `units` in order.
    pub fn new(units: Vec<Unit>) -> VecSource {
        VecSource {
            units: units.into(),
        }
    }
}

impl UnitSource for VecSource {
    fn next_unit(&mut self) -> Result<Option<Unit>> {
        Ok(self.units.pop_front())
    }
}

// ------------------------------------------------------------------ schema

/// An owned copy of a decoded fragment.
pub fn unit_of(f: &Fragment<'_>, map: &ColumnMap, source: usize) -> Unit {
    match f {
        Fragment::PartitionStart {
            key,
            deletion,
            position,
            ..
        } => Unit::Start {
            key: key.to_vec(),
            deletion: *deletion,
            position: *position,
            header_end: DataPos(0),
        },
        Fragment::StaticRow(r) => Unit::Static(Box::new(map.row(r, source))),
        Fragment::Row(r) => Unit::Row(Box::new(map.row(r, source))),
        Fragment::Marker(m) => Unit::Marker(Box::new(MMarker {
            position: m.position,
            source,
            bound: OwnedClustering::of(&m.bound),
            deletion: m.deletion,
        })),
        Fragment::PartitionEnd { .. } => Unit::End,
    }
}

/// A [`ScanReader`] as a [`UnitSource`].
pub struct ScanSource<'s> {
    reader: ScanReader<'s>,
    map: ColumnMap,
    index: usize,
    /// Clustered rows are handed out as [`Unit::Held`] (the columns map
    /// one to one and the reader can decode its last row again).
    hold: bool,
    /// Buffers of held rows given back, for the next ones.
    spare_prefixes: Vec<OwnedPrefix>,
    /// Allocations of the last fragment [`UnitSource::next_row`] turned
    /// into a unit, recycled by the next call (the reader is still lent then).
    pending_spare: Option<Spare>,
    done: bool,
}

impl std::fmt::Debug for ScanSource<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScanSource")
            .field("index", &self.index)
            .finish()
    }
}

impl<'s> ScanSource<'s> {
    /// Source number `index` of a merge, reading `reader` with columns mapped
    /// by `map`.
    pub fn new(reader: ScanReader<'s>, map: ColumnMap, index: usize) -> ScanSource<'s> {
        let hold = map.identity && !reader.is_legacy();
        ScanSource {
            reader,
            map,
            index,
            hold,
            spare_prefixes: Vec::new(),
            pending_spare: None,
            done: false,
        }
    }

    /// The source's number in its merge.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The reader.
    pub fn reader(&self) -> &ScanReader<'s> {
        &self.reader
    }

    /// The next fragment as a unit: a clustered row held in the reader when
    /// `hold`, else owned.
    fn read_unit(&mut self) -> Result<Option<Unit>> {
        if !self.hold {
            let Some(f) = self.reader.next_fragment()? else {
                return Ok(None);
            };
            let u = unit_of(&f, &self.map, self.index);
            let spare = f.into_spare();
            self.reader.recycle(spare);
            return Ok(Some(u));
        }
        let mut key = self.spare_prefixes.pop().unwrap_or_default();
        let mut spare = Spare::default();
        let u = match self.reader.next_or_hold(&mut key)? {
            None => return Ok(None),
            Some(Next::Held { marked }) => {
                return Ok(Some(Unit::Held(HeldRow {
                    clustering: key,
                    marked,
                })))
            }
            Some(Next::Fragment(f)) => {
                let f = f.into_decoded()?;
                let u = unit_of(&f, &self.map, self.index);
                spare.keep(f);
                u
            }
        };
        self.recycle(HeldRow {
            clustering: key,
            marked: false,
        });
        self.reader.recycle(spare);
        Ok(Some(u))
    }
}

impl UnitSource for ScanSource<'_> {
    fn progress(&self) -> (u64, u64) {
        (self.reader.position().0, self.reader.data_len())
    }

    fn materialize(&mut self, held: HeldRow) -> Result<MRow> {
        let row = self
            .reader
            .last_row()?
            .ok_or_else(|| Merger::unexpected("the held row is no longer in its reader"))?
            .into_decoded()?;
        let m = self
            .map
            .row_with(&row, self.index, OwnedClustering::of(&row.clustering));
        let spare = Fragment::Row(row).into_spare();
        self.reader.recycle(spare);
        self.recycle(held);
        Ok(m)
    }

    fn held_row(&self) -> Result<LazyRow<'_>> {
        self.reader.held_row()
    }

    fn recycle_spare(&mut self, spare: Spare) {
        self.reader.recycle(spare);
    }

    fn keep_head(&mut self, head: Option<RowHead>) {
        self.reader.keep_head(head);
    }

    fn recycle(&mut self, held: HeldRow) {
        // One per source is in flight at a time; a few cover the merger's.
        if self.spare_prefixes.len() < 4 {
            self.spare_prefixes.push(held.clustering);
        }
    }

    fn next_row(&mut self, unit: &mut Option<Unit>) -> Result<Option<LazyRow<'_>>> {
        if !self.hold {
            *unit = self.next_unit()?;
            return Ok(None);
        }
        *unit = None;
        if self.done {
            return Ok(None);
        }
        if let Some(s) = self.pending_spare.take() {
            self.reader.recycle(s);
        }
        let (map, index) = (&self.map, self.index);
        let (done, pending_spare) = (&mut self.done, &mut self.pending_spare);
        self.reader.next_row_or(|f| {
            let Some(f) = f else {
                *done = true;
                return Ok(());
            };
            let f = f.into_decoded()?;
            *unit = Some(unit_of(&f, map, index));
            let mut spare = Spare::default();
            spare.keep(f);
            *pending_spare = Some(spare);
            Ok(())
        })
    }

    fn next_unit(&mut self) -> Result<Option<Unit>> {
        if self.done {
            return Ok(None);
        }
        if let Some(s) = self.pending_spare.take() {
            self.reader.recycle(s);
        }
        let Some(mut u) = self.read_unit()? else {
            self.done = true;
            return Ok(None);
        };
        if let Unit::Start { header_end, .. } = &mut u {
            *header_end = self.reader.position();
        }
        Ok(Some(u))
    }
}

// ------------------------------------------------------------------ merger
