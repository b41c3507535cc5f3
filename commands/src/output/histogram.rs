//! The histograms of Statistics.db drawn as text bars.

use crate::render::format_seconds_instant;

/// Text bars of the partition size, cell count and tombstone drop time
/// histograms of `s`, fitted to `width` (`info` and `dump-statistics --histograms`).
pub fn stats_histogram_bars(s: &sstkit_format::statistics::stats::Stats, width: usize) -> String {
    let mut out = String::new();
    let mut draw = |title: &str, rows: Vec<(String, i64)>| {
        let rows: Vec<(String, i64)> = rows.into_iter().filter(|r| r.1 > 0).collect();
        out.push_str(&format!("\n{title}\n"));
        if rows.is_empty() {
            out.push_str("  (empty)\n");
            return;
        }
        let label = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
        let max = rows.iter().map(|r| r.1).max().unwrap_or(1).max(1);
        let bar_w = width.saturating_sub(label + 2 + 12 + 1).max(10);
        for (l, c) in rows {
            let n = ((c as u128 * bar_w as u128).div_ceil(max as u128)) as usize;
            out.push_str(&format!("  {l:>label$} {c:>11} {}\n", "#".repeat(n)));
        }
    };
    let sizes = s.estimated_partition_size.buckets();
    draw(
        "partition size (bytes, up to)",
        sizes
            .iter()
            .map(|b| (crate::units::pretty_bytes(b.0.max(0) as u64), b.1))
            .collect(),
    );
    draw(
        "cells per partition (up to)",
        s.estimated_cells_count
            .buckets()
            .iter()
            .map(|b| (b.0.to_string(), b.1))
            .collect(),
    );
    draw(
        "tombstone drop times",
        s.tombstone_drop_time
            .bins
            .iter()
            .map(|b| (format_seconds_instant(b.time), b.count))
            .collect(),
    );
    out
}
