//! [`Lookup`]: partitions read by key the way the database reads them:
//! the partition index (Filter.db first), then only the row-index blocks
//! and the Data.db range the clustering slices need, forward or reversed
//! ([`crate::read`]), into a [`Sink`].

use std::collections::HashSet;

use super::{Error, Feed, Sink, Table};
use crate::read::{
    open_index, read_slices, Absence, BoundedReader, PartitionIndex, ReadOptions, ReadPlan,
    ReversedReader, Slice,
};
use crate::Sstable;

/// What a [`Lookup::read`] found.
#[derive(Debug)]
pub enum Found {
    /// The sstable does not hold the key, and which component said so
    /// (when the index knows).
    Absent(Option<Absence>),
    /// The partition was read: the blocks and Data.db range of the read.
    Read(ReadPlan),
}

/// One sstable's partition index and a bounded reader, kept across keys
/// (the index pages and blocks they cache serve the next lookups).
pub struct Lookup<'s> {
    index: Box<dyn PartitionIndex + 's>,
    reader: Reader<'s>,
}

enum Reader<'s> {
    Forward(Box<BoundedReader<'s>>),
    Reversed(Box<ReversedReader<'s>>),
}

impl<'s> Lookup<'s> {
    /// Open the partition index of `sst` (BIG: Filter, Summary and
    /// Index.db; BTI: Filter, Partitions and Rows.db) and a reader, in
    /// reverse clustering order when `reverse`.
    pub fn open(sst: &'s Sstable, t: &Table<'_>, reverse: bool) -> crate::Result<Lookup<'s>> {
        let index = open_index(sst, t.partitioner.clone(), t.header)?;
        let reader = if reverse {
            Reader::Reversed(Box::new(ReversedReader::new(sst, t.header)?))
        } else {
            Reader::Forward(Box::new(BoundedReader::new(sst, t.header)?))
        };
        Ok(Lookup { index, reader })
    }

    /// Read `slices` (sorted, disjoint: one, or
    /// [`value_slices`](crate::read::value_slices)) of the partition of
    /// `key` into `sink` as one partition, keeping only the `cols` regular
    /// and static columns; `opts.limit` counts the rows of all slices. A
    /// failed read closes the partition in the sink, and its error names
    /// the partition (an error of the index does not: no partition was
    /// found).
    pub fn read(
        &mut self,
        t: &Table<'_>,
        key: &[u8],
        slices: &[Slice],
        opts: &ReadOptions,
        cols: Option<&HashSet<String>>,
        sink: &mut dyn Sink,
    ) -> Result<Found, Error> {
        let Some(mut h) = self.index.find(key)? else {
            return Ok(Found::Absent(self.index.last_absence()));
        };
        let reverse = matches!(self.reader, Reader::Reversed(_));
        let reader = &mut self.reader;
        let mut feed = Feed::new(sink, t, cols);
        let r = read_slices(
            slices,
            reverse,
            opts.limit,
            &mut |ev| feed.event(ev),
            &mut |s, limit, f| {
                let opts = ReadOptions { limit, ..*opts };
                match reader {
                    Reader::Forward(r) => r.read(&mut h, s, &opts, f),
                    Reader::Reversed(r) => r.read(&mut h, s, &opts, f),
                }
            },
        );
        match r {
            Ok(plan) => Ok(Found::Read(plan)),
            Err(e) => {
                feed.abort(&e);
                Err(e.in_partition(key))
            }
        }
    }
}
