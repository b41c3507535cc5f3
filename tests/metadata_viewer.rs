//! Compare decoded Statistics.db with Cassandra's own `sstablemetadata`
//! output (`fixtures/cassandra/<case>/sstablemetadata.txt`, written by
//! Cassandra 5.0.9's `SSTableMetadataViewer` for `nb`, `oa` and `da`
//! sstables).
//!
//! The viewer prints `Field: value` lines and three tables (tombstone drop
//! times, partition sizes, cell counts) whose rows are
//! `   <offset> [(<human>)] | <count> (<pct>) <bar>`; only buckets with a
//! non-zero count are printed, keyed by the bucket's upper bound
//! (`EstimatedHistogram.getBucketOffsets()[i]`).

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};

use sstkit_commands::render::{value_text, Form};
use sstkit_format::statistics::stats::*;
use sstkit_format::statistics::*;
use sstkit_format::types::CqlType;
use sstkit_format::value::decode;
use sstkit_format::value::Value;
use sstkit_format::version::{Features, Version};

/// Parsed viewer output: single fields and the three tables.
#[derive(Debug, Default)]
struct Viewer {
    fields: BTreeMap<String, String>,
    tables: BTreeMap<String, Vec<(i64, i64)>>,
}

fn parse_viewer(text: &str) -> Viewer {
    let mut v = Viewer::default();
    let mut table: Option<String> = None;
    for line in text.lines() {
        if let Some(t) = &table {
            let l = line.trim();
            if l == "Percentiles" {
                table = None;
                continue;
            }
            if line.starts_with("   ") && l.contains('|') && !l.contains("Count  (%)") {
                let (left, right) = l.split_once('|').unwrap_or((l, ""));
                let off = left.split_whitespace().next().and_then(|x| x.parse().ok());
                let cnt = right.split_whitespace().next().and_then(|x| x.parse().ok());
                if let (Some(o), Some(c)) = (off, cnt) {
                    v.tables.entry(t.clone()).or_default().push((o, c));
                }
            }
            continue;
        }
        if let Some((k, val)) = line.split_once(": ") {
            let k = k.trim().to_string();
            if matches!(
                k.as_str(),
                "Estimated tombstone drop times" | "Partition Size" | "Column Count"
            ) {
                table = Some(k.clone());
                v.tables.entry(k.clone()).or_default();
            }
            v.fields.entry(k).or_insert_with(|| val.trim().to_string());
        } else if let Some(k) = line.strip_suffix(':') {
            v.fields.entry(k.trim().to_string()).or_default();
        }
    }
    v
}

/// The number in the last `(…)` of a field value, or its first token.
fn num(s: &str) -> Option<i64> {
    if let (Some(a), Some(b)) = (s.rfind('('), s.rfind(')')) {
        if a < b {
            if let Ok(n) = s[a + 1..b].trim().parse() {
                return Some(n);
            }
        }
    }
    s.split_whitespace().next()?.parse().ok()
}

fn plain(ty: &CqlType, bytes: &[u8]) -> String {
    match decode(ty, bytes) {
        Ok(v) => value_text(&v, Form::Str),
        Err(e) => format!("<undecodable: {e}>"),
    }
}

fn clustering_string(values: &[Option<Vec<u8>>], types: &[CqlType]) -> String {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| match (v, types.get(i)) {
            (None, _) => "null".to_string(),
            (Some(b), Some(t)) => plain(t, b),
            (Some(b), None) => sstkit_commands::render::hex(b),
        })
        .collect::<Vec<_>>()
        .join(":")
}

/// `Slice.toString(ClusteringComparator)` as the viewer prints
/// `stats.coveredClustering`.
fn covered_string(s: &Stats, header: &SerializationHeader, f: &Features) -> String {
    if let Some(c) = &s.covered_clustering {
        return format!(
            "{}{}, {}{}",
            if c.start.is_inclusive() { "[" } else { "(" },
            clustering_string(&c.start.values, &c.types),
            clustering_string(&c.end.values, &c.types),
            if c.end.is_inclusive() { "]" } else { ")" },
        );
    }
    // Legacy min/max: ignored before `md` (CASSANDRA-14861), and
    // `Slice.make` turns [BOTTOM, TOP] into ALL.
    let (Some(min), Some(max)) = (&s.legacy_min_clustering, &s.legacy_max_clustering) else {
        return "ALL".into();
    };
    if !f.accurate_min_max || (min.is_empty() && max.is_empty()) {
        return "ALL".into();
    }
    let to_opt = |v: &Vec<Vec<u8>>| v.iter().cloned().map(Some).collect::<Vec<_>>();
    format!(
        "[{}, {}]",
        clustering_string(&to_opt(min), &header.clustering_types),
        clustering_string(&to_opt(max), &header.clustering_types)
    )
}

fn clp(p: &CommitLogPosition) -> String {
    format!(
        "CommitLogPosition(segmentId={}, position={})",
        p.segment_id, p.position
    )
}

fn fixtures_dir() -> PathBuf {
    crate::util::fixtures()
}

fn read_text(dir: &Path, name: &str) -> Option<String> {
    if let Ok(s) = std::fs::read_to_string(dir.join(name)) {
        return Some(s);
    }
    let f = std::fs::File::open(dir.join(format!("{name}.gz"))).ok()?;
    let mut s = String::new();
    flate2::read::GzDecoder::new(f)
        .read_to_string(&mut s)
        .ok()?;
    Some(s)
}

/// Compare one case; returns the list of disagreements and the number of
/// fields compared.
fn compare_case(dir: &Path) -> Option<(Vec<String>, usize)> {
    let text = read_text(dir, "sstablemetadata.txt")?;
    let stats_path = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with("-Statistics.db"))
        })?;
    let version: Version = sstkit_format::descriptor::Descriptor::from_path(&stats_path)
        .ok()?
        .0
        .version;
    let ft = version.features();
    let bytes = std::fs::read(&stats_path).ok()?;
    let v = parse_viewer(&text);
    let mut diffs = Vec::new();
    let mut n = 0usize;
    let st = match Statistics::parse(&bytes, ft) {
        Ok(st) => st,
        Err(e) => return Some((vec![format!("parse failed: {e}")], 1)),
    };
    let mut check = |field: &str, ours: String, theirs: Option<String>| {
        n += 1;
        match theirs {
            None => diffs.push(format!(
                "{field}: not in sstablemetadata output (ours: {ours})"
            )),
            Some(t) if t != ours => diffs.push(format!("{field}: ours {ours:?} theirs {t:?}")),
            _ => {}
        }
    };
    let fld = |k: &str| v.fields.get(k).cloned();
    let val = st.validation.as_ref().expect("validation");
    let s = st.stats.as_ref().expect("stats");
    let h = st.header.as_ref().expect("header");
    let comp = st.compaction.as_ref().expect("compaction");

    for c in &st.components {
        // Every component decoded to its exact extent (for `oa`/`da` this
        // includes the tombstone-histogram padding, see `Stats::oa_padding`).
        check(
            "component extent",
            format!("{:?} {}", c.kind, c.consumed),
            Some(format!("{:?} {}", c.kind, c.len)),
        );
    }
    if ft.uint_deletion_time {
        check(
            "oa padding",
            s.padding.to_string(),
            Some((4 * s.tombstone_drop_time.bins.len()).to_string()),
        );
    }
    check("Partitioner", val.partitioner.clone(), fld("Partitioner"));
    check(
        "Bloom Filter FP chance",
        value_text(&Value::Double(val.bloom_filter_fp_chance), Form::Str),
        fld("Bloom Filter FP chance"),
    );
    check(
        "Minimum timestamp",
        s.min_timestamp.to_string(),
        fld("Minimum timestamp")
            .and_then(|x| num(&x))
            .map(|x| x.to_string()),
    );
    check(
        "Maximum timestamp",
        s.max_timestamp.to_string(),
        fld("Maximum timestamp")
            .and_then(|x| num(&x))
            .map(|x| x.to_string()),
    );
    check(
        "SSTable min local deletion time",
        s.min_local_deletion_time
            .unwrap_or(NO_DELETION_TIME)
            .to_string(),
        fld("SSTable min local deletion time")
            .and_then(|x| num(&x))
            .map(|x| x.to_string()),
    );
    check(
        "SSTable max local deletion time",
        s.max_local_deletion_time.to_string(),
        fld("SSTable max local deletion time")
            .and_then(|x| num(&x))
            .map(|x| x.to_string()),
    );
    if fld("Compressor").is_some_and(|c| c != "-") {
        check(
            "Compression ratio",
            value_text(&Value::Double(s.compression_ratio), Form::Str),
            fld("Compression ratio"),
        );
    }
    check(
        "TTL min",
        s.min_ttl.unwrap_or(0).to_string(),
        fld("TTL min")
            .and_then(|x| num(&x.replace('(', " (")))
            .map(|x| x.to_string()),
    );
    check(
        "TTL max",
        s.max_ttl.unwrap_or(0).to_string(),
        fld("TTL max").and_then(|x| x.split_whitespace().next().map(str::to_string)),
    );
    if let (Some(fk), Some(lk)) = (&s.first_key, &s.last_key) {
        let kt = &h.partition_key_type;
        let tok = |k: &[u8]| sstkit_format::token::murmur3_token(k).to_string();
        check(
            "First token",
            format!("{} ({})", tok(fk), plain(kt, fk)),
            fld("First token"),
        );
        check(
            "Last token",
            format!("{} ({})", tok(lk), plain(kt, lk)),
            fld("Last token"),
        );
    }
    check(
        "Covered clusterings",
        covered_string(s, h, &ft),
        fld("Covered clusterings"),
    );
    check(
        "SSTable Level",
        s.sstable_level.to_string(),
        fld("SSTable Level"),
    );
    check(
        "Repaired at",
        s.repaired_at.unwrap_or(0).to_string(),
        fld("Repaired at").and_then(|x| x.split_whitespace().next().map(str::to_string)),
    );
    let uuid = |u: &Option<Option<sstkit_format::value::Uuid>>| match u {
        Some(Some(u)) => u.to_string(),
        _ => "--".to_string(),
    };
    check(
        "Originating host id",
        uuid(&s.originating_host_id),
        fld("Originating host id"),
    );
    check(
        "Pending repair",
        uuid(&s.pending_repair),
        fld("Pending repair"),
    );
    let intervals = s
        .commit_log_intervals
        .as_ref()
        .map(|iv| {
            iv.iter()
                .map(|(a, b)| format!("{}={}", clp(a), clp(b)))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default();
    check(
        "Replay positions covered",
        format!("{{{intervals}}}"),
        fld("Replay positions covered"),
    );
    check(
        "totalColumnsSet",
        s.total_columns_set.unwrap_or(0).to_string(),
        fld("totalColumnsSet"),
    );
    check(
        "totalRows",
        s.total_rows.unwrap_or(0).to_string(),
        fld("totalRows"),
    );
    let mut drops: BTreeMap<i64, i64> = BTreeMap::new();
    for b in &s.tombstone_drop_time.bins {
        *drops.entry(b.time).or_default() += b.count;
    }
    let ours: Vec<(i64, i64)> = drops.into_iter().collect();
    check(
        "Estimated tombstone drop times",
        format!("{ours:?}"),
        v.tables
            .get("Estimated tombstone drop times")
            .map(|t| format!("{t:?}")),
    );
    let nonzero = |hist: &Histogram| -> Vec<(i64, i64)> {
        hist.buckets().into_iter().filter(|b| b.1 > 0).collect()
    };
    check(
        "Partition Size",
        format!("{:?}", nonzero(&s.estimated_partition_size)),
        v.tables.get("Partition Size").map(|t| format!("{t:?}")),
    );
    check(
        "Column Count",
        format!("{:?}", nonzero(&s.estimated_cells_count)),
        v.tables.get("Column Count").map(|t| format!("{t:?}")),
    );
    check(
        "Local token space coverage",
        value_text(
            &Value::Double(s.token_space_coverage.unwrap_or(f64::NAN)),
            Form::Str,
        ),
        fld("Local token space coverage"),
    );
    match comp.cardinality() {
        Some(c) if c.exact => check(
            "Estimated cardinality",
            c.estimate.to_string(),
            fld("Estimated cardinality"),
        ),
        other => check(
            "Estimated cardinality",
            format!("not exact/decoded: {other:?}"),
            None,
        ),
    }
    check(
        "EncodingStats minTTL",
        h.min_ttl.to_string(),
        fld("EncodingStats minTTL").and_then(|x| x.split_whitespace().next().map(str::to_string)),
    );
    check(
        "EncodingStats minLocalDeletionTime",
        h.min_local_deletion_time.to_string(),
        fld("EncodingStats minLocalDeletionTime")
            .and_then(|x| num(&x))
            .map(|x| x.to_string()),
    );
    check(
        "EncodingStats minTimestamp",
        h.min_timestamp.to_string(),
        fld("EncodingStats minTimestamp")
            .and_then(|x| num(&x))
            .map(|x| x.to_string()),
    );
    check(
        "KeyType",
        h.partition_key_type_string.clone(),
        fld("KeyType"),
    );
    check(
        "ClusteringTypes",
        format!("[{}]", h.clustering_type_strings.join(", ")),
        fld("ClusteringTypes"),
    );
    let cols = |cs: &[ColumnDef]| {
        cs.iter()
            .map(|c| format!("{}:{}", c.name, c.type_string))
            .collect::<BTreeSet<_>>()
    };
    let theirs_cols = |k: &str| {
        fld(k)
            .map(|s| split_columns(&s).into_iter().collect::<BTreeSet<_>>())
            .map(|s| format!("{s:?}"))
    };
    check(
        "StaticColumns",
        format!("{:?}", cols(&h.static_columns)),
        theirs_cols("StaticColumns"),
    );
    check(
        "RegularColumns",
        format!("{:?}", cols(&h.regular_columns)),
        theirs_cols("RegularColumns"),
    );
    check(
        "IsTransient",
        s.is_transient.unwrap_or(false).to_string(),
        fld("IsTransient"),
    );
    Some((diffs, n))
}

/// Split `a:T1, b:MapType(X,Y)` on the top-level `, ` separators.
fn split_columns(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        if depth == 0 && c == ',' && chars.get(i + 1) == Some(&' ') {
            out.push(std::mem::take(&mut cur));
            i += 2;
            continue;
        }
        cur.push(c);
        i += 1;
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[test]
fn fixtures_agree_with_sstablemetadata() {
    let dir = fixtures_dir();
    let Ok(rd) = std::fs::read_dir(&dir) else {
        eprintln!("skipping: no fixtures at {}", dir.display());
        return;
    };
    let mut cases: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    let (mut compared, mut fields) = (0, 0);
    let mut all = Vec::new();
    for c in &cases {
        let Some((diffs, n)) = compare_case(c) else {
            continue;
        };
        compared += 1;
        fields += n;
        let name = c
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("?")
            .to_string();
        all.extend(diffs.into_iter().map(|d| format!("{name}: {d}")));
    }
    eprintln!(
        "sstablemetadata: {compared} cases, {fields} fields compared, {} disagreements",
        all.len()
    );
    assert!(compared > 0, "no fixture case with sstablemetadata.txt");
    assert!(all.is_empty(), "{}", all.join("\n"));
}

#[test]
fn viewer_parser() {
    let v = parse_viewer(
        "SSTable: x\nPartitioner: p\nMinimum timestamp: 11/14/2023 22:13:20 (1700000000000464)\n\
         Partition Size: \n   Size (bytes) | Count  (%)  Histogram \n   17 (17 B)    |     1 (  1) .\n\
         1109 (1.1 kB) |    23 ( 74) OOO\n   Percentiles\n   50th      258 (258 B)\nStaticColumns: \n",
    );
    assert_eq!(v.fields["Partitioner"], "p");
    assert_eq!(num(&v.fields["Minimum timestamp"]), Some(1700000000000464));
    assert_eq!(v.tables["Partition Size"], vec![(17, 1)]);
    assert_eq!(v.fields["StaticColumns"], "");
    assert_eq!(
        split_columns("a:X, b:M(Y, Z), c:W"),
        vec!["a:X", "b:M(Y, Z)", "c:W"]
    );
}
