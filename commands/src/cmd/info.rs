//! `sstkit info SSTABLE...`: a one-screen summary of each sstable.
//!
//! ```text
//! sstkit info nb-1-big-Data.db
//! sstkit info --output json /var/lib/cassandra/data/ks/t-1234/
//! ```
//!
//! Reads: TOC.txt, Statistics.db, CompressionInfo.db (compressed sstables),
//! Summary.db (first/last key for versions that do not store them in
//! Statistics.db), Scylla.db (names, when present), and the size of every
//! component (no reads).
//!
//! JSON payload: `{"version", "format", "generation", "partitioner",
//! "components": {suffix: size}, "data_size", "compression"?: {"compressor",
//! "chunk_length", "uncompressed_size", "ratio"}, "estimated_partitions",
//! "estimated_partitions_hll"?, "rows"?, "min_timestamp", "max_timestamp",
//! "min_local_deletion_time"?, "max_local_deletion_time"?, "min_ttl"?,
//! "max_ttl"?, "first_key"?, "last_key"? ({"token","raw","value"}), "repaired_at",
//! "sstable_level", "schema"?}`. Timestamps are microseconds, local deletion
//! times seconds; the text form also shows them as UTC dates.
//!
//! Exit status: 0 ok; 2 usage; 3 unreadable input (a missing, damaged or
//! truncated component; a checksum mismatch in the dumped component).

use std::io::Write;

use serde_json::{json, Map, Value};
use sstkit_format::analytics;
use sstkit_format::compression::CompressionInfo;
use sstkit_format::statistics::stats::NO_DELETION_TIME;
use sstkit_format::statistics::Statistics;
use sstkit_format::summary::Summary;
use sstkit_format::{Component, Sstable};

use crate::cli::{InfoArgs, OutputFormat};
use crate::output::histogram::stats_histogram_bars;
use crate::output::kv_table;
use crate::plan::inputs::Inputs;
use crate::plan::SstPlan;
use crate::render::{f64_json, format_micros_instant, format_seconds_instant, KeyCtx};
use crate::{for_each_sstable, CmdResult, Outcome};

fn collect(sst: &Sstable, gc_before: i64) -> CmdResult<Value> {
    // Salvage: a damaged histogram is reported, the other fields still shown.
    let path = sst.path(Component::Statistics);
    let st = Statistics::parse_salvage(&sst.read_component(Component::Statistics)?, sst.features())
        .map_err(|e| e.in_file(&path))?;
    let mut ctx = KeyCtx::from_statistics(&st);
    // ka/la store no key type: --schema gives it, so the keys print decoded.
    if ctx.key_type.is_none() {
        ctx.key_type = sst.table_schema().map(|s| s.partition_key_type());
    }
    let mut o = Map::new();
    o.insert("version".into(), json!(sst.version().as_str()));
    o.insert("format".into(), json!(sst.desc.format.name()));
    o.insert("generation".into(), json!(sst.desc.generation.to_string()));
    o.insert(
        "partitioner".into(),
        json!(st.validation.as_ref().map(|v| v.partitioner.clone())),
    );
    let mut comps = Map::new();
    for e in &sst.toc_txt()?.entries {
        let size = sstkit_format::io::store::file_len(&sst.desc.path_of(&e.name));
        comps.insert(e.name.clone(), json!(size));
    }
    o.insert("components".into(), Value::Object(comps));
    let data_size = sst.io.len(Component::Data).ok();
    o.insert("data_size".into(), json!(data_size));
    if sst.has(Component::CompressionInfo) {
        let ci = CompressionInfo::parse(
            &sst.read_component(Component::CompressionInfo)?,
            &sst.features(),
        )
        .map_err(|e| e.in_file(&sst.path(Component::CompressionInfo)))?;
        let ratio = match (data_size, ci.data_length) {
            (Some(d), u) if u > 0 => f64_json(d as f64 / u as f64),
            _ => Value::Null,
        };
        o.insert(
            "compression".into(),
            json!({
                "compressor": ci.compressor_class,
                "chunk_length": ci.chunk_length,
                "uncompressed_size": ci.data_length,
                "ratio": ratio,
            }),
        );
    }
    if let Some(s) = &st.stats {
        if !s.damaged.is_empty() {
            let msgs: Vec<String> = s
                .damaged
                .iter()
                .map(|e| e.clone().in_file(&path).to_string())
                .collect();
            for m in &msgs {
                eprintln!("sstkit: warning: {m}; shown as damaged, the other fields are read");
            }
            o.insert("damaged".into(), json!(msgs));
        }
        let partitions: i64 = s.estimated_partition_size.pairs.iter().map(|p| p.1).sum();
        let histogram_damaged = s.damaged.iter().any(|e| e.what.contains("partition size"));
        o.insert(
            "estimated_partitions".into(),
            if histogram_damaged {
                Value::Null
            } else {
                json!(partitions)
            },
        );
        if let Some(c) = st.compaction.as_ref().and_then(|c| c.cardinality()) {
            o.insert("estimated_partitions_hll".into(), json!(c.estimate));
        }
        if let Some(r) = s.total_rows {
            o.insert("rows".into(), json!(r));
        }
        o.insert("min_timestamp".into(), json!(s.min_timestamp));
        o.insert("max_timestamp".into(), json!(s.max_timestamp));
        let ldt = |v: i64| {
            if v == NO_DELETION_TIME {
                Value::Null
            } else {
                json!(v)
            }
        };
        if let Some(v) = s.min_local_deletion_time {
            o.insert("min_local_deletion_time".into(), ldt(v));
        }
        o.insert(
            "max_local_deletion_time".into(),
            ldt(s.max_local_deletion_time),
        );
        if let Some(v) = s.min_ttl {
            o.insert("min_ttl".into(), json!(v));
        }
        if let Some(v) = s.max_ttl {
            o.insert("max_ttl".into(), json!(v));
        }
        if let Some(v) = s.repaired_at {
            o.insert("repaired_at".into(), json!(v));
        }
        o.insert("sstable_level".into(), json!(s.sstable_level));
        // sstablemetadata -g: droppable tombstones over the estimated cells.
        o.insert("gc_before".into(), json!(gc_before));
        o.insert(
            "droppable_tombstones".into(),
            analytics::droppable_tombstone_ratio(s, gc_before).map_or(Value::Null, f64_json),
        );
        o.insert(
            "droppable_tombstone_count".into(),
            f64_json(analytics::droppable_tombstones(
                &s.tombstone_drop_time,
                gc_before,
            )),
        );
        let cells = s
            .estimated_cells_count
            .buckets()
            .iter()
            .map(|b| b.1)
            .sum::<i64>();
        o.insert(
            "estimated_cells".into(),
            json!(analytics::stored_histogram_mean(&s.estimated_cells_count)
                .map(|m| m.saturating_mul(cells))),
        );
        let pct = |h: &sstkit_format::statistics::stats::Histogram| {
            let mut m = Map::new();
            for (name, p) in analytics::PERCENTILES {
                m.insert(
                    name.into(),
                    json!(analytics::stored_histogram_percentile(h, p)),
                );
            }
            m.insert(
                "max".into(),
                json!(h.buckets().iter().rev().find(|b| b.1 > 0).map(|b| b.0)),
            );
            Value::Object(m)
        };
        o.insert(
            "percentiles".into(),
            json!({
                "partition_size": pct(&s.estimated_partition_size),
                "cells_per_partition": pct(&s.estimated_cells_count),
            }),
        );
        o.insert(
            "tombstone_drop_times".into(),
            s.tombstone_drop_time
                .bins
                .iter()
                .map(|b| json!({"time": b.time, "count": b.count}))
                .collect(),
        );
        if let (Some(f), Some(l)) = (&s.first_key, &s.last_key) {
            o.insert("first_key".into(), ctx.key_json(f));
            o.insert("last_key".into(), ctx.key_json(l));
        }
    }
    if !o.contains_key("first_key") && sst.has(Component::Summary) {
        if let Ok(s) = Summary::parse(&sst.read_component(Component::Summary)?, &sst.features()) {
            o.insert("first_key".into(), ctx.key_json(&s.first_key));
            o.insert("last_key".into(), ctx.key_json(&s.last_key));
        }
    }
    if st.header.is_some() {
        if let Ok((schema, names)) = crate::tables::table_schema(sst) {
            let (ks, t) = names
                .or_else(|| crate::tables::names_from_path(sst))
                .unwrap_or_else(|| ("ks".into(), "tbl".into()));
            o.insert("schema".into(), json!(schema.to_create_table(&ks, &t)));
        }
    }
    Ok(Value::Object(o))
}

fn text(v: &Value) -> String {
    let mut rows: Vec<(String, String)> = Vec::new();
    let s = |k: &str| {
        v.get(k).map_or("-".to_string(), |x| match x {
            Value::String(s) => s.clone(),
            Value::Null => "-".to_string(),
            x => x.to_string(),
        })
    };
    for k in ["version", "format", "generation", "partitioner"] {
        rows.push((k.replace('_', " "), s(k)));
    }
    if let Some(c) = v.get("compression") {
        rows.push((
            "compression".into(),
            format!(
                "{} chunk {} B, {} -> {} bytes (ratio {:.3})",
                c["compressor"].as_str().unwrap_or("?"),
                c["chunk_length"],
                c["uncompressed_size"],
                v["data_size"],
                c["ratio"].as_f64().unwrap_or(f64::NAN)
            ),
        ));
    } else {
        rows.push((
            "compression".into(),
            format!("none ({} bytes)", s("data_size")),
        ));
    }
    rows.push(("estimated partitions".into(), s("estimated_partitions")));
    if v.get("estimated_partitions_hll").is_some() {
        rows.push((
            "partitions (HLL estimate)".into(),
            s("estimated_partitions_hll"),
        ));
    }
    if v.get("rows").is_some() {
        rows.push(("rows".into(), s("rows")));
    }
    let ts = |k: &str| match v.get(k).and_then(Value::as_i64) {
        Some(x) => format!("{x} ({})", format_micros_instant(x)),
        None => "-".to_string(),
    };
    let secs = |k: &str| match v.get(k).and_then(Value::as_i64) {
        Some(x) => format!("{x} ({})", format_seconds_instant(x)),
        None => "none".to_string(),
    };
    rows.push(("min timestamp".into(), ts("min_timestamp")));
    rows.push(("max timestamp".into(), ts("max_timestamp")));
    rows.push((
        "min local deletion time".into(),
        secs("min_local_deletion_time"),
    ));
    rows.push((
        "max local deletion time".into(),
        secs("max_local_deletion_time"),
    ));
    rows.push(("min ttl".into(), s("min_ttl")));
    rows.push(("max ttl".into(), s("max_ttl")));
    rows.push(("repaired at".into(), s("repaired_at")));
    rows.push(("sstable level".into(), s("sstable_level")));
    if let Some(r) = v.get("droppable_tombstones").and_then(Value::as_f64) {
        rows.push((
            "droppable tombstones".into(),
            format!(
                "{r:.4} of cells (gc before {})",
                v["gc_before"]
                    .as_i64()
                    .map_or("?".into(), format_seconds_instant)
            ),
        ));
    }
    let pct_line = |k: &str, bytes: bool| -> Option<String> {
        let p = v.get("percentiles")?.get(k)?;
        let f = |name: &str| match p[name].as_i64() {
            Some(x) if bytes => crate::units::pretty_bytes(x.max(0) as u64),
            Some(x) => x.to_string(),
            None => "overflow".into(),
        };
        Some(format!(
            "p50 {}, p95 {}, p99 {}, max {}",
            f("p50"),
            f("p95"),
            f("p99"),
            f("max")
        ))
    };
    if let Some(l) = pct_line("partition_size", true) {
        rows.push(("partition size".into(), l));
    }
    if let Some(l) = pct_line("cells_per_partition", false) {
        rows.push(("cells per partition".into(), l));
    }
    for k in ["first_key", "last_key"] {
        if let Some(key) = v.get(k) {
            rows.push((
                k.replace('_', " "),
                format!(
                    "{} (token {}, 0x{})",
                    key["value"].as_str().unwrap_or(""),
                    key["token"].as_str().unwrap_or(""),
                    key["raw"].as_str().unwrap_or("")
                ),
            ));
        }
    }
    if let Some(Value::Object(c)) = v.get("components") {
        for (name, size) in c {
            rows.push((
                format!("  {name}"),
                size.as_u64()
                    .map_or("missing".into(), |x| format!("{x} bytes")),
            ));
        }
    }
    if let Some(Value::Array(d)) = v.get("damaged") {
        for m in d {
            rows.push(("damaged".into(), m.as_str().unwrap_or("").to_string()));
        }
    }
    let mut out = kv_table(&rows).to_string();
    if let Some(schema) = v.get("schema").and_then(Value::as_str) {
        out.push('\n');
        out.push_str(schema);
    }
    out
}

/// Text bars of the histograms Statistics.db holds, fitted to `width`.
fn histogram_bars(sst: &Sstable, width: usize) -> CmdResult<String> {
    let st = Statistics::parse_salvage(&sst.read_component(Component::Statistics)?, sst.features())
        .map_err(|e| e.in_file(&sst.path(Component::Statistics)))?;
    Ok(st
        .stats
        .as_ref()
        .map_or(String::new(), |s| stats_histogram_bars(s, width)))
}

/// Plain aligned columns: numbers right-aligned, the first column cut in
/// the middle to fit a terminal (and never cut for a file or pipe, where
/// the names are what `grep` and `awk` look for).
struct Columns {
    head: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Columns {
    fn new(head: &[&str]) -> Columns {
        Columns {
            head: head.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    fn row(&mut self, r: Vec<String>) {
        self.rows.push(r);
    }

    fn render(&self, width: Option<usize>) -> String {
        let n = self.head.len();
        let mut w: Vec<usize> = self.head.iter().map(|h| h.chars().count()).collect();
        for r in &self.rows {
            for (i, c) in r.iter().enumerate().take(n) {
                w[i] = w[i].max(c.chars().count());
            }
        }
        if let Some(width) = width {
            let rest: usize = w[1..].iter().map(|x| x + 2).sum();
            w[0] = w[0].min(width.saturating_sub(rest).max(8));
        }
        let line = |cells: &[String]| {
            let mut l = String::new();
            for (i, c) in cells.iter().enumerate().take(n) {
                if i == 0 {
                    let cut = cut_name(c, w[0]);
                    l.push_str(&format!("{cut:<width$}", width = w[0]));
                } else {
                    l.push_str(&format!("  {c:>width$}", width = w[i]));
                }
            }
            l.trim_end().to_string() + "\n"
        };
        let mut out = line(&self.head);
        for r in &self.rows {
            out.push_str(&line(r));
        }
        out
    }
}

/// `name` in `width` columns, cut in the middle of its table part so that
/// what tells the lines of one table apart stays whole: the snapshot or
/// backup and the sstable (`shop.ord…_customer/snapshots/s1/nb-1-big`,
/// `shop.ord…_customer (snapshot s1)`).
fn cut_name(name: &str, width: usize) -> String {
    if name.chars().count() <= width {
        return name.to_string();
    }
    let keep_from = ["/snapshots/", "/backups/", " ("]
        .iter()
        .filter_map(|m| name.find(m))
        .min()
        .or_else(|| name.rfind('/'));
    // Else the snapshot's name and the sstable (`…/nightly/nb-1-big`).
    let set_and_sstable = keep_from
        .filter(|&at| at < name.len() && name[at..].starts_with("/snapshots/"))
        .and_then(|_| {
            let last = name.rfind('/')?;
            name[..last].rfind('/')
        });
    for at in [keep_from, set_and_sstable].into_iter().flatten() {
        let (head, tail) = name.split_at(at);
        let room = width.saturating_sub(tail.chars().count());
        // Too little of the table would be left: try keeping less.
        if room >= 6 {
            return crate::term::ellipsize_middle(head, room) + tail;
        }
    }
    crate::term::ellipsize_middle(name, width)
}

/// A size in three significant digits (`7.78 KiB`, `183 KiB`): the
/// listing's numbers leave the room to the names.
fn short_bytes(n: u64) -> String {
    let p = if n == 0 {
        0
    } else {
        (63 - n.leading_zeros()) / 10
    };
    if p == 0 {
        return format!("{n} B");
    }
    let unit = b" KMGTPE"[p as usize] as char;
    let x = n as f64 / (1u64 << (p * 10)) as f64;
    match x {
        x if x < 9.995 => format!("{x:.2} {unit}iB"),
        x if x < 99.95 => format!("{x:.1} {unit}iB"),
        x => format!("{x:.0} {unit}iB"),
    }
}

/// One table's totals: name, sstables, bytes, partitions, oldest and newest
/// write, droppable tombstones, estimated cells.
type TableTotals = (String, u64, u64, i64, Option<i64>, Option<i64>, f64, i64);

/// One line per sstable, then the totals of each table.
fn many_text(inputs: &Inputs, gc_before: i64, out: &mut dyn Write) -> CmdResult<Outcome> {
    let stdout = crate::term::Stream::Stdout;
    let width = stdout.is_terminal().then(|| crate::term::width(stdout));
    let mut t = Columns::new(&[
        "sstable",
        "size",
        "parts",
        "oldest",
        "newest",
        "droppable",
        "lvl",
    ]);
    // The dates are those of the oldest and newest write timestamps.
    // Per table: sstables, bytes, partitions, min ts, max ts, droppable count, cells.
    let mut tables: Vec<TableTotals> = Vec::new();
    let day = |us: Option<i64>| {
        us.map_or("-".to_string(), |x| {
            format_micros_instant(x)
                .chars()
                .take(10)
                .collect::<String>()
        })
    };
    let outcome = inputs.each(|_, sst, _| {
        let v = collect(sst, gc_before)?;
        let size = v["data_size"].as_u64().unwrap_or(0);
        let parts = v["estimated_partitions"].as_i64().unwrap_or(0);
        let (min, max) = (v["min_timestamp"].as_i64(), v["max_timestamp"].as_i64());
        let name = crate::sstable_name(&sst.desc);
        t.row(vec![
            name,
            short_bytes(size),
            (parts).to_string(),
            (day(min)).to_string(),
            (day(max)).to_string(),
            v["droppable_tombstones"]
                .as_f64()
                .map_or("-".into(), |r| format!("{r:.4}")),
            v["sstable_level"].to_string(),
        ]);
        let table = crate::table_key(&sst.desc);
        let i = match tables.iter().position(|x| x.0 == table) {
            Some(i) => i,
            None => {
                tables.push((table, 0, 0, 0, None, None, 0.0, 0));
                tables.len() - 1
            }
        };
        let e = &mut tables[i];
        e.1 += 1;
        e.2 += size;
        e.3 += parts;
        e.4 = match (e.4, min) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        e.5 = match (e.5, max) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        e.6 += v["droppable_tombstone_count"].as_f64().unwrap_or(0.0);
        e.7 += v["estimated_cells"].as_i64().unwrap_or(0);
        Ok(())
    })?;
    out.write_all(t.render(width).as_bytes())?;
    let mut tt = Columns::new(&[
        "table",
        "ssts",
        "size",
        "parts",
        "oldest",
        "newest",
        "droppable",
    ]);
    for e in &tables {
        tt.row(vec![
            e.0.clone(),
            (e.1).to_string(),
            short_bytes(e.2),
            (e.3).to_string(),
            (day(e.4)).to_string(),
            (day(e.5)).to_string(),
            (if e.7 > 0 {
                format!("{:.4}", e.6 / e.7 as f64)
            } else {
                "0".into()
            })
            .to_string(),
        ]);
    }
    writeln!(
        out,
        "\ntotals per table (droppable tombstones at gc before {}):",
        format_seconds_instant(gc_before)
    )?;
    out.write_all(tt.render(width).as_bytes())?;
    Ok(outcome)
}

/// Run the command.
pub fn run(a: &InfoArgs, out: &mut dyn Write) -> CmdResult<Outcome> {
    let now = a.now.unwrap_or_else(crate::clock_secs);
    let gc_before = now.saturating_sub(a.gc_grace);
    let plan = SstPlan::resolve(&a.sst, OutputFormat::Text)?;
    if plan.fmt == OutputFormat::Text && !a.histograms && plan.inputs.sstables.len() > 1 {
        // Statistics.db only: no table schema is attached.
        return many_text(&plan.inputs.metadata_only(), gc_before, out);
    }
    let width = crate::term::width(crate::term::Stream::Stdout);
    for_each_sstable(&plan, false, out, |sst, emit| {
        let v = collect(sst, gc_before)?;
        if emit.fmt == OutputFormat::Text {
            let mut body = text(&v);
            if a.histograms {
                body.push_str(&histogram_bars(sst, width)?);
            }
            emit.text(&body)?;
        } else {
            emit.json.object(&v)?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::{cut_name, short_bytes};

    #[test]
    fn names_keep_their_set_and_sstable_when_cut() {
        let n = "operations.user_activity_by_region/snapshots/nightly/nb-1-big";
        assert_eq!(cut_name(n, 80), n);
        let c = cut_name(n, 40);
        assert_eq!(c.chars().count(), 40);
        assert_eq!(c, "oper…y_region/snapshots/nightly/nb-1-big");
        assert_eq!(
            cut_name("operations.user_activity_by_region/nb-1-big", 20),
            "ope…_region/nb-1-big"
        );
        assert_eq!(
            cut_name("shop.orders_by_customer (snapshot s1)", 24),
            "sho…stomer (snapshot s1)"
        );
        // Narrower: the snapshot's name and the sstable, then the whole name cut.
        assert_eq!(cut_name(n, 24), "op…hots/nightly/nb-1-big");
        assert_eq!(cut_name(n, 12).chars().count(), 12);
    }

    #[test]
    fn short_sizes_have_three_digits() {
        assert_eq!(short_bytes(0), "0 B");
        assert_eq!(short_bytes(1023), "1023 B");
        assert_eq!(short_bytes(7970), "7.78 KiB");
        assert_eq!(short_bytes(16665), "16.3 KiB");
        assert_eq!(short_bytes(186937), "183 KiB");
        assert_eq!(short_bytes(1023 * 1024 + 1000), "1024 KiB");
    }
}
