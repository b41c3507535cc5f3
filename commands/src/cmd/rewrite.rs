//! `sstkit rewrite SSTABLE... --output-dir DIR`: write each sstable's
//! partitions again, through the writer of [`sstkit_format::write`].
//!
//! ```text
//! sstkit rewrite --output-dir out nb-1-big-Data.db                      # same version and compression
//! sstkit rewrite --output-dir out --exclude-key 42 /data/ks/t-1234/     # drop a poisoned partition
//! sstkit rewrite --output-dir out --format-version nb --compression zstd:5 --chunk-length 64KiB oa-1-big-Data.db
//! sstkit rewrite --output-dir out --format-version da nb-1-big-Data.db  # BIG -> BTI (and back with nb)
//! ```
//!
//! Reads TOC.txt, Statistics.db (the serialization header and the metadata
//! kept), CompressionInfo.db (the source's compression) and Data.db once,
//! sequentially; with key filters the partitions left out are stepped over
//! by their size fields. Writes one sstable per input into DIR with the next
//! free generation; the output is complete (TOC.txt renamed last) or absent.
//!
//! Output per sstable (json default when stdout is not a terminal, text
//! otherwise): `output` (the new Data.db), `files`, `version`,
//! `compression`, `partitions_read`, `partitions`, `rows`, `data_bytes`
//! (uncompressed Data.db), `data_file_bytes`, `bytes` (all components).
//!
//! Writes BIG versions `ma`..`oa` and BTI `da`, either from either (a BTI
//! target gets Partitions.db and Rows.db instead of Index.db and Summary.db).
//!
//! Exit status: 0 every sstable was written; 2 usage (bad flags, an output
//! directory that is an input's, a version sstkit does not write); 3 an
//! sstable that cannot be read or written (its partial output removed).

use std::io::Write;

use serde_json::json;
use sstkit_format::statistics::Statistics;
use sstkit_format::version::Version;
use sstkit_format::write::bloom::{expected_keys, filter_for};
use sstkit_format::write::copy::{copy_partitions, kept_metadata, source_compression};
use sstkit_format::write::{next_generation, Compression, SstableWriter, WriterOptions};
use sstkit_format::Sstable;

use crate::cli::{OutputFormat, RewriteArgs};
use crate::dump::select::{self, Spec};
use crate::dump::Table;
use crate::plan::SstPlan;
use crate::progress::Progress;
use crate::{for_each_sstable, CmdError, CmdResult, Emit, Outcome};

/// Run the command.
pub fn run(a: &RewriteArgs, out: &mut dyn Write) -> CmdResult<Outcome> {
    let spec = Spec::from_args(&a.select)?;
    let w = Writer::parse(&a.writer)?;
    let plan = SstPlan::text_at_terminal(&a.sst)?;
    for_each_source(&plan, &a.output_dir, out, |sst, st, t, emit| {
        let header = t.header;
        let sel = select::resolve(&spec, t)?;
        let opts = w.options(sst, st)?;
        let target = opts.version;
        let generation = next_generation(&a.output_dir)?;
        let mut w = SstableWriter::create(
            &a.output_dir,
            generation,
            header,
            kept_metadata(st),
            opts.clone(),
            filter_for(
                expected_keys(st),
                opts.bloom_filter_fp_chance,
                &opts.version.features(),
            ),
        )
        .map_err(|e| match &e.kind {
            sstkit_format::ErrorKind::Unsupported(m) => CmdError::Usage(m.clone()),
            _ => CmdError::from(e),
        })?;
        let mut bar = Progress::new("rewrite");
        let total = data_len(sst);
        let counts = copy_partitions(
            sst,
            header,
            &mut w,
            |k| sel.wants(t, k),
            |p| bar.set(p, total),
        );
        bar.finish();
        let counts = counts?;
        let written = w.finish()?;
        let files: Vec<String> = written
            .files
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        if emit.fmt == OutputFormat::Text {
            emit.text(&format!(
                    "wrote {} ({} {}): {} of {} partitions, {} rows, {} bytes of data ({} on disk), {} bytes in {} files",
                    written.data_path.display(),
                    target,
                    opts.compression.name(),
                    counts.written,
                    counts.read,
                    written.rows,
                    written.data_length,
                    written.data_file_length,
                    written.total_bytes,
                    files.len()
                ))?;
        } else {
            emit.json.object(&json!({
                "output": written.data_path.display().to_string(),
                "files": files,
                "version": target.as_str(),
                "compression": opts.compression.name(),
                "partitions_read": counts.read,
                "partitions": counts.written,
                "rows": written.rows,
                "data_bytes": written.data_length,
                "data_file_bytes": written.data_file_length,
                "bytes": written.total_bytes,
            }))?;
        }
        Ok(())
    })
}

/// The frame of a writing command: create `--output-dir` (never an input's
/// directory), then call `f` for each input sstable with its Statistics.db
/// and table.
pub(crate) fn for_each_source(
    plan: &SstPlan,
    output_dir: &std::path::Path,
    out: &mut dyn Write,
    mut f: impl FnMut(&Sstable, &Statistics, &Table<'_>, &mut Emit<'_, '_>) -> CmdResult<()>,
) -> CmdResult<Outcome> {
    crate::prepare_output_dir(output_dir, &plan.inputs.sstables)?;
    for_each_sstable(plan, false, out, |sst, emit| {
        let st = crate::render::read_statistics(sst)?;
        let header = sst.data_header(&st)?;
        let partitioner = sst.partitioner(&st)?;
        let t = Table::new(&header, partitioner, 0);
        f(sst, &st, &t, emit)
    })
}

/// `--format-version`, checked.
pub(crate) fn parse_version(v: Option<&str>) -> CmdResult<Option<Version>> {
    v.map(|v| Version::parse(v).map_err(|e| CmdError::Usage(format!("--format-version: {e}"))))
        .transpose()
}

/// `--compression`, checked.
pub(crate) fn parse_compression(c: Option<&str>) -> CmdResult<Option<Compression>> {
    c.map(|c| Compression::parse(c).map_err(|m| CmdError::Usage(format!("--compression: {m}"))))
        .transpose()
}

/// One written sstable in a report's `outputs` (split, compact).
pub(crate) fn output_json(w: &sstkit_format::write::Written) -> serde_json::Value {
    serde_json::json!({
        "output": w.data_path.display().to_string(),
        "partitions": w.partitions,
        "rows": w.rows,
        "data_bytes": w.data_length,
        "data_file_bytes": w.data_file_length,
        "bytes": w.total_bytes,
    })
}

/// The writing flags, checked once (`WriterArgs`, parsed).
#[derive(Debug, Clone)]
pub(crate) struct Writer {
    pub version: Option<Version>,
    pub compression: Option<Compression>,
    pub chunk_length: Option<u32>,
    pub column_index_size: Option<u64>,
}

impl Writer {
    pub(crate) fn parse(a: &crate::cli::WriterArgs) -> CmdResult<Writer> {
        let chunk_length = match a.chunk_length {
            None => None,
            Some(n) if n.is_power_of_two() && (1024..=(1 << 30)).contains(&n) => Some(n as u32),
            Some(n) => {
                return Err(CmdError::Usage(format!(
                    "--chunk-length {n}: a power of two from 1KiB to 1GiB"
                )))
            }
        };
        Ok(Writer {
            version: parse_version(a.format_version.as_deref())?,
            compression: parse_compression(a.compression.as_deref())?,
            chunk_length,
            column_index_size: a.column_index_size,
        })
    }

    /// [`writer_options`] for `sst` with these flags.
    pub(crate) fn options(
        &self,
        sst: &Sstable,
        st: &sstkit_format::statistics::Statistics,
    ) -> CmdResult<WriterOptions> {
        writer_options(
            sst,
            st,
            self.version,
            self.compression.clone(),
            self.chunk_length,
            self.column_index_size,
        )
    }
}

/// How to write what `sst` holds: the given version, compression and chunk
/// length, else the source's (a version sstkit does not write must be
/// named); the source's bloom filter chance.
pub(crate) fn writer_options(
    sst: &Sstable,
    st: &sstkit_format::statistics::Statistics,
    version: Option<Version>,
    compression: Option<Compression>,
    chunk_length: Option<u32>,
    column_index_size: Option<u64>,
) -> CmdResult<WriterOptions> {
    let f = sst.features();
    let target = match version {
        Some(v) => v,
        None if f.legacy_cells || sst.version().is_scylla_only() => {
            return Err(CmdError::Usage(format!(
                "{}: sstkit does not write version {}: pass --format-version (ma..oa, da)",
                sst.data_path().display(),
                sst.version()
            )))
        }
        None => sst.version(),
    };
    let (src_c, src_chunk) = source_compression(sst)?
        .unwrap_or((Compression::Lz4, sstkit_format::write::DEFAULT_CHUNK_LENGTH));
    let mut opts = WriterOptions::new(target);
    opts.compression = compression.unwrap_or(src_c);
    opts.chunk_length = chunk_length.unwrap_or(src_chunk);
    if let Some(n) = column_index_size {
        opts.column_index_size = n;
    }
    if let Some(v) = &st.validation {
        opts.bloom_filter_fp_chance = v.bloom_filter_fp_chance;
    }
    Ok(opts)
}

/// Output sstables of one header in one directory, opened on demand, each
/// with the next free generation and a bloom filter sized for `keys`
/// (the partitions of all sources, an upper bound for any one output).
pub(crate) struct Outputs<'a> {
    pub dir: &'a std::path::Path,
    pub header: &'a sstkit_format::statistics::SerializationHeader,
    pub kept: sstkit_format::write::KeptMetadata,
    pub opts: WriterOptions,
    pub keys: u64,
    pub writers: Vec<SstableWriter>,
}

impl Outputs<'_> {
    /// Open one more output; its index in `writers`.
    pub fn open(&mut self) -> sstkit_format::Result<usize> {
        let w = SstableWriter::create(
            self.dir,
            next_generation(self.dir)?,
            self.header,
            self.kept.clone(),
            self.opts.clone(),
            filter_for(
                self.keys,
                self.opts.bloom_filter_fp_chance,
                &self.opts.version.features(),
            ),
        )?;
        self.writers.push(w);
        Ok(self.writers.len() - 1)
    }

    /// The writer of the next partition: the last one, or a new one when
    /// there is none yet or the last one's Data.db holds `max_size` bytes.
    pub fn sized(&mut self, max_size: Option<u64>) -> sstkit_format::Result<&mut SstableWriter> {
        let full = match (self.writers.last_mut(), max_size) {
            (Some(w), Some(max)) => w.partitions() > 0 && w.data_file_len_at_least(max)?,
            (Some(_), None) => false,
            (None, _) => true,
        };
        let i = if full {
            // Its worker thread and buffers go to the next output.
            if let Some(w) = self.writers.last_mut() {
                w.park()?;
            }
            self.open()?
        } else {
            self.writers.len() - 1
        };
        Ok(&mut self.writers[i])
    }
}

/// A writer error: options sstkit cannot write are usage errors.
pub(crate) fn create_error(e: sstkit_format::Error) -> CmdError {
    match &e.kind {
        sstkit_format::ErrorKind::Unsupported(m) => CmdError::Usage(m.clone()),
        _ => CmdError::from(e),
    }
}

/// Uncompressed Data.db length for the progress bar (0 when unknown).
pub(crate) fn data_len(sst: &Sstable) -> u64 {
    use sstkit_format::Component;
    if let Ok(b) = sst.read_component(Component::CompressionInfo) {
        if let Ok(ci) = sstkit_format::compression::CompressionInfo::parse(&b, &sst.features()) {
            return ci.data_length;
        }
    }
    std::fs::metadata(sst.data_path())
        .map(|m| m.len())
        .unwrap_or(0)
}
