//! [`Feed`]: the fragments a bounded or reversed read lends, to a sink.

use std::collections::HashSet;

use super::{Error, Sink, Table};
use crate::data::{ColumnData, Fragment, RangeTombstoneMarker, Row};

/// Feeds the fragments of a bounded or reversed read
/// ([`crate::read::Visitor`]) to a sink, keeping only the `columns` cells;
/// remembers whether a partition is open so that an error can close it.
pub struct Feed<'a, 't> {
    sink: &'a mut dyn Sink,
    table: &'a Table<'t>,
    cols: Option<&'a HashSet<String>>,
    header_end: u64,
    started: bool,
}

impl<'a, 't> Feed<'a, 't> {
    /// A feed into `sink`; `cols` keeps only these regular and static
    /// columns (row liveness and deletions are kept).
    pub fn new(
        sink: &'a mut dyn Sink,
        table: &'a Table<'t>,
        cols: Option<&'a HashSet<String>>,
    ) -> Self {
        Feed {
            sink,
            table,
            cols,
            header_end: 0,
            started: false,
        }
    }

    /// One fragment.
    pub fn event(
        &mut self,
        ev: Fragment<'_, &Row<'_>, &RangeTombstoneMarker<'_>>,
    ) -> Result<(), Error> {
        let t = self.table;
        match ev {
            Fragment::PartitionStart {
                key,
                deletion,
                position,
                header_end,
            } => {
                // Bounded and reversed reads always know where the header ends.
                let header_end = header_end.unwrap_or(position);
                self.header_end = header_end.0;
                self.started = true;
                self.sink.partition_start(t, key, &deletion, header_end.0)?
            }
            Fragment::StaticRow(r) => match self.cols {
                Some(c) => {
                    self.sink
                        .static_row(t, &filter_columns(r.clone(), c), self.header_end)?
                }
                None => self.sink.static_row(t, r, self.header_end)?,
            },
            Fragment::Row(r) => match self.cols {
                Some(c) => self.sink.row(t, &filter_columns(r.clone(), c))?,
                None => self.sink.row(t, r)?,
            },
            Fragment::Marker(m) => self.sink.marker(t, m)?,
            Fragment::PartitionEnd { .. } => {
                self.started = false;
                self.sink.partition_end(t)?
            }
        }
        Ok(())
    }

    /// After a failed read: close the open partition so the output stays
    /// well-formed (not after an output error: the writer may be mid-token).
    pub fn abort(&mut self, e: &Error) {
        if self.started && !matches!(e, Error::Output(_)) {
            let _ = self.sink.abort_partition(self.table);
        }
    }
}

/// Keep only the `cols` cells of a row (its liveness and deletion stay).
pub fn filter_columns<'a>(r: Row<'a>, cols: &HashSet<String>) -> Row<'a> {
    let cells: Vec<ColumnData<'a>> = r
        .cells
        .into_iter()
        .filter(|c| cols.contains(c.column().name()))
        .collect();
    Row { cells, ..r }
}
