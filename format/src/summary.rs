//! Summary.db (BIG format): a sample of Index.db for binary search.
//!
//! `shared/docs/sstable-format.md` §5; C\*
//! `o.a.c/io/sstable/indexsummary/IndexSummary.java` (`IndexSummarySerializer`),
//! `IndexSummaryBuilder.java`; Scylla `sstables/types.hh` (`summary_ka`),
//! `sstables/sstables.cc` (summary parse/write).
//!
//! ```text
//! offset  field                  type
//! 0       min_index_interval     i32
//! 4       offset_count           i32      number of entries
//! 8       entries_size           i64      bytes of offsets table + entries
//! 16      sampling_level         i32      1..=128 (BASE_SAMPLING_LEVEL 128)   ka+ only
//! 20      size_at_full_sampling  i32                                         ka+ only
//! 24      offsets                u32 LE × offset_count   entry i, from the start of the offsets table
//! ..      entries                (key bytes, index_position u64 LE) × offset_count
//! ..      first_key              int-bytes
//! ..      last_key               int-bytes
//! ..      [ka/la only: trailing segment-boundary data, ignored]
//! ```
//!
//! `jb` (Cassandra 2.0, before `hasSamplingLevel`) has no sampling fields:
//! the offsets table starts at byte 16, and Cassandra reads the summary as
//! fully sampled (level 128, size at full sampling = entry count).
//!
//! NOTE (§5): offsets and positions are little-endian (copies of in-memory
//! buffers); everything else is big-endian. The key of entry `i` spans from
//! `offsets[i]` to the next offset (or `entries_size`) minus the 8-byte position.

use std::cmp::Ordering;

use crate::component::Component;
use crate::cur::Cur;
use crate::error::Result;
use crate::version::Features;

/// The fixed header (24 bytes; 16 for `jb`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SummaryHeader {
    /// `min_index_interval`: index entries per sample at full sampling.
    pub min_index_interval: u32,
    /// Number of entries (`offset_count`).
    pub offset_count: u32,
    /// Bytes of the offsets table plus the entries.
    pub entries_size: u64,
    /// Downsampling level, 1..=128 (`None` for `jb`, which does not store it).
    pub sampling_level: Option<u32>,
    /// Entry count the summary would have at full sampling (`None` for `jb`).
    pub size_at_full_sampling: Option<u32>,
}

impl SummaryHeader {
    /// `BASE_SAMPLING_LEVEL`.
    pub const BASE_SAMPLING_LEVEL: u32 = 128;

    /// The sampling level in effect: the stored one, or full sampling (128)
    /// for `jb`, as Cassandra assumes when reading a summary without one.
    pub fn level(&self) -> u32 {
        self.sampling_level.unwrap_or(Self::BASE_SAMPLING_LEVEL)
    }

    /// Bytes of the header: 24, or 16 without the sampling fields (`jb`).
    pub fn byte_len(&self) -> u64 {
        if self.sampling_level.is_some() {
            24
        } else {
            16
        }
    }

    /// Index entries between two samples: `ceil(128 / sampling_level × min_index_interval)`.
    pub fn effective_interval(&self) -> u64 {
        let level = self.level().max(1) as u64;
        (Self::BASE_SAMPLING_LEVEL as u64 * self.min_index_interval as u64).div_ceil(level)
    }
}

/// One sample: a partition key and where its entry is in Index.db.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryEntry {
    /// The serialized partition key.
    pub key: Vec<u8>,
    /// Offset of the key's entry in Index.db.
    pub index_position: u64,
}

/// A decoded Summary.db.
#[derive(Debug, Clone)]
pub struct Summary {
    /// The header.
    pub header: SummaryHeader,
    /// The samples, in partition order.
    pub entries: Vec<SummaryEntry>,
    /// The sstable's first partition key.
    pub first_key: Vec<u8>,
    /// The sstable's last partition key.
    pub last_key: Vec<u8>,
    /// Bytes after `last_key` (the `ka`/`la` segment-boundary trailer), ignored.
    pub trailing_bytes: usize,
}

impl Summary {
    /// Decode a whole Summary.db of an sstable with these features (the
    /// header has the sampling fields when `summary_sampling_level`).
    pub fn parse(bytes: &[u8], f: &Features) -> Result<Summary> {
        let mut cur = Cur::new(bytes, Component::Summary, 0);
        let header = Self::parse_header(&mut cur, f.summary_sampling_level)?;
        let n = header.offset_count as usize;

        // Offsets table and entries, as one region of entries_size bytes.
        let mut region = cur.split(header.entries_size, "summary entries")?;
        let table = region.clone();
        let mut offsets = Vec::with_capacity(n);
        for _ in 0..n {
            offsets.push(region.u32_le("summary offsets")? as u64);
        }
        let table_len = 4 * n as u64;
        let mut entries = Vec::with_capacity(n);
        for i in 0..n {
            let start = offsets.get(i).copied().unwrap_or(0);
            let end = offsets.get(i + 1).copied().unwrap_or(header.entries_size);
            let at = |c: &Cur<'_>, msg: String| {
                let mut c = c.clone();
                // Point the error at offsets[i] itself.
                let _ = c.seek(4 * i, "summary offsets");
                c.bad("summary offsets", msg)
            };
            // NOTE: offsets[0] == 4 * offset_count (§5); later ones must grow
            // by at least the 8-byte position.
            if i == 0 && start != table_len {
                return Err(at(
                    &table,
                    format!("offsets[0] = {start}, expected {table_len}"),
                ));
            }
            if end < start.saturating_add(8) || end > header.entries_size {
                return Err(at(
                    &table,
                    format!(
                        "entry {i} spans {start}..{end}, not a key plus a position within \
                         {} bytes",
                        header.entries_size
                    ),
                ));
            }
            // The region cursor is at `start` exactly when offsets are contiguous.
            if region.pos() as u64 != start {
                return Err(at(
                    &table,
                    format!(
                        "offsets[{i}] = {start} but entry {i} starts at {}",
                        region.pos()
                    ),
                ));
            }
            let key = region
                .bytes_len(end - start - 8, "summary entry key")?
                .to_vec();
            let index_position = region.u64_le("summary entry position")?;
            entries.push(SummaryEntry {
                key,
                index_position,
            });
        }
        if !region.is_empty() {
            return Err(region.bad(
                "summary entries",
                format!("{} bytes after the last entry", region.remaining()),
            ));
        }
        let first_key = cur.int_bytes("summary first key")?.to_vec();
        let last_key = cur.int_bytes("summary last key")?.to_vec();
        let summary = Summary {
            header,
            entries,
            first_key,
            last_key,
            trailing_bytes: cur.remaining(),
        };
        summary.check_positions(bytes)?;
        Ok(summary)
    }

    fn parse_header(cur: &mut Cur<'_>, has_sampling: bool) -> Result<SummaryHeader> {
        let non_neg = |cur: &mut Cur<'_>, what: &'static str| -> Result<u32> {
            let at = cur.clone();
            let v = cur.i32(what)?;
            u32::try_from(v).map_err(|_| at.bad(what, format!("negative value {v}")))
        };
        let min_index_interval = non_neg(cur, "summary min index interval")?;
        let offset_count = non_neg(cur, "summary offset count")?;
        let at = cur.clone();
        let entries_size = cur.i64("summary entries size")?;
        let entries_size = u64::try_from(entries_size).map_err(|_| {
            at.bad(
                "summary entries size",
                format!("negative size {entries_size}"),
            )
        })?;
        let (sampling_level, size_at_full_sampling) = if has_sampling {
            let at = cur.clone();
            let level = non_neg(cur, "summary sampling level")?;
            if !(1..=SummaryHeader::BASE_SAMPLING_LEVEL).contains(&level) {
                return Err(at.bad(
                    "summary sampling level",
                    format!("sampling level {level} not in 1..=128"),
                ));
            }
            let full = non_neg(cur, "summary size at full sampling")?;
            (Some(level), Some(full))
        } else {
            (None, None)
        };
        // Each entry needs a 4-byte offset and an 8-byte position at least.
        let mut probe = cur.clone();
        probe.count(offset_count as u64, 12, "summary offset count")?;
        if entries_size < 12 * offset_count as u64 {
            return Err(at.bad(
                "summary entries size",
                format!("{entries_size} bytes cannot hold {offset_count} entries"),
            ));
        }
        Ok(SummaryHeader {
            min_index_interval,
            offset_count,
            entries_size,
            sampling_level,
            size_at_full_sampling,
        })
    }

    fn check_positions(&self, bytes: &[u8]) -> Result<()> {
        for (i, w) in self.entries.windows(2).enumerate() {
            if w[1].index_position <= w[0].index_position {
                let at = self.header.byte_len() + 4 * (i as u64 + 1);
                let cur = Cur::new(bytes, Component::Summary, at);
                return Err(cur.bad(
                    "summary entry position",
                    format!(
                        "entry {} index position {} does not follow {}",
                        i + 1,
                        w[1].index_position,
                        w[0].index_position
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Check the `ka`/`la`/`jb` trailer of `bytes` (the Summary.db this was
    /// parsed from): the segment boundaries of Index.db and Data.db, each a
    /// disk access mode name (`writeUTF`) optionally followed by an `i32`
    /// count and that many `i64` boundaries, the second optionally followed
    /// by 4 more bytes (every form seen in Cassandra and Scylla files; `ka`+
    /// files whose segments have two or more boundaries always have them). The
    /// summary proper does not depend on it, but a trailer that does not
    /// parse means the file was cut short or damaged. An absent trailer
    /// (Scylla writes none) passes.
    pub fn check_trailer(&self, bytes: &[u8]) -> Result<()> {
        let start = bytes.len() - self.trailing_bytes.min(bytes.len());
        let t = &bytes[start..];
        if t.is_empty() || trailer_parses(t, self.header.sampling_level.is_some()) {
            return Ok(());
        }
        Err(Cur::new(bytes, Component::Summary, start as u64).bad(
            "summary trailer",
            format!(
                "the {} bytes after the last key are not the Index.db and Data.db segment \
                 boundaries: Summary.db is cut short or damaged",
                t.len()
            ),
        ))
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when the summary has no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Binary search for the last entry whose key is `<=` the target.
    /// `cmp(entry_key)` orders an entry's key relative to the target (use
    /// [`crate::token::Partitioner::compare_decorated`] with the target as the
    /// second argument). `None` when every entry is after the target (the key,
    /// if present, is then before the first sample: scan Index.db from 0).
    pub fn floor(&self, mut cmp: impl FnMut(&[u8]) -> Ordering) -> Option<usize> {
        let n = self
            .entries
            .partition_point(|e| cmp(&e.key) != Ordering::Greater);
        n.checked_sub(1)
    }

    /// The Index.db byte range to scan for keys sampled by entry `i`: from its
    /// position up to the next entry's position (`None`: to the end of Index.db).
    pub fn index_range(&self, i: usize) -> Option<(u64, Option<u64>)> {
        let start = self.entries.get(i)?.index_position;
        Some((start, self.entries.get(i + 1).map(|e| e.index_position)))
    }
}

/// End of a `writeUTF` disk access mode name (lowercase letters and `_`) at `at`.
fn mode_name_end(t: &[u8], at: usize) -> Option<usize> {
    let len = u16::from_be_bytes([*t.get(at)?, *t.get(at + 1)?]) as usize;
    let name = t.get(at + 2..at + 2 + len)?;
    let ok = !name.is_empty() && name.iter().all(|b| b.is_ascii_lowercase() || *b == b'_');
    ok.then_some(at + 2 + len)
}

/// End of an `i32` count and that many `i64` boundaries at `at`.
fn boundaries_end(t: &[u8], at: usize) -> Option<usize> {
    let n = i32::from_be_bytes(t.get(at..at + 4)?.try_into().ok()?);
    let end = usize::try_from(n)
        .ok()?
        .checked_mul(8)?
        .checked_add(at + 4)?;
    (end <= t.len()).then_some(end)
}

/// Whether `t` is two segments (name, optional boundaries), the second
/// followed by 4 more bytes when `ka`+ (`suffixed`) and either segment has
/// two or more boundaries (every such `ka`/`la` file in the Cassandra and
/// Scylla test data has them, so a trailer without them was cut short),
/// optionally otherwise, and nothing else.
fn trailer_parses(t: &[u8], suffixed: bool) -> bool {
    // (end, whether the segment at `at` has two or more boundaries).
    let with_bounds = |at: usize| {
        let counted = boundaries_end(t, at).map(|end| (end, end >= at + 4 + 16));
        [Some((at, false)), counted].into_iter().flatten()
    };
    let Some(first) = mode_name_end(t, 0) else {
        return false;
    };
    with_bounds(first).any(|(at, many_first)| {
        mode_name_end(t, at).is_some_and(|second| {
            with_bounds(second).any(|(end, many_second)| {
                let suffix = end + 4 == t.len();
                let many = suffixed && (many_first || many_second);
                suffix || (end == t.len() && !many)
            })
        })
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::index::IndexReader;
    use crate::test_support as corpus;
    use proptest::prelude::*;

    /// §5 worked example: `nb-1-big-Summary.db`.
    const NB: &[u8] = &[
        0, 0, 0, 0x80, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0x0d, 0, 0, 0, 0x80, 0, 0, 0, 1, 4, 0, 0,
        0, 0x30, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0x30, 0, 0, 0, 1, 0x34,
    ];

    fn parse(b: &[u8]) -> Result<Summary> {
        Summary::parse(b, &crate::version::Version::parse("nb").unwrap().features())
    }

    fn build(keys: &[(&[u8], u64)]) -> Vec<u8> {
        let n = keys.len();
        let mut offsets = Vec::new();
        let mut entries = Vec::new();
        for (k, p) in keys {
            offsets.extend_from_slice(&((4 * n + entries.len()) as u32).to_le_bytes());
            entries.extend_from_slice(k);
            entries.extend_from_slice(&p.to_le_bytes());
        }
        let mut out = Vec::new();
        out.extend_from_slice(&128i32.to_be_bytes());
        out.extend_from_slice(&(n as i32).to_be_bytes());
        out.extend_from_slice(&((offsets.len() + entries.len()) as i64).to_be_bytes());
        out.extend_from_slice(&128i32.to_be_bytes());
        out.extend_from_slice(&(n as i32).to_be_bytes());
        out.extend_from_slice(&offsets);
        out.extend_from_slice(&entries);
        for k in [keys.first(), keys.last()] {
            let k = k.map(|k| k.0).unwrap_or(b"");
            out.extend_from_slice(&(k.len() as i32).to_be_bytes());
            out.extend_from_slice(k);
        }
        out
    }

    #[test]
    fn doc_example() {
        let s = parse(NB).unwrap();
        assert_eq!(s.header.min_index_interval, 128);
        assert_eq!(s.header.entries_size, 13);
        assert_eq!(s.header.effective_interval(), 128);
        assert_eq!(
            s.entries,
            vec![SummaryEntry {
                key: b"0".to_vec(),
                index_position: 0
            }]
        );
        assert_eq!(
            (s.first_key.as_slice(), s.last_key.as_slice()),
            (&b"0"[..], &b"4"[..])
        );
        assert_eq!(s.trailing_bytes, 0);
    }

    #[test]
    fn floor_and_ranges() {
        let b = build(&[(b"b", 0), (b"d", 100), (b"f", 250)]);
        let s = parse(&b).unwrap();
        let floor = |t: &[u8]| s.floor(|k| k.cmp(t));
        assert_eq!(floor(b"a"), None);
        assert_eq!(floor(b"b"), Some(0));
        assert_eq!(floor(b"c"), Some(0));
        assert_eq!(floor(b"d"), Some(1));
        assert_eq!(floor(b"z"), Some(2));
        assert_eq!(s.index_range(1), Some((100, Some(250))));
        assert_eq!(s.index_range(2), Some((250, None)));
        assert_eq!(s.index_range(3), None);
    }

    #[test]
    fn rejects_bad_offsets_and_positions() {
        let good = build(&[(b"b", 0), (b"d", 100)]);
        // offsets[1] leaving no room for entry 0's position.
        let mut b = good.clone();
        b[28] = 12;
        assert!(parse(&b).is_err());
        // offsets[1] past the entries.
        let mut b = good.clone();
        b[28] = 200;
        assert!(parse(&b).is_err());
        // offsets[0] not right after the table.
        let mut b = good.clone();
        b[24] = 9;
        assert!(parse(&b).is_err());
        // Decreasing index positions.
        let b = build(&[(b"b", 100), (b"d", 0)]);
        let e = parse(&b).unwrap_err();
        assert!(e.to_string().contains("does not follow"), "{e}");
        // Huge count.
        let mut b = good.clone();
        b[4..8].copy_from_slice(&i32::MAX.to_be_bytes());
        assert!(parse(&b).is_err());
        // Sampling level 0.
        let mut b = good;
        b[16..20].copy_from_slice(&0i32.to_be_bytes());
        assert!(parse(&b).is_err());
    }

    /// `jb` has no sampling fields: the same summary without bytes 16..24.
    #[test]
    fn jb_header_has_no_sampling_level() {
        let jb = crate::version::Version::parse("jb").unwrap().features();
        let b = build(&[(b"b", 0), (b"d", 100), (b"f", 250)]);
        let mut old = b[..16].to_vec();
        old.extend_from_slice(&b[24..]);
        let s = Summary::parse(&old, &jb).unwrap();
        assert_eq!(s.header.sampling_level, None);
        assert_eq!(s.header.size_at_full_sampling, None);
        assert_eq!(
            (s.header.level(), s.header.effective_interval()),
            (128, 128)
        );
        assert_eq!(s.entries, parse(&b).unwrap().entries);
        assert_eq!(s.index_range(1), Some((100, Some(250))));
        // Read with the sampling fields, the jb bytes do not decode.
        assert!(parse(&old).is_err());
        // Decreasing positions are reported at the jb offsets table.
        let b = build(&[(b"b", 100), (b"d", 0)]);
        let mut old = b[..16].to_vec();
        old.extend_from_slice(&b[24..]);
        let e = Summary::parse(&old, &jb).unwrap_err();
        assert!(e.to_string().contains("does not follow"), "{e}");
    }

    #[test]
    fn empty_summary() {
        let b = build(&[]);
        let s = parse(&b).unwrap();
        assert!(s.is_empty());
        assert_eq!(s.floor(|_| Ordering::Less), None);
    }

    proptest! {
        #[test]
        fn random_and_truncated_inputs_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200),
                                                    cut in 0usize..48) {
            let _ = parse(&bytes);
            let _ = parse(&NB[..cut.min(NB.len())]);
            let mut b = NB.to_vec();
            if let Some(x) = b.get_mut(cut) { *x ^= bytes.first().copied().unwrap_or(1) }
            let _ = parse(&b);
        }
    }

    /// Each sample must point at an Index.db entry holding its key, and the
    /// first/last keys must be Index.db's (skipped for an empty Index.db).
    fn cross_check(s: &Summary, index: &[u8], f: &corpus::File) -> std::result::Result<(), String> {
        if index.is_empty() {
            return Ok(());
        }
        let mut r = IndexReader::new(index, f.features());
        let (mut next_sample, mut first, mut last) = (0, None, None);
        while let Some(e) = r.next().map_err(|e| e.to_string())? {
            if let Some(sample) = s.entries.get(next_sample) {
                if sample.index_position == e.offset {
                    if sample.key != e.key {
                        return Err(format!("sample {next_sample}: key differs from Index.db"));
                    }
                    next_sample += 1;
                }
            }
            first.get_or_insert_with(|| e.key.to_vec());
            last = Some(e.key.to_vec());
        }
        if next_sample != s.len() {
            return Err(format!(
                "only {next_sample} of {} samples found in Index.db",
                s.len()
            ));
        }
        if first.as_ref() != Some(&s.first_key) || last.as_ref() != Some(&s.last_key) {
            return Err("first/last key differ from Index.db".into());
        }
        Ok(())
    }

    /// Every Summary.db of the corpus decodes; its entry count equals the
    /// header's; first/last keys and every sampled position agree with Index.db.
    #[test]
    fn corpus_summary_files() {
        let files = corpus::files(|c| c == "Summary.db");
        if files.is_empty() {
            return;
        }
        let (mut row, mut legacy, mut corrupt_err, mut trailers) = (0, 0, 0, 0);
        let mut failures = Vec::new();
        let mut failed = std::collections::BTreeSet::new();
        for f in &files {
            let res = Summary::parse(&f.read(), &f.features()).map(|s| {
                assert_eq!(s.len(), s.header.offset_count as usize);
                let cross = f.read_sibling("Index.db").map(|i| cross_check(&s, &i, f));
                (s, cross)
            });
            match res {
                Ok((_, Some(Err(e)))) if !f.is_corrupt() => {
                    failures.push(format!("{}: {e}", f.path.display()))
                }
                Ok((s, _)) => {
                    if f.features().legacy_cells {
                        legacy += 1;
                    } else {
                        row += 1;
                    }
                    if s.trailing_bytes > 0 {
                        trailers += 1;
                        assert!(f.features().legacy_cells, "trailer in {}", f.path.display());
                    }
                }
                Err(e) if f.is_corrupt() => {
                    eprintln!("expected error in corrupt set: {}: {e}", f.path.display());
                    corrupt_err += 1;
                    failed.insert(corpus::short_name(f));
                }
                Err(e) => failures.push(format!("{}: {e}", f.path.display())),
            }
        }
        eprintln!(
            "Summary.db: {row} row-format + {legacy} jb/ka/la decoded ({trailers} with a legacy \
             trailer), {corrupt_err} corrupt-set errors, of {} files",
            files.len()
        );
        assert!(failures.is_empty(), "{failures:#?}");
        // The files MANIFEST.md marks corrupt that this check must reject.
        corpus::check_failures("Summary.db", &files, &failed, &[]);
    }

    #[test]
    fn legacy_trailers_parse_and_cut_ones_do_not() {
        // ka: Index.db "mmap" with one boundary, Data.db "mmap".
        let mut t = vec![0, 4];
        t.extend_from_slice(b"mmap");
        t.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4]);
        t.extend_from_slice(b"mmap");
        assert!(trailer_parses(&t, true));
        for cut in 1..t.len() {
            assert!(!trailer_parses(&t[..cut], true), "cut at {cut}");
        }
        // The 4-byte tail some compressed ka sstables have.
        let mut t4 = t.clone();
        t4.extend_from_slice(&[0x0e, 0xd6, 0x45, 0x42]);
        assert!(trailer_parses(&t4, true));
        assert!(!trailer_parses(&t4[..t4.len() - 1], true));
        // A huge boundary count is bounded by the bytes.
        let mut big = vec![0, 4];
        big.extend_from_slice(b"mmap");
        big.extend_from_slice(&[0x7f, 0xff, 0xff, 0xff]);
        assert!(!trailer_parses(&big, true));
    }

    /// The campaign's case (`sliced_mutation_reads`, ka, 92 → 88 bytes):
    /// Index.db "mmap" with two boundaries, Data.db "mmap", then the 4-byte
    /// tail; without the tail the rest still reads as a trailer, but a `ka`
    /// one with two boundaries always has it. `jb` never does.
    #[test]
    fn a_ka_trailer_with_two_boundaries_needs_its_tail() {
        let mut t = vec![0, 4];
        t.extend_from_slice(b"mmap");
        t.extend_from_slice(&[0, 0, 0, 2]);
        t.extend_from_slice(&0i64.to_be_bytes());
        t.extend_from_slice(&0x24i64.to_be_bytes());
        t.extend_from_slice(&[0, 4]);
        t.extend_from_slice(b"mmap");
        let mut whole = t.clone();
        whole.extend_from_slice(&[0x0e, 0xd6, 0x45, 0x42]);
        assert!(trailer_parses(&whole, true));
        assert!(!trailer_parses(&t, true), "ka without its tail");
        assert!(trailer_parses(&t, false), "jb");
    }
}
