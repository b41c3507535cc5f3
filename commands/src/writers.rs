//! What the writing commands (`rewrite`, `compact`, `split`, `write`)
//! share: the frame that prepares `--output-dir` and binds each input, the
//! writing flags checked once ([`Writer`]), output sstables opened on
//! demand ([`Outputs`]) and cut at a size ([`BySize`]), the copy of an
//! sstable's partitions through the engine into writers ([`copy`]), and
//! their report entries.

use std::io::Write;

use sstkit_format::engine::{self, Selection, Shape};
use sstkit_format::statistics::Statistics;
use sstkit_format::version::Version;
use sstkit_format::write::bloom::filter_for;
use sstkit_format::write::copy::source_compression;
use sstkit_format::write::sink::{CopyCounts, Route, WriterSink};
use sstkit_format::write::{next_generation, Compression, SstableWriter, WriterOptions};
use sstkit_format::Sstable;

use crate::plan::SstPlan;
use crate::progress::Progress;
use crate::sink::Table;
use crate::{for_each_sstable, CmdError, CmdResult, Emit, Outcome};

/// The frame of a writing command: create `--output-dir` (never an input's
/// directory), then call `f` for each input sstable with its Statistics.db
/// and table.
pub fn for_each_source(
    plan: &SstPlan,
    output_dir: &std::path::Path,
    out: &mut dyn Write,
    mut f: impl FnMut(&Sstable, &Statistics, &Table<'_>, &mut Emit<'_, '_>) -> CmdResult<()>,
) -> CmdResult<Outcome> {
    crate::prepare_output_dir(output_dir, &plan.inputs.sstables)?;
    for_each_sstable(plan, false, out, |sst, emit| {
        let b = sstkit_format::engine::bind(sst)?;
        let t = Table::new(&b.header, b.partitioner.clone(), 0);
        f(sst, &b.statistics, &t, emit)
    })
}

/// `--format-version`, checked.
pub fn parse_version(v: Option<&str>) -> CmdResult<Option<Version>> {
    v.map(|v| Version::parse(v).map_err(|e| CmdError::Usage(format!("--format-version: {e}"))))
        .transpose()
}

/// `--compression`, checked.
pub fn parse_compression(c: Option<&str>) -> CmdResult<Option<Compression>> {
    c.map(|c| Compression::parse(c).map_err(|m| CmdError::Usage(format!("--compression: {m}"))))
        .transpose()
}

/// One written sstable in a report's `outputs` (split, compact).
pub fn output_json(w: &sstkit_format::write::Written) -> serde_json::Value {
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
pub struct Writer {
    /// `--format-version`.
    pub version: Option<Version>,
    /// `--compression`.
    pub compression: Option<Compression>,
    /// `--chunk-length`, a power of two from 1 KiB to 1 GiB.
    pub chunk_length: Option<u32>,
    /// `--column-index-size`: bytes per row-index block.
    pub column_index_size: Option<u64>,
}

impl Writer {
    /// Check the writing flags.
    pub fn parse(a: &crate::cli::WriterArgs) -> CmdResult<Writer> {
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
    pub fn options(
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
pub fn writer_options(
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
pub struct Outputs<'a> {
    /// The output directory.
    pub dir: &'a std::path::Path,
    /// The header every output is written with.
    pub header: &'a sstkit_format::statistics::SerializationHeader,
    /// The metadata carried over from the sources.
    pub kept: sstkit_format::write::KeptMetadata,
    /// Version, compression and the other writing options.
    pub opts: WriterOptions,
    /// The bloom filters' expected keys.
    pub keys: u64,
    /// The outputs opened so far.
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

/// Partitions into [`Outputs`], a new one opened between partitions once
/// the current Data.db holds `max` bytes ([`Outputs::sized`]).
pub struct BySize<'a> {
    /// The outputs.
    pub out: Outputs<'a>,
    /// Bytes of Data.db on disk per output (`None`: one output).
    pub max: Option<u64>,
}

impl Route for BySize<'_> {
    fn pick(&mut self, _key: &[u8]) -> sstkit_format::Result<bool> {
        self.out.sized(self.max).map(|_| true)
    }
    fn picked(&mut self) -> Option<&mut SstableWriter> {
        self.out.writers.last_mut()
    }
}

/// A writer error: options sstkit cannot write are usage errors.
pub fn create_error(e: sstkit_format::Error) -> CmdError {
    match &e.kind {
        sstkit_format::ErrorKind::Unsupported(m) => CmdError::Usage(m.clone()),
        _ => CmdError::from(e),
    }
}

/// Every partition of `sst` through the engine into `sink` (the scan's
/// progress on `bar`): the counts, and the route with its writers.
pub fn copy<R: Route>(
    sst: &Sstable,
    t: &Table<'_>,
    mut sink: WriterSink<R>,
    bar: &mut Progress,
) -> CmdResult<(CopyCounts, R)> {
    let ran = engine::run(
        sst,
        t,
        &Selection::all(),
        &Shape::default(),
        &mut sink,
        &mut |n| bar.note(n),
    );
    bar.finish();
    // A fragment the target cannot hold is the source's to name.
    ran.map_err(|e| sink.error(e).in_file(&sst.data_path()))?;
    Ok((sink.counts(), sink.into_route()))
}
