//! The salvage campaign: seeded damage confined to one chunk of Data.db
//! (a compressed chunk, or a CRC.db chunk of an uncompressed file), with the
//! partition index intact, missing, damaged or another sstable's, and the
//! bloom filter present or not, on fixtures and on the corpus. For every case `scrub --mode skip`
//! (and `segregate` on every fourth case) must:
//!
//! * write every partition that does not overlap the damaged chunk, its dump
//!   identical to the intact sstable's;
//! * write no partition the intact sstable does not hold (no phantoms);
//! * write no partition that overlaps the damaged chunk as salvaged (its
//!   checksum failed), and what it writes is identical to the intact dump.
//!
//! The seed is fixed (override with `SSTKIT_SALVAGE_SEED`; more cases per
//! source with `SSTKIT_SALVAGE_CASES`), so failures reproduce.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering as AtOrd};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use sstkit_format::compression::CompressionInfo;
use sstkit_format::data::{Fragment, ScanReader};
use sstkit_format::schema::TableSchema;
use sstkit_format::{Component, Sstable};

use crate::corruption::{parse_salvage, run_limited, Rng};
use crate::util::{corpus, fixtures, scratch_dir};

/// One sstable of a source directory, and what it holds intact.
struct Intact {
    dir: PathBuf,
    /// The CREATE TABLE of a pre-3.0 sstable (passed with `--schema`).
    schema: Option<PathBuf>,
    /// File name prefix of its components (`nb-1-big-`).
    prefix: String,
    bti: bool,
    /// (key hex, uncompressed start, end) per partition, in file order.
    partitions: Vec<(String, u64, u64)>,
    /// `dump-data -o ndjson` by key hex (sstable path removed).
    dump: BTreeMap<String, Value>,
    /// (file range, uncompressed range) of each checksummed chunk.
    chunks: Vec<(Range<u64>, Range<u64>)>,
}

fn intact(data: &Path, schema: Option<PathBuf>) -> Option<Intact> {
    let mut sst = Sstable::open_path(data).ok()?;
    if let Some(p) = &schema {
        let cql = std::fs::read_to_string(p).ok()?;
        sst.set_table_schema(Arc::new(TableSchema::from_cql(&cql).ok()?));
    }
    let st = sst.statistics().ok()?;
    let header = sst.data_header(&st).ok()?;
    let mut r = ScanReader::new(&sst, &header).ok()?;
    let end_len = r.end_marker_len();
    let mut partitions = Vec::new();
    let mut cur: Option<(String, u64)> = None;
    while let Some(f) = r.next_fragment().expect("intact sstable decodes") {
        match f {
            Fragment::PartitionStart { key, position, .. } => {
                cur = Some((sstkit_commands::output::hex(key), position.0))
            }
            Fragment::PartitionEnd { position } => {
                if let Some((k, s)) = cur.take() {
                    partitions.push((k, s, position.0 + end_len));
                }
            }
            _ => {}
        }
    }
    let file_len = std::fs::metadata(data).ok()?.len();
    let chunks = if sst.has(Component::CompressionInfo) {
        let b = sst.read_component(Component::CompressionInfo).ok()?;
        let ci = CompressionInfo::parse(&b, &sst.features()).ok()?;
        let l = ci.chunk_length as u64;
        let offs = &ci.chunk_offsets;
        (0..offs.len())
            .map(|i| {
                let end = offs.get(i + 1).copied().unwrap_or(file_len);
                let u = i as u64 * l..((i as u64 + 1) * l).min(ci.data_length);
                (offs[i]..end, u)
            })
            .collect()
    } else if sst.has(Component::Crc) {
        let b = sst.read_component(Component::Crc).ok()?;
        let cs = u32::from_be_bytes(b.get(..4)?.try_into().ok()?) as u64;
        if cs == 0 {
            return None;
        }
        (0..file_len.div_ceil(cs))
            .map(|i| {
                let r = i * cs..((i + 1) * cs).min(file_len);
                (r.clone(), r)
            })
            .collect()
    } else {
        return None;
    };
    let mut args = vec!["dump-data", "-o", "ndjson", data.to_str()?];
    if let Some(p) = &schema {
        args.extend(["--schema", p.to_str()?]);
    }
    let d = crate::util::sstkit(args);
    assert_eq!(d.code, 0, "dump-data {}: {}", data.display(), d.stderr);
    let dump = parse_salvage(&d.stdout);
    assert_eq!(dump.len(), partitions.len(), "{}", data.display());
    let name = data.file_name()?.to_string_lossy().into_owned();
    Some(Intact {
        dir: data.parent()?.to_path_buf(),
        schema,
        prefix: name.trim_end_matches("Data.db").to_string(),
        bti: sst.features().trie_index,
        partitions,
        dump,
        chunks,
    })
}

/// Pre-3.0 corpus sets of the campaign and their tables (from the corpus
/// MANIFEST): the legacy cell format, read with `--schema`.
const LEGACY: [(&str, &str); 4] = [
    (
        "cassandra/legacy_ka_clust",
        "CREATE TABLE legacy_tables.legacy_ka_clust (pk text, ck text, val text, PRIMARY KEY (pk, ck));",
    ),
    (
        "cassandra/legacy_la_clust",
        "CREATE TABLE legacy_tables.legacy_la_clust (pk text, ck text, val text, PRIMARY KEY (pk, ck));",
    ),
    (
        "cassandra/legacy_jb_clust",
        "CREATE TABLE legacy_tables.legacy_jb_clust (pk text, ck text, val text, PRIMARY KEY (pk, ck));",
    ),
    (
        "scylladb/large_partition",
        "CREATE TABLE try1.data (t1 text, t2 text, t3 text, PRIMARY KEY (t1, t2));",
    ),
];

/// The sstables of the campaign: fixtures with several chunks, and corpus
/// sets with several chunks (when the corpus is here), with the schema file
/// of the pre-3.0 ones (written into `schemas`).
fn sources(schemas: &Path) -> Vec<(PathBuf, Option<PathBuf>)> {
    let mut v: Vec<(PathBuf, Option<PathBuf>)> = [
        "nb_clustering_nocompress",
        "da_clustering_nocompress",
        "nb_wide_desc",
        "nb_clustering_lz4_4k",
        "da_clustering",
        "oa_wide",
        "nb_clustering_snappy",
    ]
    .iter()
    .flat_map(|f| crate::util::data_files(&fixtures().join(f)))
    .map(|d| (d, None))
    .collect();
    if let Some(c) = corpus() {
        for set in [
            "cassandra/legacy_nb_clust",
            "cassandra/legacy_da_clust",
            "cassandra/legacy_mc_clust",
            "cassandra/legacy_oa_clust_counter",
            "scylladb/large_partition",
            "scylladb/3.x-zstd-multiple_chunks",
            "scylladb/3.x-uncompressed-filtering_and_forwarding_range_tombstones",
        ] {
            for d in crate::util::data_files(&c.join(set)) {
                let n = d.file_name().unwrap().to_string_lossy().into_owned();
                // Row-format sstables only (ka/la need a schema).
                if ["mc-", "md-", "me-", "na-", "nb-", "nc-", "oa-", "da-"]
                    .iter()
                    .any(|p| n.starts_with(p))
                {
                    v.push((d, None));
                }
            }
        }
        for (i, (set, cql)) in LEGACY.iter().enumerate() {
            let schema = schemas.join(format!("schema-{i}.cql"));
            std::fs::write(&schema, cql).expect("schema file");
            for d in crate::util::data_files(&c.join(set)) {
                let n = d.file_name().unwrap().to_string_lossy().into_owned();
                if ["ka-", "la-", "jb-"].iter().any(|p| n.contains(p)) {
                    v.push((d, Some(schema.clone())));
                }
            }
        }
    }
    v
}

/// How the index and filter of a case are left.
#[derive(Debug, Clone, Copy)]
enum IndexState {
    Intact,
    Missing,
    Damaged,
    /// The index files of another sstable of the same version.
    Foreign(usize),
    NoFilter,
}

#[derive(Debug, Clone)]
struct Case {
    source: usize,
    chunk: usize,
    /// File range changed, and how.
    range: Range<u64>,
    kind: &'static str,
    index: IndexState,
    segregate: bool,
    seed: u64,
}

fn make_cases(srcs: &[Intact], rng: &mut Rng, per_source: usize) -> Vec<Case> {
    let mut v = Vec::new();
    for (si, s) in srcs.iter().enumerate() {
        if s.chunks.len() < 2 {
            continue;
        }
        for n in 0..per_source {
            let chunk = rng.below(s.chunks.len() as u64) as usize;
            let fr = s.chunks[chunk].0.clone();
            let len = fr.end - fr.start;
            if len == 0 {
                continue;
            }
            let (kind, range) = match rng.below(5) {
                0 => {
                    let at = fr.start + rng.below(len);
                    ("bit flip", at..at + 1)
                }
                1 => {
                    let at = fr.start + rng.below(len);
                    ("byte run", at..(at + 1 + rng.below(64)).min(fr.end))
                }
                2 => {
                    let at = fr.start + rng.below(len);
                    ("zeroed page", at..(at + 4096).min(fr.end))
                }
                3 => {
                    let at = fr.start + rng.below(len);
                    ("length 0xFF..FF", at..(at + 8).min(fr.end))
                }
                _ => ("zeroed chunk", fr.clone()),
            };
            let foreign = srcs
                .iter()
                .position(|o| o.prefix == s.prefix && o.bti == s.bti && o.dir != s.dir);
            let index = match (n % 5, foreign) {
                (0, _) => IndexState::Intact,
                (1, _) => IndexState::Missing,
                (2, _) => IndexState::Damaged,
                (3, Some(f)) => IndexState::Foreign(f),
                _ => IndexState::NoFilter,
            };
            v.push(Case {
                source: si,
                chunk,
                range,
                kind,
                index,
                // Segregating a multi-megabyte partition is rendering, not salvage.
                segregate: n % 4 == 3 && s.chunks.last().is_some_and(|c| c.1.end < 1 << 20),
                seed: rng.next(),
            });
        }
    }
    v
}

static CASE_NO: AtomicUsize = AtomicUsize::new(0);

/// Totals over the campaign.
#[derive(Default, Debug)]
struct Tally {
    cases: u64,
    expected: u64,
    written: u64,
    phantoms: u64,
    damaged_written: u64,
    lost_intact: u64,
}

fn run_case(srcs: &[Intact], c: &Case, tally: &Mutex<Tally>) -> Result<(), String> {
    let s = &srcs[c.source];
    let n = CASE_NO.fetch_add(1, AtOrd::SeqCst);
    let dir = scratch_dir("salvage", &n.to_string());
    for e in std::fs::read_dir(&s.dir)
        .map_err(|e| e.to_string())?
        .flatten()
    {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with(&s.prefix) {
            std::fs::copy(e.path(), dir.join(&name)).map_err(|e| e.to_string())?;
        }
    }
    let comp = |suffix: &str| dir.join(format!("{}{suffix}", s.prefix));
    let mut rng = Rng(c.seed | 1);
    let data = comp("Data.db");
    let mut bytes = std::fs::read(&data).map_err(|e| e.to_string())?;
    let before = bytes.clone();
    for i in c.range.clone() {
        let i = i as usize;
        match c.kind {
            "bit flip" => bytes[i] ^= 1 << rng.below(8),
            "byte run" => bytes[i] = rng.next() as u8,
            "length 0xFF..FF" => bytes[i] = 0xff,
            _ => bytes[i] = 0,
        }
    }
    if bytes == before {
        return Ok(());
    }
    // Copies keep the corpus's read-only mode: replace, don't overwrite.
    let _ = std::fs::remove_file(&data);
    std::fs::write(&data, &bytes).map_err(|e| e.to_string())?;
    let index_files: &[&str] = if s.bti {
        &["Partitions.db", "Rows.db"]
    } else {
        &["Index.db", "Summary.db"]
    };
    match c.index {
        IndexState::Intact => {}
        IndexState::Missing => {
            for f in index_files {
                let _ = std::fs::remove_file(comp(f));
            }
        }
        IndexState::Damaged => {
            let p = comp(index_files[0]);
            if let Ok(mut b) = std::fs::read(&p) {
                if b.len() > 8 {
                    let at = rng.below(b.len() as u64 - 8) as usize;
                    for x in &mut b[at..at + 8] {
                        *x = rng.next() as u8;
                    }
                    let _ = std::fs::remove_file(&p);
                    std::fs::write(&p, &b).map_err(|e| e.to_string())?;
                }
            }
        }
        IndexState::Foreign(f) => {
            let o = &srcs[f];
            for suffix in index_files {
                let from = o.dir.join(format!("{}{suffix}", o.prefix));
                let _ = std::fs::remove_file(comp(suffix));
                std::fs::copy(from, comp(suffix)).map_err(|e| e.to_string())?;
            }
        }
        IndexState::NoFilter => {
            let _ = std::fs::remove_file(comp("Filter.db"));
        }
    }
    let out = dir.join("out");
    let mode = if c.segregate { "segregate" } else { "skip" };
    let mut args = vec![
        "scrub",
        "--mode",
        mode,
        "--salvage-format",
        "ndjson",
        "--output-dir",
        out.to_str().unwrap(),
        "-o",
        "json",
        data.to_str().unwrap(),
    ];
    if let Some(p) = &s.schema {
        args.extend(["--schema", p.to_str().unwrap()]);
    }
    let what = format!(
        "{}{}Data.db chunk {} {} {:?}, index {:?}, {mode}",
        s.dir.file_name().unwrap_or_default().to_string_lossy() + "/",
        s.prefix,
        c.chunk,
        c.kind,
        c.range,
        c.index
    );
    let r = run_limited(&args).map_err(|e| format!("{what}: {e}"))?;
    if !matches!(r.code, 0 | 1) {
        return Err(format!("{what}: scrub exit {}: {}", r.code, r.stderr));
    }
    let read = |suffix: &str| {
        std::fs::read_to_string(out.join(format!("{}{suffix}", s.prefix)))
            .map(|t| parse_salvage(&t))
            .unwrap_or_default()
    };
    let mut written = read("salvaged.ndjson");
    for (k, v) in read("segregated.ndjson") {
        written.insert(k, v);
    }
    let damaged = s.chunks[c.chunk].1.clone();
    let mut t = Tally {
        cases: 1,
        ..Tally::default()
    };
    let mut errors = Vec::new();
    let ranges: BTreeMap<&str, (u64, u64)> = s
        .partitions
        .iter()
        .map(|(k, a, b)| (k.as_str(), (*a, *b)))
        .collect();
    for (k, v) in &written {
        t.written += 1;
        match (s.dump.get(k), ranges.get(k.as_str())) {
            (None, _) | (_, None) => {
                t.phantoms += 1;
                errors.push(format!("phantom partition {k}"));
            }
            (Some(want), Some(&(a, b))) => {
                if a < damaged.end && damaged.start < b {
                    t.damaged_written += 1;
                    errors.push(format!(
                        "partition {k} ({a}..{b}) overlaps the damaged chunk {damaged:?} but was written"
                    ));
                } else if want != v {
                    t.damaged_written += 1;
                    errors.push(format!("partition {k} written with other content"));
                }
            }
        }
    }
    for (k, a, b) in &s.partitions {
        if *a < damaged.end && damaged.start < *b {
            continue;
        }
        t.expected += 1;
        if !written.contains_key(k) {
            t.lost_intact += 1;
            errors.push(format!(
                "partition {k} ({a}..{b}) lies outside the damaged chunk {damaged:?} but was not written"
            ));
        }
    }
    {
        let mut g = tally.lock().unwrap();
        g.cases += t.cases;
        g.expected += t.expected;
        g.written += t.written;
        g.phantoms += t.phantoms;
        g.damaged_written += t.damaged_written;
        g.lost_intact += t.lost_intact;
    }
    if errors.is_empty() {
        Ok(())
    } else {
        errors.truncate(5);
        Err(format!("{what}:\n  {}", errors.join("\n  ")))
    }
}

#[test]
fn salvage_campaign() {
    let seed: u64 = std::env::var("SSTKIT_SALVAGE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5a1_4a6e);
    let per_source: usize = std::env::var("SSTKIT_SALVAGE_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(12);
    let schemas = scratch_dir("salvage", "schemas");
    let srcs: Vec<Intact> = sources(&schemas)
        .into_iter()
        .filter_map(|(d, schema)| intact(&d, schema))
        .collect();
    assert!(srcs.len() >= 5, "the fixtures give at least 5 sources");
    let mut rng = Rng(seed);
    let cases = make_cases(&srcs, &mut rng, per_source);
    let tally = Mutex::new(Tally::default());
    let failures = Mutex::new(Vec::new());
    let next = AtomicUsize::new(0);
    std::thread::scope(|sc| {
        for _ in 0..2 {
            sc.spawn(|| loop {
                let i = next.fetch_add(1, AtOrd::SeqCst);
                let Some(c) = cases.get(i) else { break };
                if let Err(e) = run_case(&srcs, c, &tally) {
                    failures.lock().unwrap().push(e);
                }
            });
        }
    });
    let t = tally.into_inner().unwrap();
    let failures = failures.into_inner().unwrap();
    eprintln!(
        "salvage campaign: seed {seed:#x}, {} sources, {} cases; {t:?}",
        srcs.len(),
        cases.len()
    );
    assert!(t.cases > 0);
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        t.cases,
        failures.join("\n")
    );
}

/// Resynchronisation costs at most a small constant times a clean pass: on
/// sstables without index, filter or CRC.db (so every candidate start must
/// be found by scanning and confirmed by decoding), damaged in places, the
/// confirmations decode at most twice the data (plus a constant), and make
/// few attempts. Before the candidate checks, `legacy_nb_clust` damaged in
/// one chunk took 1,390 attempts (3.3 s in a release build) and wrote a
/// phantom partition; a path that re-decodes per candidate trips both bounds.
#[test]
fn resync_costs_a_linear_pass() {
    let mut srcs = crate::util::data_files(&fixtures().join("nb_clustering_nocompress"));
    srcs.extend(crate::util::data_files(&fixtures().join("nb_wide")));
    if let Some(c) = corpus() {
        for set in ["cassandra/legacy_nb_clust", "scylladb/large_partition"] {
            srcs.extend(
                crate::util::data_files(&c.join(set))
                    .into_iter()
                    .filter(|d| d.to_string_lossy().contains("/md-") || set.contains("legacy")),
            );
        }
    }
    let mut rng = Rng(0x11_4ea2);
    for data in srcs {
        let dir = scratch_dir("linear", &CASE_NO.fetch_add(1, AtOrd::SeqCst).to_string());
        let name = data.file_name().unwrap().to_string_lossy().into_owned();
        let prefix = name.trim_end_matches("Data.db");
        for e in std::fs::read_dir(data.parent().unwrap()).unwrap().flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            let keep = ["Data.db", "Statistics.db", "CompressionInfo.db", "TOC.txt"]
                .iter()
                .any(|s| n.ends_with(s));
            if n.starts_with(prefix) && keep {
                std::fs::copy(e.path(), dir.join(&n)).unwrap();
            }
        }
        let copy = dir.join(&name);
        let mut bytes = std::fs::read(&copy).unwrap();
        let len = bytes.len() as u64;
        let compressed = dir.join(format!("{prefix}CompressionInfo.db")).exists();
        // A damaged compressed chunk is skipped whole: two of them suffice.
        for _ in 0..if compressed { 2 } else { 24 } {
            let at = rng.below(len) as usize;
            let end = (at + 16).min(bytes.len());
            for b in &mut bytes[at..end] {
                *b = 0xff;
            }
        }
        let _ = std::fs::remove_file(&copy);
        std::fs::write(&copy, &bytes).unwrap();
        let r = run_limited(&[
            "scrub",
            "-o",
            "json",
            "--io-stats=json",
            copy.to_str().unwrap(),
        ])
        .unwrap();
        assert!(
            matches!(r.code, 0 | 1),
            "{name}: exit {}: {}",
            r.code,
            r.stderr
        );
        let doc: Value = serde_json::from_str(&r.stdout).unwrap();
        let rep = doc["sstables"]
            .as_object()
            .unwrap()
            .values()
            .next()
            .unwrap();
        let stats: Value = r
            .stderr
            .lines()
            .rev()
            .find_map(|l| serde_json::from_str(l).ok())
            .expect("io stats on stderr");
        let read = stats["components"]["data"]["bytes"].as_u64().unwrap();
        let data_len = rep["data_len"].as_u64().unwrap_or(len).max(len);
        let probe = rep["probe_bytes"].as_u64().unwrap();
        let attempts = rep["attempts"].as_u64().unwrap();
        eprintln!(
            "{name}: {len} bytes, {} resyncs, {} attempts, probe {probe}, Data.db read {read} ({:.2} passes)",
            rep["resyncs"],
            rep["attempts"],
            read as f64 / len as f64
        );
        assert!(
            rep["resyncs"].as_u64().unwrap() > 0,
            "{name}: the damage was found"
        );
        assert!(
            read <= 4 * len + (1 << 20),
            "{name}: scrub read {read} bytes of a {len}-byte Data.db"
        );
        assert!(
            attempts <= 16 + data_len / 1024,
            "{name}: {attempts} confirmation attempts for {data_len} bytes"
        );
        assert!(
            probe <= 2 * data_len + (2 << 20),
            "{name}: confirmations decoded {probe} bytes of {data_len}"
        );
    }
}
