//! `--reverse`: reversed partition reads and dumps (issue 5).
//!
//! * Dumps: for every fixture (BIG and BTI) and every intact row-format
//!   (`ma`..`oa`, Scylla `mc`/`md`/`me`) corpus sstable, `dump-data --reverse` equals the
//!   forward dump reversed, computed here from the forward output, in the
//!   ndjson, sstabledump and text formats (positions included). The
//!   transformation: the static row and partition deletion stay first; rows
//!   and range tombstones come in reverse order; a tombstone start bound
//!   becomes an end bound of the same inclusiveness and vice versa, a
//!   boundary swaps its sides and its two deletion times. In the scylla
//!   JSON a range-tombstone change at `(key, w)` to `T` becomes one at
//!   `(key, -w)` to the tombstone that was in effect *before* it.
//! * Coverage asserted: descending clustering, static rows, range
//!   tombstones open across promoted-index blocks, partitions with and
//!   without promoted index.
//! * Reads: for sampled partitions and the slices of `tests/read.rs`,
//!   `read --reverse` equals the forward `read` reversed; with `--limit N`
//!   the first N rows of that (the last N of the slice), a tombstone open
//!   after the N-th row closed at its key.
//! * IO (wide fixtures, the large-partition corpus set): a whole partition
//!   reversed reads at most 10% more bytes than forward (Data.db: the same
//!   chunks); `--reverse --limit 10` reads only the last blocks; a reversed
//!   slice reads the blocks of the forward one.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::read::{
    args_of, chunk_len, clustering_types, corpus_sstables, counter, elements, key_raw, read, s,
    sample, slices, stats, wide_fixtures, widest_indexed_pages, HUGE,
};
use crate::util::{corpus, data_files, sstkit};

// ---------------------------------------------------------------------------
// The expected reversal.

fn is_change(e: &Value) -> bool {
    e["type"] == "range-tombstone-change"
}

/// Scylla-JSON clustering elements reversed (module docs).
fn reverse_elements(els: &[Value]) -> Vec<Value> {
    let mut before = Vec::with_capacity(els.len());
    let mut cur = json!({});
    for e in els {
        before.push(cur.clone());
        if is_change(e) {
            cur = e["tombstone"].clone();
        }
    }
    els.iter()
        .zip(before)
        .rev()
        .map(|(e, b)| {
            let mut e = e.clone();
            if is_change(&e) {
                let w = e["weight"].as_i64().unwrap_or(0);
                e["weight"] = json!(-w);
                e["tombstone"] = b;
            }
            e
        })
        .collect()
}

/// A scylla-JSON partition reversed.
fn reverse_scylla(p: &Value) -> Value {
    let mut p = p.clone();
    if let Some(els) = p.get("clustering_elements").and_then(Value::as_array) {
        let r = reverse_elements(els);
        p["clustering_elements"] = Value::Array(r);
    }
    p
}

/// The first `n` rows of a (reversed) partition: a tombstone open after the
/// n-th row is closed at its key.
fn limit_scylla(p: &Value, n: usize) -> Value {
    let mut p = p.clone();
    let els = elements(&p).to_vec();
    let mut out = Vec::new();
    let mut rows = 0;
    let mut open = json!({});
    for e in &els {
        if rows == n {
            break;
        }
        out.push(e.clone());
        if is_change(e) {
            open = e["tombstone"].clone();
        } else if e["type"] == "clustering-row" {
            rows += 1;
            if rows == n && open != json!({}) {
                out.push(
                    json!({"type": "range-tombstone-change", "key": e["key"].clone(),
                    "weight": 1, "tombstone": {}}),
                );
            }
        }
    }
    let o = p.as_object_mut().unwrap();
    if out.is_empty() {
        o.remove("clustering_elements");
    } else {
        o.insert("clustering_elements".into(), Value::Array(out));
    }
    p
}

/// An sstabledump document reversed (as `oracle-diff --reverse` does it,
/// positions kept).
fn reverse_sstabledump(doc: &Value) -> Value {
    let parts = doc.as_array().cloned().unwrap_or_default();
    Value::Array(
        parts
            .into_iter()
            .map(|mut p| {
                let Some(rows) = p.get("rows").and_then(Value::as_array).cloned() else {
                    return p;
                };
                let (statics, others): (Vec<Value>, Vec<Value>) =
                    rows.into_iter().partition(|r| r["type"] == "static_block");
                let mut out = statics;
                for mut r in others.into_iter().rev() {
                    let o = r.as_object_mut().unwrap();
                    if o["type"] == "range_tombstone_bound" {
                        if let Some(v) = o.remove("start") {
                            o.insert("end".into(), v);
                        } else if let Some(v) = o.remove("end") {
                            o.insert("start".into(), v);
                        }
                    } else if o["type"] == "range_tombstone_boundary" {
                        let (st, en) = (o.remove("start"), o.remove("end"));
                        if let (Some(st), Some(en)) = (st, en) {
                            o.insert("start".into(), en);
                            o.insert("end".into(), st);
                        }
                    }
                    out.push(r);
                }
                p["rows"] = Value::Array(out);
                p
            })
            .collect(),
    )
}

/// A text-format marker line's bound kind and deletions reversed.
fn reverse_marker_line(l: &str) -> String {
    let Some(i) = l.find(" Marker ") else {
        return l.to_string();
    };
    let (head, rest) = l.split_at(i + " Marker ".len());
    let Some(k) = rest.find('(') else {
        return l.to_string();
    };
    let kind = match &rest[..k] {
        "INCL_START_BOUND" => "INCL_END_BOUND",
        "INCL_END_BOUND" => "INCL_START_BOUND",
        "EXCL_START_BOUND" => "EXCL_END_BOUND",
        "EXCL_END_BOUND" => "EXCL_START_BOUND",
        "EXCL_END_INCL_START_BOUNDARY" => "INCL_END_EXCL_START_BOUNDARY",
        "INCL_END_EXCL_START_BOUNDARY" => "EXCL_END_INCL_START_BOUNDARY",
        other => other,
    };
    let body = &rest[k..];
    let Some(at) = body.rfind(")@") else {
        return l.to_string();
    };
    let (vals, dels) = body.split_at(at + 2);
    // Boundary deletions: `mfda/ldt-mfda/ldt` (both parts `-?\d+/-?\d+`).
    let swapped = dels
        .char_indices()
        .filter(|&(j, c)| c == '-' && j > 0 && dels.as_bytes()[j - 1] != b'/')
        .map(|(j, _)| j)
        .find(|&j| dels[..j].contains('/') && dels[j + 1..].contains('/'))
        .map(|j| format!("{}-{}", &dels[j + 1..], &dels[..j]));
    format!("{head}{kind}{vals}{}", swapped.as_deref().unwrap_or(dels))
}

/// The text output reversed: per partition (a run of lines with the same
/// `[key]` prefix), the deletion and static lines first, the other lines in
/// reverse order with their markers reversed.
fn reverse_text(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let prefix = |l: &str| l.split('@').next().unwrap_or("").to_string();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let p = prefix(lines[i]);
        let mut j = i;
        while j < lines.len() && prefix(lines[j]) == p {
            j += 1;
        }
        let group = &lines[i..j];
        let is_head =
            |l: &&str| (!l.contains(" Row[") && !l.contains(" Marker ")) || l.contains("]: STATIC");
        out.extend(group.iter().filter(|l| is_head(l)).map(|l| l.to_string()));
        out.extend(
            group
                .iter()
                .filter(|l| !is_head(l))
                .rev()
                .map(|l| reverse_marker_line(l)),
        );
        i = j;
    }
    let mut s = out.join("\n");
    if text.ends_with('\n') {
        s.push('\n');
    }
    s
}

// ---------------------------------------------------------------------------
// Dumps.

/// What the dumps checked hold (coverage).
#[derive(Debug, Default)]
struct Coverage {
    sstables: usize,
    partitions: usize,
    desc: usize,
    statics: usize,
    rt_changes: usize,
    with_pi: usize,
    without_pi: usize,
    /// Promoted-index blocks that end inside a range tombstone.
    open_across_blocks: usize,
}

fn ndjson(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("ndjson line"))
        .collect()
}

/// Partitions with and without promoted index, and blocks ending inside a
/// range tombstone.
fn index_coverage(sst: &Path, cov: &mut Coverage) {
    let r = sstkit(["dump-index", "--promoted-index", "-o", "ndjson", &s(sst)]);
    if r.code != 0 {
        return;
    }
    for e in ndjson(&r.stdout) {
        match e["promoted_index"]["blocks"].as_u64() {
            Some(n) if n > 0 => {
                cov.with_pi += 1;
                cov.open_across_blocks +=
                    e["promoted_index"]["entries"].as_array().map_or(0, |b| {
                        b.iter()
                            .filter(|x| x.get("end_open_marker").is_some_and(|m| !m.is_null()))
                            .count()
                    });
            }
            _ => cov.without_pi += 1,
        }
    }
}

/// Compare the reversed dumps of `sst` with the forward ones reversed.
/// `false` when the forward dump fails (not decodable).
fn check_dump(sst: &Path, cov: &mut Coverage, failures: &mut Vec<String>) -> bool {
    let p = s(sst);
    let fwd = sstkit(["dump-data", "-o", "ndjson", &p]);
    if fwd.code != 0 {
        return false;
    }
    let rev = sstkit(["dump-data", "-o", "ndjson", "--reverse", &p]);
    if rev.code != 0 {
        failures.push(format!(
            "{p}: dump-data --reverse exit {}: {}",
            rev.code, rev.stderr
        ));
        return true;
    }
    let (f, r) = (ndjson(&fwd.stdout), ndjson(&rev.stdout));
    cov.sstables += 1;
    cov.partitions += f.len();
    if p.contains("_desc") {
        cov.desc += f.len();
    }
    for x in &f {
        if x.get("static_row").is_some() {
            cov.statics += 1;
        }
        cov.rt_changes += elements(x).iter().filter(|e| is_change(e)).count();
    }
    index_coverage(sst, cov);
    if f.len() != r.len() {
        failures.push(format!(
            "{p}: {} partitions forward, {} reversed",
            f.len(),
            r.len()
        ));
        return true;
    }
    for (a, b) in f.iter().zip(&r) {
        let want = reverse_scylla(a);
        if &want != b {
            let (we, ge) = (elements(&want), elements(b));
            let at = we.iter().zip(ge).position(|(x, y)| x != y);
            failures.push(format!(
                "{p} key {}: ndjson differs at element {at:?} ({} vs {} elements):\n  want {}\n  got  {}",
                a["key"]["raw"],
                we.len(),
                ge.len(),
                at.map(|i| we[i].to_string()).unwrap_or_default(),
                at.map(|i| ge[i].to_string()).unwrap_or_default()
            ));
            return true;
        }
    }
    // sstabledump: the document reversed as oracle-diff --reverse does.
    let fwd = sstkit(["dump-data", "-o", "sstabledump", &p]);
    let rev = sstkit(["dump-data", "-o", "sstabledump", "--reverse", &p]);
    if fwd.code != 0 || rev.code != 0 {
        failures.push(format!("{p}: sstabledump exit {} / {}", fwd.code, rev.code));
        return true;
    }
    let fd: Value = serde_json::from_str(&fwd.stdout).expect("sstabledump JSON");
    let rd: Value = serde_json::from_str(&rev.stdout).expect("sstabledump --reverse JSON");
    if reverse_sstabledump(&fd) != rd {
        failures.push(format!("{p}: sstabledump --reverse differs"));
    }
    // sstabledump-lines: one partition per line, same content.
    let rl = sstkit(["dump-data", "-o", "sstabledump-lines", "--reverse", &p]);
    let lines: Vec<Value> = rl
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("sstabledump -l line"))
        .collect();
    if rl.code != 0 || Value::Array(lines) != rd {
        failures.push(format!("{p}: sstabledump-lines --reverse differs"));
    }
    // Text.
    let ft = sstkit(["dump-data", "-o", "text", &p]);
    let rt = sstkit(["dump-data", "-o", "text", "--reverse", &p]);
    if rt.code != 0 || reverse_text(&ft.stdout) != rt.stdout {
        failures.push(format!("{p}: text --reverse differs"));
    }
    true
}

/// Every fixture sstable, BIG and BTI.
fn all_fixtures() -> Vec<PathBuf> {
    crate::util::fixture_cases()
        .iter()
        .flat_map(|c| data_files(c))
        .collect()
}

#[test]
fn reversed_dumps_of_the_fixtures() {
    let mut cov = Coverage::default();
    let mut failures = Vec::new();
    for sst in all_fixtures() {
        assert!(
            check_dump(&sst, &mut cov, &mut failures),
            "{}",
            sst.display()
        );
    }
    eprintln!("fixtures: {cov:?}");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(cov.sstables >= 30, "{cov:?}");
    assert!(
        cov.desc > 0 && cov.statics > 0 && cov.rt_changes > 50,
        "{cov:?}"
    );
    assert!(cov.with_pi > 10 && cov.without_pi > 10, "{cov:?}");
    assert!(cov.open_across_blocks > 20, "{cov:?}");
}

/// Corpus sets that are corrupt by design (MANIFEST.md): `--reverse` may
/// fail on them (exit 3), never crash.
fn is_corrupt_set(dir: &Path) -> bool {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    [
        "broken_",
        "bad",
        "corrupt-",
        "invalid",
        "integrity_check",
        "empty_index",
    ]
    .iter()
    .any(|p| name.contains(p))
        || matches!(
            name.as_str(),
            "mismatched_timestamp"
                | "zero_sized_histogram"
                | "compression-premature-eof"
                | "incompatible_serialized_type"
                | "wrongrange"
                | "static_column"
                | "static_with_clustering"
                | "bigsummary"
        )
}

/// Every row-format Data.db of the corpus (`ma`..`oa`; Scylla `mc`..`me`).
fn corpus_row_format() -> Vec<PathBuf> {
    let Some(root) = corpus() else {
        return Vec::new();
    };
    let mut v = Vec::new();
    for origin in ["cassandra", "scylladb"] {
        let Ok(rd) = std::fs::read_dir(root.join(origin)) else {
            continue;
        };
        let mut sets: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
        sets.sort();
        for set in sets {
            for f in data_files(&set) {
                let n = f.file_name().unwrap().to_string_lossy().into_owned();
                let version = n.get(..2).unwrap_or("");
                if ("ma"..="oa").contains(&version) {
                    v.push(f);
                }
            }
        }
    }
    v
}

#[test]
fn reversed_dumps_of_the_corpus() {
    let ssts = corpus_row_format();
    if ssts.is_empty() {
        return;
    }
    let mut cov = Coverage::default();
    let mut failures = Vec::new();
    let (mut checked, mut undecodable, mut corrupt) = (0, 0, 0);
    for sst in &ssts {
        if is_corrupt_set(sst.parent().unwrap()) {
            corrupt += 1;
            for args in [vec!["-o", "ndjson"], vec!["-o", "sstabledump"]] {
                let mut a = vec!["dump-data", "--reverse"];
                a.extend(args);
                let p = s(sst);
                a.push(&p);
                let r = sstkit(&a);
                assert!(
                    r.code == 0 || r.code == 3,
                    "{a:?}: exit {} {}",
                    r.code,
                    r.stderr
                );
            }
            continue;
        }
        if check_dump(sst, &mut cov, &mut failures) {
            checked += 1;
        } else {
            undecodable += 1;
        }
    }
    eprintln!(
        "corpus: {checked} sstables checked, {undecodable} not decodable, {corrupt} corrupt: {cov:?}"
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(checked > 100, "{checked}");
    assert!(cov.with_pi > 10, "{cov:?}");
}

// ---------------------------------------------------------------------------
// Reads with slices and limits.

/// `read --reverse` equals the forward `read` reversed, for the sampled
/// partitions and slices of `sst`; returns the slices compared.
fn check_reads(sst: &Path, failures: &mut Vec<String>) -> usize {
    let r = sstkit(["dump-data", "-o", "ndjson", &s(sst)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let parts: Vec<Value> = ndjson(&r.stdout)
        .into_iter()
        .map(|mut v| {
            v.as_object_mut().unwrap().remove("sstable");
            v
        })
        .collect();
    let types = clustering_types(sst);
    let mut n = 0;
    let mut cmp = |what: String, want: Value, got: Option<Value>| {
        n += 1;
        if got.as_ref() != Some(&want) {
            failures.push(format!(
                "{} {what}:\n  want {}\n  got  {}",
                sst.display(),
                want.get("clustering_elements").unwrap_or(&Value::Null),
                got.map(|g| g.get("clustering_elements").cloned().unwrap_or(Value::Null))
                    .unwrap_or_default()
            ));
        }
    };
    for p in sample(&parts) {
        let key = p["key"]["raw"].as_str().unwrap().to_string();
        let els = elements(p);
        let huge = els.len() > HUGE;
        let rev = reverse_scylla(p);
        // The whole partition, and its last rows.
        if !huge {
            let (got, _) = read(sst, &key, &["--reverse".into()]);
            cmp(format!("key {key} whole"), rev.clone(), got);
        }
        for l in [0usize, 1, 10] {
            let (got, _) = read(
                sst,
                &key,
                &["--reverse".into(), "--limit".into(), l.to_string()],
            );
            cmp(format!("key {key} --limit {l}"), limit_scylla(&rev, l), got);
        }
        if types.is_empty() {
            continue;
        }
        let keys: Vec<Vec<Vec<u8>>> = els
            .iter()
            .map(|e| crate::read::components(key_raw(e)))
            .collect();
        for (lo, hi, limit) in slices(els, &keys) {
            let Some(args) = args_of(&types, lo.as_ref(), hi.as_ref()) else {
                continue;
            };
            let open_ended = lo.is_none() || hi.is_none();
            if huge && open_ended {
                // The forward read of the whole range would be slow to compare.
                continue;
            }
            let (fwd, _) = read(sst, &key, &args);
            let Some(fwd) = fwd else {
                cmp(format!("key {key} {args:?} (forward)"), json!({}), None);
                continue;
            };
            let mut want = reverse_scylla(&fwd);
            let mut rargs = args.clone();
            rargs.push("--reverse".into());
            if let Some(l) = limit {
                want = limit_scylla(&want, l);
                rargs.push("--limit".into());
                rargs.push(l.to_string());
            }
            let (got, _) = read(sst, &key, &rargs);
            cmp(format!("key {key} {rargs:?}"), want, got);
        }
    }
    n
}

#[test]
fn reversed_reads_equal_forward_reads_reversed() {
    let mut ssts = all_fixtures();
    ssts.extend(corpus_sstables());
    let mut failures = Vec::new();
    let mut n = 0;
    for sst in &ssts {
        n += check_reads(sst, &mut failures);
    }
    eprintln!("{} sstables: {n} reversed reads compared", ssts.len());
    assert!(n > 500, "{n}");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// ---------------------------------------------------------------------------
// IO.

/// Run `read` with `--io-stats=json`; the stats lines (open, then one per key).
fn read_stats(sst: &Path, args: &[&str]) -> Vec<Value> {
    let p = s(sst);
    let mut a = vec![
        "read",
        "--clustering-order",
        "-o",
        "ndjson",
        "--io-stats=json",
    ];
    a.extend_from_slice(args);
    a.push(&p);
    let r = sstkit(&a);
    assert_eq!(r.code, 0, "{a:?}: {}", r.stderr);
    stats(&r.stderr)
}

/// Wide fixtures plus the corpus large partitions: (Data.db, compressed).
fn io_sstables() -> Vec<(PathBuf, bool)> {
    let mut v = wide_fixtures();
    if let Some(root) = corpus() {
        for f in data_files(&root.join("scylladb/large_partition")) {
            let n = f.file_name().unwrap().to_string_lossy().into_owned();
            if n.starts_with("mc-") || n.starts_with("md-") || n.starts_with("me-") {
                let compressed = f
                    .with_file_name(n.replace("-Data.db", "-CompressionInfo.db"))
                    .exists();
                v.push((f, compressed));
            }
        }
    }
    v
}

#[test]
fn whole_partition_reversed_reads_at_most_10_percent_more() {
    let mut checked = 0;
    for (sst, compressed) in io_sstables() {
        let (key, _, blocks, _) = widest_indexed_pages(&sst);
        let fwd = read_stats(&sst, &["--key-hex", &key]);
        let rev = read_stats(&sst, &["--reverse", "--key-hex", &key]);
        let (f, r) = (&fwd[1], &rev[1]);
        let ctx = format!(
            "{} ({} blocks):\n  fwd {f}\n  rev {r}",
            sst.display(),
            blocks.len()
        );
        assert_eq!(f["plan"]["rows"], r["plan"]["rows"], "{ctx}");
        assert_eq!(f["plan"]["markers"], r["plan"]["markers"], "{ctx}");
        let (fb, rb) = (
            f["total"]["bytes"].as_u64().unwrap(),
            r["total"]["bytes"].as_u64().unwrap(),
        );
        assert!(rb * 10 <= fb * 11, "{rb} > 1.10 × {fb}: {ctx}");
        // Data.db: every chunk decompressed once; at most one unit more.
        assert!(
            counter(r, "data", "chunks_decompressed") <= counter(f, "data", "chunks_decompressed"),
            "{ctx}"
        );
        assert!(
            counter(r, "data", "bytes") <= counter(f, "data", "bytes") + 4096,
            "{ctx}"
        );
        if compressed {
            assert!(counter(r, "data", "chunks_decompressed") > 0, "{ctx}");
        }
        eprintln!(
            "{}: forward {fb} bytes ({} data), reversed {rb} bytes ({} data)",
            sst.display(),
            counter(f, "data", "bytes"),
            counter(r, "data", "bytes")
        );
        checked += 1;
    }
    assert!(checked >= 4, "{checked}");
}

#[test]
fn reversed_limit_reads_only_the_last_blocks() {
    let unit = 4096u64;
    let mut checked = 0;
    for (sst, compressed) in io_sstables() {
        let (key, pos, blocks, _) = widest_indexed_pages(&sst);
        let n = blocks.len();
        if n < 4 {
            continue;
        }
        // Cold, then warm (the header and the index blocks cached).
        let ops = read_stats(
            &sst,
            &[
                "--reverse",
                "--limit",
                "10",
                "--key-hex",
                &key,
                "--key-hex",
                &key,
            ],
        );
        assert_eq!(ops.len(), 3, "open + 2 reads");
        let (cold, warm) = (&ops[1], &ops[2]);
        let ctx = format!(
            "{} ({n} blocks):\n  cold {cold}\n  warm {warm}",
            sst.display()
        );
        for op in [cold, warm] {
            assert_eq!(op["plan"]["rows"], 10, "{ctx}");
            assert_eq!(op["plan"]["block_range"], json!([0, n - 1]), "{ctx}");
        }
        // The extent of the last two blocks.
        let off = |b: &Value| b["offset"].as_u64().unwrap();
        let width = |b: &Value| b["width"].as_u64().unwrap();
        let start = pos + off(&blocks[n - 2]);
        let end = pos + off(&blocks[n - 1]) + width(&blocks[n - 1]);
        if compressed {
            let chunk = chunk_len(&sst);
            let want = (end - 1) / chunk - start / chunk + 1;
            let got = counter(warm, "data", "chunks_decompressed");
            assert!(got <= want, "{got} chunks > {want}: {ctx}");
            // Cold: plus the header's chunk (static row) at most.
            assert!(
                counter(cold, "data", "chunks_decompressed") <= want + 1,
                "{ctx}"
            );
        } else {
            let extent = end.div_ceil(unit) * unit - start / unit * unit;
            let bytes = counter(warm, "data", "bytes");
            assert!(bytes <= extent, "{bytes} bytes > {extent}: {ctx}");
            assert!(counter(cold, "data", "bytes") <= extent + unit, "{ctx}");
        }
        // Warm: one Data.db read, nothing from Index.db.
        assert!(counter(warm, "data", "reads") <= 2, "{ctx}");
        assert_eq!(counter(warm, "index", "reads"), 0, "{ctx}");
        // Far less than the partition.
        let whole = read_stats(&sst, &["--reverse", "--key-hex", &key]);
        assert!(
            counter(warm, "data", "bytes") * 4 < counter(&whole[1], "data", "bytes"),
            "{ctx}"
        );
        checked += 1;
    }
    assert!(checked >= 4, "{checked}");
}

#[test]
fn reversed_slices_read_the_blocks_of_the_forward_read() {
    let mut checked = 0;
    for (sst, _) in io_sstables() {
        let (key, _, blocks, _) = widest_indexed_pages(&sst);
        let types = clustering_types(&sst);
        let n = blocks.len();
        if n < 8 {
            continue;
        }
        let (_, a) = crate::read::row_block(&blocks, &types, n / 3);
        let (_, b) = crate::read::row_block(&blocks, &types, n / 3 + 3);
        let bounds = ["--from", a.as_str(), "--to", b.as_str()];
        let mut fa: Vec<&str> = bounds.to_vec();
        fa.extend(["--key-hex", &key]);
        let mut ra = fa.clone();
        ra.push("--reverse");
        let (f, r) = (read_stats(&sst, &fa), read_stats(&sst, &ra));
        let (f, r) = (&f[1], &r[1]);
        let ctx = format!("{}:\n  fwd {f}\n  rev {r}", sst.display());
        assert_eq!(f["plan"]["block_range"], r["plan"]["block_range"], "{ctx}");
        assert_eq!(f["plan"]["rows"], r["plan"]["rows"], "{ctx}");
        assert!(
            counter(r, "data", "chunks_decompressed") <= counter(f, "data", "chunks_decompressed"),
            "{ctx}"
        );
        assert!(
            counter(r, "data", "bytes") <= counter(f, "data", "bytes") + 4096,
            "{ctx}"
        );
        checked += 1;
    }
    assert!(checked >= 4, "{checked}");
}

#[test]
fn reverse_flags_and_errors() {
    let sst = data_files(&crate::util::fixtures().join("nb_range_tombstones"))[0].clone();
    let p = s(&sst);
    let r = sstkit(["dump-data", "-o", "ndjson", &p]);
    let key = ndjson(&r.stdout)[0]["key"]["raw"]
        .as_str()
        .unwrap()
        .to_string();
    // --naive cannot be reversed.
    let r = sstkit([
        "read",
        "--clustering-order",
        "--key-hex",
        &key,
        "--reverse",
        "--naive",
        &p,
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    // BTI: through Partitions.db / Rows.db, like BIG.
    let da = data_files(&crate::util::fixtures().join("da_range_tombstones"))[0].clone();
    let f = sstkit([
        "read",
        "--clustering-order",
        "-o",
        "ndjson",
        "--key-hex",
        &key,
        &s(&da),
    ]);
    let r = sstkit([
        "read",
        "--clustering-order",
        "-o",
        "ndjson",
        "--key-hex",
        &key,
        "--reverse",
        &s(&da),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        ndjson(&r.stdout),
        ndjson(&f.stdout)
            .iter()
            .map(reverse_scylla)
            .collect::<Vec<_>>()
    );
    // dump-data --reverse with key, token-range, exclude and limit
    // selections: the forward selection, each partition reversed.
    let all = ndjson(&sstkit(["dump-data", "-o", "ndjson", &p]).stdout);
    for sel in [
        vec!["--key-hex", key.as_str()],
        vec!["--limit", "2"],
        vec!["--token-range=-4000000000000000000,4000000000000000000"],
        vec!["--exclude-key", "5"],
    ] {
        let mut fa = vec!["dump-data", "-o", "ndjson"];
        fa.extend(sel.iter().copied());
        fa.push(&p);
        let mut ra = fa.clone();
        ra.insert(1, "--reverse");
        let (f, r) = (sstkit(&fa), sstkit(&ra));
        assert_eq!(r.code, 0, "{ra:?}: {}", r.stderr);
        let want: Vec<Value> = ndjson(&f.stdout).iter().map(reverse_scylla).collect();
        assert_eq!(ndjson(&r.stdout), want, "{ra:?}");
        assert!(want.len() <= all.len());
    }
    // --keys-only: the keys, as forward.
    let f = sstkit(["dump-data", "--keys-only", "-o", "ndjson", &p]);
    let r = sstkit(["dump-data", "--keys-only", "--reverse", "-o", "ndjson", &p]);
    assert_eq!(f.stdout, r.stdout);
    // --tombstones-only: the deletions of the reversed partitions.
    let f = sstkit(["dump-data", "--tombstones-only", "-o", "ndjson", &p]);
    let r = sstkit([
        "dump-data",
        "--tombstones-only",
        "--reverse",
        "-o",
        "ndjson",
        &p,
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let want: Vec<Value> = ndjson(&f.stdout).iter().map(reverse_scylla).collect();
    assert_eq!(ndjson(&r.stdout), want);
    // --io-stats shows the reversed read's plan.
    let ops = read_stats(&sst, &["--reverse", "--key-hex", &key]);
    assert_eq!(ops[1]["result"], "found");
    assert!(ops[1]["plan"]["rows"].as_u64().unwrap() > 0);
}

/// The `--io-stats=json` counters of a dump-data run: component → counters.
fn dump_stats(sst: &Path, reverse: bool) -> Value {
    let p = s(sst);
    // One thread: the counters of one pass (threads re-read chunks at unit edges).
    let mut a = vec!["dump-data", "-j1", "-o", "ndjson", "--io-stats=json"];
    if reverse {
        a.push("--reverse");
    }
    a.push(&p);
    let r = sstkit(&a);
    assert_eq!(r.code, 0, "{a:?}: {}", r.stderr);
    stats(&r.stderr).pop().expect("io stats")["components"].clone()
}

#[test]
fn reversed_dumps_read_the_data_of_the_forward_dump() {
    let mut checked = 0;
    for sst in all_fixtures() {
        let (f, r) = (dump_stats(&sst, false), dump_stats(&sst, true));
        let ctx = format!("{}:\n  fwd {f}\n  rev {r}", sst.display());
        let get = |v: &Value, c: &str, k: &str| v[c][k].as_u64().unwrap_or(0);
        if s(&sst).contains("-bti-") {
            // BTI: each partition's key is looked up (its chunk may be
            // decompressed once more); the bytes read stay those of the scan.
            assert!(
                get(&r, "data", "bytes") * 10 <= get(&f, "data", "bytes") * 11,
                "{ctx}"
            );
        } else {
            // BIG: every Data.db byte and chunk once, as forward; Index.db once.
            assert_eq!(get(&r, "data", "bytes"), get(&f, "data", "bytes"), "{ctx}");
            assert_eq!(
                get(&r, "data", "chunks_decompressed"),
                get(&f, "data", "chunks_decompressed"),
                "{ctx}"
            );
            let index_len = std::fs::metadata(s(&sst).replace("-Data.db", "-Index.db"))
                .unwrap()
                .len();
            assert!(
                get(&r, "index", "bytes") <= index_len.div_ceil(4096) * 4096,
                "{ctx}"
            );
        }
        checked += 1;
    }
    assert!(checked > 40, "{checked}");
}
