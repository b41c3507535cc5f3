//! `sstkit write --from FILE (--schema schema.cql | --like SSTABLE) --output-dir DIR`:
//! an sstable from sstkit's own `dump-data -o ndjson` records (`-`: stdin).
//!
//! ```text
//! sstkit dump-data -o ndjson nb-1-big-Data.db > p.ndjson   # edit, filter, generate...
//! sstkit write --from p.ndjson --schema schema.cql --output-dir out --format-version da
//! sstkit dump-data -o ndjson nb-1-big-Data.db | sstkit write --from - --like nb-1-big-Data.db --output-dir out
//! ```
//!
//! Each line is one partition in the `dump-data` NDJSON form
//! (`docs/schemas/dump-data.schema.json`, `$defs/line`): keys and
//! clusterings from their `raw` hex, cell values parsed as their type's
//! literal (`value` strings are CQL literals or Cassandra's string form),
//! timestamps, TTLs, expiry and deletion times as printed (deletion times to
//! the second, as the dump shows them). The table's types come from
//! `--schema` (CREATE TYPE and CREATE TABLE statements) or from the
//! serialization header of `--like`'s sstable, which also gives the default
//! partitioner, version and compression; otherwise the partitioner is
//! Murmur3 and the version `oa`.
//!
//! A record is parsed from memory up to 8 MiB; a longer one (a large
//! partition) is parsed as it is read, one clustering element at a time, so
//! memory does not grow with the partition. For that, a record's `key`,
//! `tombstone` and `static_row` come before its `clustering_elements`, as
//! `dump-data` prints them: elements before the key are held until the
//! record ends, and a tombstone or static row after them is refused.
//!
//! Partitions must come in token order (as `dump-data` prints them); one
//! out of order is refused with its line number (exit 2), and nothing is
//! written: sort the input first. Counter cells are refused (their shards
//! are not a value that can be written back).
//!
//! Output (json default when stdout is not a terminal): `output`, `files`,
//! `version`, `compression`, `partitions`, `rows`, `data_bytes`,
//! `data_file_bytes`, `bytes`. `--io-stats` prints the reads of the `--like`
//! sstable (`docs/schemas/io-stats.schema.json`); a progress bar over the
//! records' bytes is drawn when stderr is a terminal.
//!
//! Exit status: 0 written; 2 usage (bad flags or
//! schema, a malformed or out-of-order line); 3 the input cannot be read or
//! the output written.

use std::io::{BufRead, Write};

use serde::de::DeserializeSeed;
use std::io::Read;

use serde_json::{json, Map, Value};
use sstkit_format::clustering::BoundKind;
use sstkit_format::data::model::cell_flags;
use sstkit_format::data::{DataPos, Fragment, LivenessInfo, MarkerDeletion, RowDeletion};
use sstkit_format::deletion::DeletionTime;
use sstkit_format::merge::{MCell, MColumnData, MMarker, MRow, MergedSchema};
use sstkit_format::read::OwnedClustering;
use sstkit_format::schema::{legacy_header, TableSchema};
use sstkit_format::types::CqlType;
use sstkit_format::value::parse_cql_literal;
use sstkit_format::write::bloom::filter_for;
use sstkit_format::write::{next_generation, KeptMetadata, SstableWriter, WriterOptions};
use sstkit_format::Version;

use crate::cli::{OutputFormat, WriteArgs};
use crate::progress::Progress;
use crate::writers::{create_error, Writer};
use crate::{CmdError, CmdResult, Outcome};

/// Run the command.
pub fn run(a: &WriteArgs, out: &mut dyn Write) -> CmdResult<Outcome> {
    let like = a.like.as_deref().map(Like::open).transpose()?;
    let w = Writer::parse(&a.writer)?;
    let version = match w.version {
        Some(v) => v,
        None => match &like {
            Some(l) if !l.version.features().legacy_cells && !l.version.is_scylla_only() => {
                l.version
            }
            _ => Version::parse("oa").map_err(|e| CmdError::Usage(e.kind.to_string()))?,
        },
    };
    let mut opts = WriterOptions::new(version);
    if let Some((c, chunk)) = like.as_ref().and_then(|l| l.compression.clone()) {
        opts.compression = c;
        opts.chunk_length = chunk;
    }
    if let Some(c) = w.compression.clone() {
        opts.compression = c;
    }
    if let Some(n) = w.chunk_length {
        opts.chunk_length = n;
    }
    if let Some(n) = w.column_index_size {
        opts.column_index_size = n;
    }
    let header = match (&like, &a.schema) {
        (Some(l), _) => l.header.clone(),
        (None, Some(path)) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| CmdError::Usage(format!("--schema {}: {e}", path.display())))?;
            let table = TableSchema::from_cql(&text)
                .map_err(|e| CmdError::Usage(format!("--schema {}: {}", path.display(), e.kind)))?;
            legacy_header(&table)
        }
        (None, None) => return Err(usage("--schema or --like is required")),
    };
    let features = version.features();
    let schema = MergedSchema::union(&[("schema", &header)], features)
        .map_err(|e| CmdError::Usage(e.kind.to_string()))?;
    let partitioner = match (&a.partitioner, &like) {
        (Some(p), _) => p.clone(),
        (None, Some(l)) => l.partitioner.clone(),
        (None, None) => "org.apache.cassandra.dht.Murmur3Partitioner".to_string(),
    };
    let kept = KeptMetadata {
        partitioner,
        ..Default::default()
    };
    crate::prepare_output_dir(&a.output_dir, &[])?;
    let source = Source::new(&a.from, &a.output_dir)?;
    let input = open_input(source.path())?;
    let lines = count_lines(input)?;
    let mut w = SstableWriter::create(
        &a.output_dir,
        next_generation(&a.output_dir)?,
        &header,
        kept,
        opts.clone(),
        filter_for(lines, opts.bloom_filter_fp_chance, &features),
    )
    .map_err(create_error)?;
    let input = open_input(source.path())?;
    let total = input.metadata().map_or(0, |m| m.len());
    let mut bar = Progress::new("write");
    let copied = write_records(&mut w, &schema, input, &source, |p| bar.set(p, total));
    bar.finish();
    copied?;
    let written = w.finish()?;
    if let (Some(f), Some(l)) = (a.io_stats, &like) {
        crate::output::iostats::print(f, &crate::sstable_label(&l.sst), &l.sst.io.stats());
    }
    let files: Vec<String> = written
        .files
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let fmt = crate::cli::text_at_terminal(a.output, OutputFormat::Text, OutputFormat::Json);
    if fmt == OutputFormat::Text {
        writeln!(
            out,
            "wrote {} ({} {}): {} partitions, {} rows, {} bytes of data ({} on disk), {} bytes in {} files",
            written.data_path.display(),
            version,
            opts.compression.name(),
            written.partitions,
            written.rows,
            written.data_length,
            written.data_file_length,
            written.total_bytes,
            files.len()
        )?;
    } else {
        let v = json!({
            "output": written.data_path.display().to_string(),
            "files": files,
            "version": version.as_str(),
            "compression": opts.compression.name(),
            "partitions": written.partitions,
            "rows": written.rows,
            "data_bytes": written.data_length,
            "data_file_bytes": written.data_file_length,
            "bytes": written.total_bytes,
        });
        let text = if fmt == OutputFormat::Ndjson {
            serde_json::to_string(&v)
        } else {
            serde_json::to_string_pretty(&v)
        }
        .map_err(|e| CmdError::Output(std::io::Error::other(e)))?;
        writeln!(out, "{text}")?;
    }
    Ok(Outcome::default())
}

/// Records up to this size are parsed from memory; a longer one (a large
/// partition) is parsed as it is read, one clustering element at a time.
const IN_MEMORY_RECORD: usize = 8 << 20;

/// Write each line of `input` as a partition; `progress` gets the bytes
/// consumed so far.
fn write_records(
    w: &mut SstableWriter,
    schema: &MergedSchema,
    input: std::fs::File,
    source: &Source,
    mut progress: impl FnMut(u64),
) -> CmdResult<()> {
    let mut input = Counting {
        inner: std::io::BufReader::with_capacity(1 << 16, input),
        bytes: 0,
        lines: 0,
    };
    let mut buf = Vec::new();
    loop {
        let line = input.lines + 1;
        buf.clear();
        if read_line_capped(&mut input, &mut buf, IN_MEMORY_RECORD)? == 0 {
            break;
        }
        if buf.trim_ascii().is_empty() {
            continue;
        }
        let mut failed = None;
        let record = Record {
            w: &mut *w,
            schema,
            failed: &mut failed,
        };
        let done = if buf.len() < IN_MEMORY_RECORD || buf.ends_with(b"\n") {
            // Checked once here, so that the parser need not check each string.
            let text = std::str::from_utf8(&buf)
                .map_err(|e| CmdError::Usage(format!("{} line {line}: {e}", source.name())))?;
            let mut de = serde_json::Deserializer::from_str(text);
            record.deserialize(&mut de).and_then(|()| de.end())
        } else {
            // Longer than IN_MEMORY_RECORD: the rest is parsed as it is read,
            // and the line must end after the record.
            let mut de = serde_json::Deserializer::from_reader(buf.as_slice().chain(&mut input));
            record.deserialize(&mut de).and_then(|()| {
                buf.clear();
                read_line_capped(&mut input, &mut buf, IN_MEMORY_RECORD)
                    .map_err(serde_json::Error::io)?;
                match buf.trim_ascii().is_empty() {
                    true => Ok(()),
                    false => Err(serde::de::Error::custom("trailing characters")),
                }
            })
        };
        if let Err(e) = done {
            let at = |m: String| CmdError::Usage(format!("{} line {line}: {m}", source.name()));
            return Err(match failed {
                Some(CmdError::Usage(m)) => at(m),
                Some(CmdError::Format(f))
                    if matches!(f.kind, sstkit_format::ErrorKind::BadValue(_)) =>
                {
                    at(f.kind.to_string())
                }
                Some(e) => e,
                None if e.is_io() => CmdError::from(std::io::Error::from(e)),
                None => at(e.to_string()),
            });
        }
        progress(input.bytes);
    }
    Ok(())
}

/// The lines of `input` (an upper bound of its records, to size the
/// filter), without holding a line.
fn count_lines(input: std::fs::File) -> CmdResult<u64> {
    let mut input = std::io::BufReader::with_capacity(1 << 16, input);
    let (mut lines, mut last) = (0u64, b'\n');
    loop {
        let buf = input.fill_buf()?;
        let Some(&end) = buf.last() else {
            break;
        };
        lines += buf.iter().filter(|&&b| b == b'\n').count() as u64;
        last = end;
        let n = buf.len();
        input.consume(n);
    }
    Ok(lines + u64::from(last != b'\n'))
}

/// Read up to and including the next newline into `buf`, but at most `cap`
/// bytes; the bytes read (0 at the end).
fn read_line_capped(
    input: &mut impl BufRead,
    buf: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<usize> {
    let start = buf.len();
    while buf.len() - start < cap {
        let avail = input.fill_buf()?;
        if avail.is_empty() {
            break;
        }
        let room = cap - (buf.len() - start);
        let take = avail.len().min(room);
        let (n, done) = match avail[..take].iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (take, false),
        };
        buf.extend_from_slice(&avail[..n]);
        input.consume(n);
        if done {
            break;
        }
    }
    Ok(buf.len() - start)
}

/// The input, counting the bytes and newlines consumed (for the progress
/// bar and the line of an error).
struct Counting<R> {
    inner: R,
    bytes: u64,
    lines: u64,
}

impl<R: BufRead> Read for Counting<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(out)?;
        self.bytes += n as u64;
        self.lines += out[..n].iter().filter(|&&b| b == b'\n').count() as u64;
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counting<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, n: usize) {
        if let Ok(buf) = self.inner.fill_buf() {
            let n = n.min(buf.len());
            self.bytes += n as u64;
            self.lines += buf[..n].iter().filter(|&&b| b == b'\n').count() as u64;
        }
        self.inner.consume(n);
    }
}

/// Keep `e` as the record's failure and give serde an error that stops the
/// parse (the command reports `e`, with its exit code).
fn fail<E: serde::de::Error>(slot: &mut Option<CmdError>, e: CmdError) -> E {
    let m = e.to_string();
    *slot = Some(e);
    E::custom(m)
}

/// One record, streamed: a clustering element is written as soon as it is
/// parsed, so memory holds one element, not the partition. The key, the
/// partition tombstone and the static row (all small) must come before
/// `clustering_elements`, as `dump-data` prints them.
struct Record<'a> {
    w: &'a mut SstableWriter,
    schema: &'a MergedSchema,
    failed: &'a mut Option<CmdError>,
}

impl<'de> serde::de::DeserializeSeed<'de> for Record<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Record<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a partition object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Record { w, schema, failed } = self;
        let (mut key, mut tombstone, mut static_row) = (None, None, None);
        // The range deletion open after elements written as parsed; elements
        // held until the record's end when its key comes after them.
        let mut open: Option<DeletionTime> = None;
        let mut held: Option<Vec<Value>> = None;
        while let Some(field) = map.next_key::<Field>()? {
            let (head, name) = match field {
                Field::Key => (&mut key, "key"),
                Field::Tombstone => (&mut tombstone, "tombstone"),
                Field::StaticRow => (&mut static_row, "static_row"),
                Field::Elements => {
                    if open.is_some() || held.is_some() {
                        return Err(fail(failed, usage("\"clustering_elements\" given twice")));
                    }
                    if key.is_none() {
                        held = Some(map.next_value()?);
                        continue;
                    }
                    let head = Head {
                        key: key.as_ref(),
                        tombstone: tombstone.as_ref(),
                        static_row: static_row.as_ref(),
                    };
                    head.write(w, schema).map_err(|e| fail(failed, e))?;
                    let mut o = DeletionTime::LIVE;
                    map.next_value_seed(Elements {
                        w: &mut *w,
                        schema,
                        open: &mut o,
                        failed: &mut *failed,
                    })?;
                    open = Some(o);
                    continue;
                }
                Field::Other => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                    continue;
                }
            };
            if open.is_some() {
                return Err(fail(
                    failed,
                    usage(format!(
                        "{name:?} comes after \"clustering_elements\": after the key, the \
                         tombstone and static row of a partition come first"
                    )),
                ));
            }
            *head = Some(map.next_value::<Value>()?);
        }
        let open = match open {
            Some(o) => o,
            None => {
                let head = Head {
                    key: key.as_ref(),
                    tombstone: tombstone.as_ref(),
                    static_row: static_row.as_ref(),
                };
                head.write(w, schema).map_err(|e| fail(failed, e))?;
                let mut o = DeletionTime::LIVE;
                for e in held.iter().flatten() {
                    write_element(w, schema, e, &mut o).map_err(|e| fail(failed, e))?;
                }
                o
            }
        };
        end_partition(w, open).map_err(|e| fail(failed, e))
    }
}

/// A record's field name, told apart without allocating it.
enum Field {
    Key,
    Tombstone,
    StaticRow,
    Elements,
    /// `sstable`, and anything else: skipped.
    Other,
}

impl<'de> serde::Deserialize<'de> for Field {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Field, D::Error> {
        struct Name;
        impl serde::de::Visitor<'_> for Name {
            type Value = Field;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a field name")
            }

            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Field, E> {
                Ok(match v {
                    "key" => Field::Key,
                    "tombstone" => Field::Tombstone,
                    "static_row" => Field::StaticRow,
                    "clustering_elements" => Field::Elements,
                    _ => Field::Other,
                })
            }
        }
        d.deserialize_identifier(Name)
    }
}

/// `clustering_elements`, each written as it is parsed; `open` is the range
/// deletion in force after the last one.
struct Elements<'a> {
    w: &'a mut SstableWriter,
    schema: &'a MergedSchema,
    open: &'a mut DeletionTime,
    failed: &'a mut Option<CmdError>,
}

impl<'de> serde::de::DeserializeSeed<'de> for Elements<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Elements<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an array of clustering elements")
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(e) = seq.next_element::<Value>()? {
            write_element(self.w, self.schema, &e, self.open).map_err(|e| fail(self.failed, e))?;
        }
        Ok(())
    }
}

/// What `--like SSTABLE` gives: the table's types, and the defaults of the
/// partitioner, version and compression.
struct Like {
    header: sstkit_format::statistics::SerializationHeader,
    partitioner: String,
    version: Version,
    compression: Option<(sstkit_format::write::Compression, u32)>,
    /// The sstable, kept for `--io-stats`.
    sst: sstkit_format::Sstable,
}

impl Like {
    fn open(path: &std::path::Path) -> CmdResult<Like> {
        let sst = crate::plan::inputs::open_one("--like", path)?;
        let st = crate::render::read_statistics(&sst)?;
        let mut header = sst.data_header(&st)?;
        // The records carry absolute times; the epochs as delta bases, as
        // for --schema, suit any of them.
        use sstkit_format::statistics::header::{DELETION_TIME_EPOCH, TIMESTAMP_EPOCH};
        header.min_timestamp = TIMESTAMP_EPOCH;
        header.min_local_deletion_time = DELETION_TIME_EPOCH;
        header.min_ttl = 0;
        header.raw_deltas = (0, 0, 0);
        Ok(Like {
            partitioner: st.validation.as_ref().map_or_else(
                || "org.apache.cassandra.dht.Murmur3Partitioner".to_string(),
                |v| v.partitioner.clone(),
            ),
            version: sst.version(),
            compression: sstkit_format::write::copy::source_compression(&sst)?,
            header,
            sst,
        })
    }
}

/// The records' file, or stdin copied to a temporary file in the output
/// directory (read twice: once to size the filter), removed on drop.
struct Source {
    path: std::path::PathBuf,
    spooled: bool,
}

impl Source {
    fn new(from: &std::path::Path, dir: &std::path::Path) -> CmdResult<Source> {
        if from != std::path::Path::new("-") {
            return Ok(Source {
                path: from.to_path_buf(),
                spooled: false,
            });
        }
        let path = dir.join(format!(".sstkit-write-stdin-{}.ndjson", std::process::id()));
        let src = Source {
            path,
            spooled: true,
        };
        let mut f = sstkit_format::write::pending::create(&src.path)?;
        std::io::copy(&mut std::io::stdin().lock(), &mut f)?;
        Ok(src)
    }

    fn path(&self) -> &std::path::Path {
        &self.path
    }

    fn name(&self) -> String {
        if self.spooled {
            "stdin".to_string()
        } else {
            self.path.display().to_string()
        }
    }
}

impl Drop for Source {
    fn drop(&mut self) {
        if self.spooled {
            sstkit_format::write::pending::remove(&self.path);
        }
    }
}

fn open_input(p: &std::path::Path) -> CmdResult<std::fs::File> {
    std::fs::File::open(p).map_err(|e| {
        CmdError::from(
            sstkit_format::Error::new(
                sstkit_format::ErrorKind::Io(e.kind(), e.to_string()),
                "input records",
            )
            .in_file(p),
        )
    })
}

fn usage(m: impl Into<String>) -> CmdError {
    CmdError::Usage(m.into())
}

fn unhex(s: &str) -> CmdResult<Vec<u8>> {
    let bad = || usage(format!("not hex: {s:?}"));
    let digit = |c: u8| (c as char).to_digit(16).ok_or_else(bad);
    let b = s.as_bytes();
    if !b.len().is_multiple_of(2) {
        return Err(bad());
    }
    b.chunks(2)
        .map(|p| Ok((digit(p[0])? * 16 + digit(p[1])?) as u8))
        .collect()
}

/// `YYYY-MM-DD HH:MM:SSz` (the dump's form) as seconds since the epoch.
fn epoch_seconds(s: &str) -> CmdResult<i64> {
    let b = s.as_bytes();
    let bad = || {
        usage(format!(
            "not a time of the form YYYY-MM-DD HH:MM:SSz: {s:?}"
        ))
    };
    if b.len() != 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b' ' || b[19] != b'z' {
        return Err(bad());
    }
    let n =
        |r: std::ops::Range<usize>| s.get(r).and_then(|x| x.parse::<i64>().ok()).ok_or_else(bad);
    let (y, m, d) = (n(0..4)?, n(5..7)?, n(8..10)?);
    let (hh, mm, ss) = (n(11..13)?, n(14..16)?, n(17..19)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || hh > 23 || mm > 59 || ss > 60 {
        return Err(bad());
    }
    // Days from the civil date (proleptic Gregorian calendar).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Ok((era * 146_097 + doe - 719_468) * 86_400 + hh * 3600 + mm * 60 + ss)
}

fn int(v: &Value, what: &str) -> CmdResult<i64> {
    v.get(what)
        .and_then(Value::as_i64)
        .ok_or_else(|| usage(format!("no integer {what:?} in {v}")))
}

fn text<'v>(v: &'v Value, what: &str) -> CmdResult<&'v str> {
    v.get(what)
        .and_then(Value::as_str)
        .ok_or_else(|| usage(format!("no string {what:?} in {v}")))
}

/// `$TOMBSTONE` (`{}` = none).
fn tombstone(v: Option<&Value>) -> CmdResult<DeletionTime> {
    match v {
        Some(t) if t.as_object().is_some_and(|o| !o.is_empty()) => Ok(DeletionTime {
            marked_for_delete_at: int(t, "timestamp")?,
            local_deletion_time: epoch_seconds(text(t, "deletion_time")?)?,
        }),
        _ => Ok(DeletionTime::LIVE),
    }
}

/// `"3600s"`.
fn ttl(s: &str) -> CmdResult<i64> {
    s.strip_suffix('s')
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| usage(format!("not a TTL: {s:?}")))
}

/// A clustering's `raw`: 2-byte-length-prefixed components.
fn clustering(raw: &str) -> CmdResult<Vec<Option<Vec<u8>>>> {
    let b = unhex(raw)?;
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let len = b
            .get(i..i + 2)
            .map(|x| u16::from_be_bytes([x[0], x[1]]) as usize)
            .ok_or_else(|| usage(format!("truncated clustering {raw:?}")))?;
        let v = b
            .get(i + 2..i + 2 + len)
            .ok_or_else(|| usage(format!("truncated clustering {raw:?}")))?;
        out.push(Some(v.to_vec()));
        i += 2 + len;
    }
    Ok(out)
}

/// A value literal of `ty` (`""` is the empty value).
fn value(ty: &CqlType, s: &str) -> CmdResult<Vec<u8>> {
    if s.is_empty() {
        return Ok(Vec::new());
    }
    parse_cql_literal(ty, s).map_err(|e| usage(format!("{} value {s:?}: {}", ty.cql(), e.kind)))
}

/// `$CELL` of a value of type `ty` (path: an element of a complex column).
fn cell(c: &Value, ty: &CqlType, path: Option<Vec<u8>>) -> CmdResult<MCell> {
    if c.get("type").and_then(Value::as_str) == Some("counter-shards") {
        return Err(usage("counter cells cannot be written from NDJSON"));
    }
    let timestamp = int(c, "timestamp")?;
    let mut m = MCell {
        flags: 0,
        timestamp,
        local_deletion_time: None,
        ttl: None,
        path,
        value: Vec::new(),
        counter_column: false,
    };
    if let Some(d) = c.get("deletion_time").and_then(Value::as_str) {
        m.flags |= cell_flags::IS_DELETED | cell_flags::HAS_EMPTY_VALUE;
        m.local_deletion_time = Some(epoch_seconds(d)?);
        return Ok(m);
    }
    if let Some(t) = c.get("ttl").and_then(Value::as_str) {
        m.flags |= cell_flags::IS_EXPIRING;
        m.ttl = Some(ttl(t)?);
        m.local_deletion_time = Some(epoch_seconds(text(c, "expiry")?)?);
    }
    m.value = match c.get("value").and_then(Value::as_str) {
        Some(s) => value(ty, s)?,
        None => Vec::new(),
    };
    if m.value.is_empty() {
        m.flags |= cell_flags::HAS_EMPTY_VALUE;
    }
    Ok(m)
}

/// `$COLUMNS` of the static (or a clustered) row.
fn columns(
    cols: &Map<String, Value>,
    schema: &MergedSchema,
    is_static: bool,
) -> CmdResult<Vec<MColumnData>> {
    let set = if is_static {
        &schema.data.static_columns
    } else {
        &schema.data.regular_columns
    };
    let mut out = Vec::new();
    for col in set.columns() {
        let Some(v) = cols.get(&col.def.name) else {
            continue;
        };
        let ty = &col.def.ty;
        if !col.complex {
            out.push(MColumnData::Simple {
                column: col.index,
                cell: cell(v, ty, None)?,
            });
            continue;
        }
        let deletion = tombstone(v.get("tombstone"))?;
        let mut cells = Vec::new();
        let u = ty.unreversed();
        let value_type = u.cell_value_type();
        for e in v
            .get("cells")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let key = text(e, "key")?;
            let (path, vt) = match u {
                CqlType::Udt { fields, .. } => {
                    let i = fields
                        .iter()
                        .position(|f| f.0 == key)
                        .ok_or_else(|| usage(format!("no field {key:?} in {}", u.cql())))?;
                    ((i as i16).to_be_bytes().to_vec(), fields[i].1.clone())
                }
                _ => {
                    let pt = u
                        .path_type()
                        .ok_or_else(|| usage(format!("{} has no element paths", u.cql())))?;
                    (
                        value(&pt, key)?,
                        value_type.clone().unwrap_or_else(|| u.clone()),
                    )
                }
            };
            let c = e
                .get("value")
                .ok_or_else(|| usage(format!("no value in {e}")))?;
            cells.push(cell(c, &vt, Some(path))?);
        }
        out.push(MColumnData::Complex {
            column: col.index,
            deletion: (!deletion.is_live()).then_some(deletion),
            cells,
        });
    }
    if let Some(name) = cols
        .keys()
        .find(|n| !set.columns().iter().any(|c| &c.def.name == *n))
    {
        return Err(usage(format!("column {name:?} is not in the schema")));
    }
    Ok(out)
}

fn row(clustering: OwnedClustering, cells: Vec<MColumnData>) -> MRow {
    MRow {
        position: DataPos(0),
        size: 0,
        source: 0,
        clustering,
        liveness: None,
        deletion: None,
        scylla_shadowable_deletion: None,
        cells,
    }
}

/// A range tombstone change: the deletion in force changes from `open` to
/// `to` at `values` (before the key's rows for weight -1, after for 1).
fn marker(
    values: Vec<Option<Vec<u8>>>,
    weight: i64,
    open: DeletionTime,
    to: DeletionTime,
) -> Option<MMarker> {
    let before = weight < 0;
    let (kind, deletion) = match (open.is_live(), to.is_live()) {
        (true, true) => return None,
        (true, false) if before => (BoundKind::InclStartBound, MarkerDeletion::Bound(to)),
        (true, false) => (BoundKind::ExclStartBound, MarkerDeletion::Bound(to)),
        (false, true) if before => (BoundKind::ExclEndBound, MarkerDeletion::Bound(open)),
        (false, true) => (BoundKind::InclEndBound, MarkerDeletion::Bound(open)),
        (false, false) if before => (
            BoundKind::ExclEndInclStartBoundary,
            MarkerDeletion::Boundary {
                end: open,
                start: to,
            },
        ),
        (false, false) => (
            BoundKind::InclEndExclStartBoundary,
            MarkerDeletion::Boundary {
                end: open,
                start: to,
            },
        ),
    };
    Some(MMarker {
        position: DataPos(0),
        source: 0,
        bound: OwnedClustering { kind, values },
        deletion,
    })
}

/// The fields of a record before its clustering elements.
struct Head<'v> {
    key: Option<&'v Value>,
    tombstone: Option<&'v Value>,
    static_row: Option<&'v Value>,
}

impl Head<'_> {
    /// Start the partition: its key and deletion, then its static row.
    fn write(&self, w: &mut SstableWriter, schema: &MergedSchema) -> CmdResult<()> {
        let key = unhex(text(self.key.unwrap_or(&Value::Null), "raw")?)?;
        let deletion = tombstone(self.tombstone)?;
        w.write(&Fragment::PartitionStart {
            key: &key,
            deletion,
            position: DataPos(0),
            header_end: None,
        })?;
        if let Some(s) = self.static_row.and_then(Value::as_object) {
            let r = row(
                OwnedClustering {
                    kind: BoundKind::StaticClustering,
                    values: Vec::new(),
                },
                columns(s, schema, true)?,
            );
            w.write(&Fragment::StaticRow(r.view(schema)))?;
        }
        Ok(())
    }
}

/// Write one clustering element (a row or a range tombstone change); `open`
/// is the range deletion in force before it, and after.
fn write_element(
    w: &mut SstableWriter,
    schema: &MergedSchema,
    e: &Value,
    open: &mut DeletionTime,
) -> CmdResult<()> {
    let values = match e.get("key") {
        Some(k) => clustering(text(k, "raw")?)?,
        None => Vec::new(),
    };
    match e.get("type").and_then(Value::as_str) {
        Some("clustering-row") => {
            let cols = e.get("columns").and_then(Value::as_object);
            let empty = Map::new();
            let mut r = row(
                OwnedClustering {
                    kind: BoundKind::Clustering,
                    values,
                },
                columns(cols.unwrap_or(&empty), schema, false)?,
            );
            if let Some(m) = e.get("marker") {
                let (ttl, exp) = match m.get("ttl").and_then(Value::as_str) {
                    Some(t) => (Some(ttl(t)?), Some(epoch_seconds(text(m, "expiry")?)?)),
                    None => (None, None),
                };
                r.liveness = Some(LivenessInfo {
                    timestamp: int(m, "timestamp")?,
                    ttl,
                    local_expiration_time: exp,
                    expired: false,
                });
            }
            let d = tombstone(e.get("tombstone"))?;
            if !d.is_live() {
                r.deletion = Some(RowDeletion {
                    time: d,
                    shadowable: false,
                });
            }
            w.write(&Fragment::Row(r.view(schema)))?;
        }
        Some("range-tombstone-change") => {
            let to = tombstone(e.get("tombstone"))?;
            let weight = e.get("weight").and_then(Value::as_i64).unwrap_or(-1);
            if let Some(m) = marker(values, weight, *open, to) {
                w.write(&Fragment::Marker(m.view()))?;
            }
            *open = to;
        }
        other => return Err(usage(format!("unknown clustering element type {other:?}"))),
    }
    Ok(())
}

/// End the partition; `open` is the range deletion still in force.
fn end_partition(w: &mut SstableWriter, open: DeletionTime) -> CmdResult<()> {
    if !open.is_live() {
        return Err(usage(
            "a range tombstone is still open at the partition end",
        ));
    }
    w.write(&Fragment::PartitionEnd {
        position: DataPos(0),
    })?;
    Ok(())
}
