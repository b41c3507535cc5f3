//! `--io-stats`: IO counters per sstable, printed to stderr so stdout stays
//! clean. Table form, or one JSON object per sstable:
//! `{"sstable": path, "components": {"<name>": {"reads", "bytes", ...}}, "total": {...}}`.

use std::io::Write;

use serde_json::{json, Map, Value};
use sstkit_format::io::{ComponentIo, IoStats};

use crate::cli::IoStatsFormat;

fn counters(c: &ComponentIo) -> Value {
    json!({
        "reads": c.reads,
        "bytes": c.bytes,
        "chunks_decompressed": c.chunks_decompressed,
        "compressed_bytes": c.compressed_bytes,
        "uncompressed_bytes": c.uncompressed_bytes,
        "cache_hits": c.cache_hits,
        "cache_misses": c.cache_misses,
        "cache_evictions": c.cache_evictions,
    })
}

/// The JSON form of one sstable's counters.
pub fn to_json(path: &str, s: &IoStats) -> Value {
    let mut comps = Map::new();
    for (c, io) in s.active() {
        comps.insert(c.name().to_string(), counters(io));
    }
    json!({"sstable": path, "components": comps, "total": counters(&s.total())})
}

/// Print one sstable's counters to stderr.
pub fn print(fmt: IoStatsFormat, path: &str, s: &IoStats) {
    let mut err = std::io::stderr().lock();
    match fmt {
        IoStatsFormat::Json => {
            let _ = writeln!(err, "{}", to_json(path, s));
        }
        IoStatsFormat::Table => {
            let mut t = super::table(&[
                "component",
                "reads",
                "bytes",
                "chunks",
                "compressed",
                "uncompressed",
                "cache hit",
                "cache miss",
                "evictions",
            ]);
            let row = |name: &str, c: &ComponentIo| {
                vec![
                    name.to_string(),
                    c.reads.to_string(),
                    c.bytes.to_string(),
                    c.chunks_decompressed.to_string(),
                    c.compressed_bytes.to_string(),
                    c.uncompressed_bytes.to_string(),
                    c.cache_hits.to_string(),
                    c.cache_misses.to_string(),
                    c.cache_evictions.to_string(),
                ]
            };
            for (c, io) in s.active() {
                t.add_row(row(c.suffix(), io));
            }
            t.add_row(row("total", &s.total()));
            let _ = writeln!(err, "IO for {path}\n{t}");
        }
    }
}
