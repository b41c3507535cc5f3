//! `sstkit timestamps SSTABLE...`: a write-time histogram (Scylla's
//! `writetime-histogram.lua`).
//!
//! ```text
//! sstkit timestamps /var/lib/cassandra/data/ks/t-1234/           # by day, bars at a terminal
//! sstkit timestamps --bucket month -o csv -r /var/lib/cassandra/data
//! ```
//!
//! Reads Data.db sequentially (decoded). Counted: every cell's write
//! timestamp (static and clustered rows, complex elements each) as `cells`,
//! unless it is a tombstone cell; every deletion's timestamp as
//! `tombstones`: partition, row, complex, tombstone cells, and each range
//! tombstone once (the marker opening it). Timestamps are taken as
//! microseconds since the epoch and bucketed in UTC. One histogram per table
//! (the `keyspace/table-id/` folders, else the directory): tables are never
//! mixed. Memory grows with the number of distinct buckets only.
//!
//! Output: json `{"bucket", "tables": [{"table", "sstables", "buckets":
//! [{"bucket", "start", "cells", "tombstones"}]}]}` (`start` in seconds);
//! ndjson one bucket per line with `"table"`; csv
//! `table,bucket,start,cells,tombstones`; text a bar per bucket.
//!
//! Exit status: 0 ok; 2 usage; 3 an sstable could not be read (the others
//! still are).

use std::collections::BTreeMap;
use std::io::Write;

use serde_json::json;
use sstkit_format::data::{ColumnData, DataPos, RangeTombstoneMarker, Row};
use sstkit_format::deletion::DeletionTime;
use sstkit_format::engine::{self, Selection, Shape, Sink, Table};
use sstkit_format::value::literal::days_from_civil;

use crate::render::civil_from_days;
use sstkit_format::Sstable;

use crate::cli::{TimeBucket, TimestampsArgs, TimestampsOutput};
use crate::plan::inputs::Inputs;
use crate::plan::select;
use crate::progress::Progress;
use crate::sink::pieces::Task;
use crate::term::{self, Stream};
use crate::{CmdError, CmdResult, Outcome};

/// Counts per bucket start (seconds).
#[derive(Default)]
struct Histogram {
    buckets: BTreeMap<i64, (u64, u64)>,
}

impl Histogram {
    fn add(&mut self, bucket: TimeBucket, ts_us: i64, tombstone: bool) {
        let e = self.buckets.entry(bucket_start(bucket, ts_us)).or_default();
        if tombstone {
            e.1 += 1;
        } else {
            e.0 += 1;
        }
    }

    /// Add another histogram's counts.
    fn merge(&mut self, o: Histogram) {
        for (k, (c, x)) in o.buckets {
            let e = self.buckets.entry(k).or_default();
            e.0 += c;
            e.1 += x;
        }
    }

    fn row(&mut self, b: TimeBucket, r: &Row<'_>) {
        if let Some(d) = &r.deletion {
            self.add(b, d.time.marked_for_delete_at, true);
        }
        for cd in &r.cells {
            match cd {
                ColumnData::Simple { cell, .. } => {
                    self.add(b, cell.timestamp, cell.is_deleted() && !cell.is_expiring())
                }
                ColumnData::Complex {
                    complex_deletion,
                    cells,
                    ..
                } => {
                    if let Some(d) = complex_deletion {
                        self.add(b, d.marked_for_delete_at, true);
                    }
                    for c in cells {
                        self.add(b, c.timestamp, c.is_deleted() && !c.is_expiring());
                    }
                }
            }
        }
    }
}

/// The start (seconds, UTC) of the bucket holding `ts_us`.
fn bucket_start(b: TimeBucket, ts_us: i64) -> i64 {
    let s = ts_us.div_euclid(1_000_000);
    match b {
        TimeBucket::Hour => s - s.rem_euclid(3600),
        TimeBucket::Day => s - s.rem_euclid(86_400),
        TimeBucket::Month => {
            let (y, m, _) = civil_from_days(s.div_euclid(86_400));
            days_from_civil(y, m, 1) * 86_400
        }
    }
}

/// A bucket's name: `2023-11`, `2023-11-14`, `2023-11-14T22`.
fn bucket_name(b: TimeBucket, start: i64) -> String {
    let (y, m, d) = civil_from_days(start.div_euclid(86_400));
    match b {
        TimeBucket::Month => format!("{y:04}-{m:02}"),
        TimeBucket::Day => format!("{y:04}-{m:02}-{d:02}"),
        TimeBucket::Hour => format!(
            "{y:04}-{m:02}-{d:02}T{:02}",
            start.rem_euclid(86_400) / 3600
        ),
    }
}

/// Count the timestamps of one sstable, on `threads` threads when its
/// Data.db can be cut into units (the counts do not depend on the order).
fn scan(sst: &Sstable, b: TimeBucket, threads: usize, h: &mut Histogram) -> CmdResult<()> {
    let bound = engine::bind(sst)?;
    let t = Table::new(&bound.header, bound.partitioner.clone(), 0);
    let (sel, shape) = (Selection::all(), Shape::default());
    let mut bar = Progress::new("timestamps");
    let tasks = match threads {
        0 | 1 => None,
        _ => crate::sink::pieces::tasks(sst, &t, true),
    };
    // One pass on this thread.
    let one = |h: &mut Histogram, bar: &mut Progress| -> CmdResult<()> {
        let mut sink = Counts::new(b, h, false);
        let r = engine::run(sst, &t, &sel, &shape, &mut sink, &mut |n| bar.note(n));
        r.map_err(|e| select::located(&t, e))
    };
    let Some(tasks) = tasks else {
        return one(h, &mut bar);
    };
    let total = tasks.last().map_or(0, Task::end);
    let reopen = sst.reopener();
    type Opened = Result<(Sstable, engine::Bound), Option<CmdError>>;
    let init = || -> Opened {
        let s = reopen.open().map_err(|e| Some(e.into()))?;
        let bound = engine::bind(&s).map_err(|e| Some(e.into()))?;
        Ok((s, bound))
    };
    let data_path = sst.data_path();
    let work = |s: &mut Opened, i: usize| -> CmdResult<(Histogram, DataPos)> {
        let (sst, bound) = s
            .as_mut()
            .map_err(|e| crate::sink::pieces::not_reopened(e, &data_path))?;
        let t = Table::new(&bound.header, bound.partitioner.clone(), 0);
        let mut h = Histogram::default();
        let mid = matches!(&tasks[i], Task::Part(_, p) if p.from.is_some());
        let mut sink = Counts::new(b, &mut h, mid);
        let r = match &tasks[i] {
            Task::Part(_, p) => engine::run_rows(sst, &t, &sel, &shape, p, &mut sink),
            Task::Unit(u) | Task::Here(u) => engine::run_unit(sst, &t, &sel, &shape, u, &mut sink),
        };
        let ran = r.map_err(|e| select::located(&t, e))?;
        Ok((h, ran.end))
    };
    let mut result = Ok(());
    let mut recount = false;
    let mut take = |i: usize, r: CmdResult<(Histogram, DataPos)>| -> bool {
        bar.set(tasks[i].end(), total);
        match r {
            // A task that stopped elsewhere than where the next one starts:
            // the index is wrong there (damaged).
            Ok((_, end)) if end.0 != tasks[i].end() => {
                recount = true;
                false
            }
            Ok((part, _)) => {
                h.merge(part);
                true
            }
            Err(e) => {
                result = Err(e);
                false
            }
        }
    };
    engine::parallel::ordered(tasks.len(), threads, &init, &work, &|_| {}, &mut take);
    if recount {
        // Counted again on one thread, which reads Data.db, not the index.
        *h = Histogram::default();
        return one(h, &mut bar);
    }
    result
}

/// The engine's sink of [`scan`]: every timestamp into a histogram.
struct Counts<'h> {
    bucket: TimeBucket,
    h: &'h mut Histogram,
    /// A later part of a partition: its start and static row were counted
    /// by the first part, until its first row or marker.
    mid: bool,
}

impl<'h> Counts<'h> {
    fn new(bucket: TimeBucket, h: &'h mut Histogram, mid: bool) -> Self {
        Counts { bucket, h, mid }
    }
}

impl Sink for Counts<'_> {
    fn partition_start(
        &mut self,
        _t: &Table<'_>,
        _key: &[u8],
        deletion: &DeletionTime,
        _header_end: u64,
    ) -> std::io::Result<()> {
        if !self.mid && !deletion.is_live() {
            self.h.add(self.bucket, deletion.marked_for_delete_at, true);
        }
        Ok(())
    }
    fn static_row(&mut self, _t: &Table<'_>, row: &Row<'_>, _position: u64) -> std::io::Result<()> {
        if !self.mid {
            self.h.row(self.bucket, row);
        }
        Ok(())
    }
    fn row(&mut self, _t: &Table<'_>, row: &Row<'_>) -> std::io::Result<()> {
        self.mid = false;
        self.h.row(self.bucket, row);
        Ok(())
    }
    fn marker(&mut self, _t: &Table<'_>, m: &RangeTombstoneMarker<'_>) -> std::io::Result<()> {
        self.mid = false;
        if let Some(d) = m.open_deletion() {
            self.h.add(self.bucket, d.marked_for_delete_at, true);
        }
        Ok(())
    }
}

/// Run the command.
pub fn run(a: &TimestampsArgs, out: &mut dyn Write) -> CmdResult<Outcome> {
    let inputs = Inputs::resolve(&a.input)?;
    let fmt =
        crate::cli::text_at_terminal(a.output, TimestampsOutput::Text, TimestampsOutput::Json);
    let mut tables: Vec<(String, u64, Histogram)> = Vec::new();
    let outcome = inputs.each(|_, sst, _| {
        let table = crate::table_key(&sst.desc);
        // An sstable that fails half-way counts nothing: its counts are kept apart until it ends.
        let mut h = Histogram::default();
        scan(sst, a.bucket, crate::plan::threads(a.threads), &mut h)?;
        let slot = match tables.iter().position(|t| t.0 == table) {
            Some(i) => i,
            None => {
                tables.push((table, 0, Histogram::default()));
                tables.len() - 1
            }
        };
        let t = &mut tables[slot];
        t.1 += 1;
        t.2.merge(h);
        Ok(())
    })?;
    write(out, fmt, a.bucket, &tables)?;
    Ok(outcome)
}

fn write(
    out: &mut dyn Write,
    fmt: TimestampsOutput,
    b: TimeBucket,
    tables: &[(String, u64, Histogram)],
) -> std::io::Result<()> {
    let bucket_kind = format!("{b:?}").to_lowercase();
    match fmt {
        TimestampsOutput::Json => {
            let ts: Vec<_> = tables
                .iter()
                .map(|(name, n, h)| {
                    let buckets: Vec<_> = h
                        .buckets
                        .iter()
                        .map(|(s, (c, t))| {
                            json!({"bucket": bucket_name(b, *s), "start": s, "cells": c, "tombstones": t})
                        })
                        .collect();
                    json!({"table": name, "sstables": n, "buckets": buckets})
                })
                .collect();
            serde_json::to_writer(&mut *out, &json!({"bucket": bucket_kind, "tables": ts}))?;
            out.write_all(b"\n")?;
        }
        TimestampsOutput::Ndjson => {
            for (name, _, h) in tables {
                for (s, (c, t)) in &h.buckets {
                    let v = json!({"table": name, "bucket": bucket_name(b, *s), "start": s, "cells": c, "tombstones": t});
                    serde_json::to_writer(&mut *out, &v)?;
                    out.write_all(b"\n")?;
                }
            }
        }
        TimestampsOutput::Csv => {
            writeln!(out, "table,bucket,start,cells,tombstones")?;
            for (name, _, h) in tables {
                let name = if name.contains([',', '"']) {
                    format!("\"{}\"", name.replace('"', "\"\""))
                } else {
                    name.clone()
                };
                for (s, (c, t)) in &h.buckets {
                    writeln!(out, "{name},{},{s},{c},{t}", bucket_name(b, *s))?;
                }
            }
        }
        TimestampsOutput::Text => {
            let width = term::width(Stream::Stdout);
            for (i, (name, n, h)) in tables.iter().enumerate() {
                if i > 0 {
                    writeln!(out)?;
                }
                writeln!(
                    out,
                    "{name}: {n} sstable(s), by {bucket_kind} (UTC); # cells, x tombstones"
                )?;
                let max = h.buckets.values().map(|(c, t)| c + t).max().unwrap_or(0);
                // name, counts, then the bar in what is left.
                let label = match b {
                    TimeBucket::Hour => 13,
                    TimeBucket::Day => 10,
                    TimeBucket::Month => 7,
                };
                let bar_w = width.saturating_sub(label + 2 * 11 + 3).max(10);
                for (s, (c, t)) in &h.buckets {
                    // Cells round down and tombstones up, so a few tombstones still show.
                    let scale = |v: u64, up: bool| {
                        let x = v as u128 * bar_w as u128;
                        let m = max.max(1) as u128;
                        (if up { x.div_ceil(m) } else { x / m }) as usize
                    };
                    let (cw, tw) = (scale(*c, false), scale(*t, true));
                    let tw = tw.min(bar_w.saturating_sub(cw));
                    writeln!(
                        out,
                        "{:<label$} {:>10} {:>10} {}{}",
                        bucket_name(b, *s),
                        c,
                        t,
                        "#".repeat(cw),
                        "x".repeat(tw)
                    )?;
                }
            }
        }
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_start_in_utc() {
        // 2023-11-14T22:13:20.001934Z
        let ts = 1_700_000_000_001_934;
        let h = bucket_start(TimeBucket::Hour, ts);
        assert_eq!(bucket_name(TimeBucket::Hour, h), "2023-11-14T22");
        assert_eq!(h, 1_699_999_200);
        let d = bucket_start(TimeBucket::Day, ts);
        assert_eq!(bucket_name(TimeBucket::Day, d), "2023-11-14");
        let m = bucket_start(TimeBucket::Month, ts);
        assert_eq!(bucket_name(TimeBucket::Month, m), "2023-11");
        assert_eq!(m, 1_698_796_800); // 2023-11-01T00:00:00Z
                                      // Before the epoch, buckets still start at or before the timestamp.
        assert_eq!(
            bucket_name(TimeBucket::Day, bucket_start(TimeBucket::Day, -1)),
            "1969-12-31"
        );
    }
}
