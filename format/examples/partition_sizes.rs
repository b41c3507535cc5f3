//! The library API in one program: open the sstables of a table (files,
//! directories, `s3://`/`http(s)://`/`az://` URLs), query them with the
//! engine, and count what each selected partition holds.
//!
//! ```text
//! cargo run -p sstkit-format --example partition_sizes -- fixtures/cassandra/nb_clustering/
//! cargo run -p sstkit-format --example partition_sizes -- DIR --key-hex 00000001 --limit 3
//! ```
//!
//! Prints one line per partition: its key in hex, its rows, its range
//! tombstone markers and whether it has a partition deletion.

use std::io;
use std::path::PathBuf;
use std::process::ExitCode;

use sstkit_format::data::{RangeTombstoneMarker, Row};
use sstkit_format::deletion::DeletionTime;
use sstkit_format::descriptor::find_sstables;
use sstkit_format::engine::{self, Note, Selection, Shape, Sink, Table};
use sstkit_format::Sstable;

/// Counts the fragments of each partition and prints a line at its end.
#[derive(Default)]
struct Counts {
    key: Vec<u8>,
    deleted: bool,
    rows: u64,
    markers: u64,
}

impl Sink for Counts {
    fn partition_start(
        &mut self,
        _t: &Table<'_>,
        key: &[u8],
        deletion: &DeletionTime,
        _header_end: u64,
    ) -> io::Result<()> {
        *self = Counts {
            key: key.to_vec(),
            deleted: !deletion.is_live(),
            ..Counts::default()
        };
        Ok(())
    }

    fn row(&mut self, _t: &Table<'_>, _row: &Row<'_>) -> io::Result<()> {
        self.rows += 1;
        Ok(())
    }

    fn marker(&mut self, _t: &Table<'_>, _m: &RangeTombstoneMarker<'_>) -> io::Result<()> {
        self.markers += 1;
        Ok(())
    }

    fn partition_end(&mut self, _t: &Table<'_>) -> io::Result<()> {
        let hex: String = self.key.iter().map(|b| format!("{b:02x}")).collect();
        println!(
            "0x{hex}\trows {}\tmarkers {}{}",
            self.rows,
            self.markers,
            if self.deleted { "\tdeleted" } else { "" }
        );
        Ok(())
    }
}

fn main() -> ExitCode {
    let mut paths = Vec::new();
    let mut keys = Vec::new();
    let mut limit = u64::MAX;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--key-hex" => match args.next().and_then(|h| unhex(&h)) {
                Some(k) => keys.push(k),
                None => return usage(),
            },
            "--limit" => match args.next().and_then(|n| n.parse().ok()) {
                Some(n) => limit = n,
                None => return usage(),
            },
            _ => paths.push(PathBuf::from(a)),
        }
    }
    if paths.is_empty() {
        return usage();
    }
    match run(&paths, keys, limit) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("partition_sizes: {e}");
            ExitCode::from(3)
        }
    }
}

fn usage() -> ExitCode {
    eprintln!("usage: partition_sizes PATH... [--key-hex HEX]... [--limit N]");
    ExitCode::from(2)
}

fn run(
    paths: &[PathBuf],
    keys: Vec<Vec<u8>>,
    limit: u64,
) -> Result<(), Box<dyn std::error::Error>> {
    for desc in find_sstables(paths)? {
        let sst = Sstable::open(desc)?;
        // Statistics.db, read once: the types and the partitioner.
        let bound = engine::bind(&sst)?;
        let table = Table::new(&bound.header, bound.partitioner.clone(), 0);
        let keys = (!keys.is_empty()).then(|| keys.clone());
        let selection = Selection::new(&table, keys, [], None);
        let shape = Shape {
            limit,
            ..Shape::default()
        };
        let mut notes = |n: Note<'_>| {
            if let Note::KeyAbsent { key, absence } = n {
                let hex: String = key.iter().map(|b| format!("{b:02x}")).collect();
                eprintln!("0x{hex}: {}", absence.describe());
            }
        };
        engine::run(
            &sst,
            &table,
            &selection,
            &shape,
            &mut Counts::default(),
            &mut notes,
        )?;
    }
    Ok(())
}

fn unhex(h: &str) -> Option<Vec<u8>> {
    let h = h.strip_prefix("0x").unwrap_or(h);
    if !h.len().is_multiple_of(2) {
        return None;
    }
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(h.get(i..i + 2)?, 16).ok())
        .collect()
}
