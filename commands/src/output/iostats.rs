//! `--io-stats`: IO counters per sstable, printed to stderr so stdout stays
//! clean. Table form, or one JSON object per sstable:
//! `{"sstable": path, "components": {"<name>": {"reads", "bytes", ...}}, "total": {...}}`.
//! `latency_us` is the wall time of the physical reads (for object storage,
//! the GETs' round trips).

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
        "latency_us": c.latency_us,
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

/// One component's counters in words, the ones that are zero left out
/// (chunks and the cache concern only some components): one short line
/// per component fits a terminal where nine columns of numbers do not.
fn summary(c: &ComponentIo) -> String {
    let mut parts = vec![format!(
        "{} reads, {} bytes, {} µs",
        c.reads, c.bytes, c.latency_us
    )];
    if c.chunks_decompressed > 0 {
        parts.push(format!(
            "{} chunks, {} -> {} bytes",
            c.chunks_decompressed, c.compressed_bytes, c.uncompressed_bytes
        ));
    }
    if c.cache_hits + c.cache_misses + c.cache_evictions > 0 {
        parts.push(format!(
            "cache {} hits, {} misses, {} evictions",
            c.cache_hits, c.cache_misses, c.cache_evictions
        ));
    }
    parts.join("; ")
}

/// Print one sstable's counters to stderr.
pub fn print(fmt: IoStatsFormat, path: &str, s: &IoStats) {
    let mut err = std::io::stderr().lock();
    match fmt {
        IoStatsFormat::Json => {
            let _ = writeln!(err, "{}", to_json(path, s));
        }
        IoStatsFormat::Table => {
            let mut rows: Vec<(String, String)> = s
                .active()
                .map(|(c, io)| (c.suffix().to_string(), summary(io)))
                .collect();
            rows.push(("total".to_string(), summary(&s.total())));
            let mut t = super::kv_table(&rows);
            // Laid out for stderr, where it is printed.
            crate::term::fit_table(&mut t, crate::term::Stream::Stderr);
            let heading = crate::term::wrap(
                &format!("IO for {path}"),
                "",
                "  ",
                crate::term::width(crate::term::Stream::Stderr),
            );
            let _ = writeln!(err, "{heading}\n{t}");
        }
    }
}
