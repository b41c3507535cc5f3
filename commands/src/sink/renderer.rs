//! The one place an output format picks its renderer: [`Renderer`], the
//! engine's [`Sink`] for `dump-data`, `read` and their `--merge` forms.

use std::io::{self, Write};

use sstkit_format::data::{LazyRow, RangeTombstoneMarker, Row};
use sstkit_format::deletion::DeletionTime;
use sstkit_format::engine::Error as EngineError;
use sstkit_format::schema::TableSchema;

use crate::cli::{DataOutputFormat, OutputFormat};
use crate::output::JsonOut;
use crate::sink::cql::CqlWriter;
use crate::sink::scylla::ScyllaWriter;
use crate::sink::sstabledump::{KeysWriter, SstabledumpWriter};
use crate::sink::text::TextWriter;
use crate::sink::{row_is_empty, tombstones_of, Sink, Table};

/// The JSON framing of an output format (none for the others).
pub fn framing(format: DataOutputFormat) -> OutputFormat {
    match format {
        DataOutputFormat::Ndjson => OutputFormat::Ndjson,
        DataOutputFormat::Json => OutputFormat::Json,
        _ => OutputFormat::Text,
    }
}

/// How a renderer prints, besides its format.
#[derive(Debug, Clone, Copy, Default)]
pub struct RenderOptions {
    /// `--keys-only`: the keys alone.
    pub keys_only: bool,
    /// `--tombstones-only`: deletions alone; partitions left with none are
    /// not printed.
    pub tombstones_only: bool,
    /// `--raw-timestamps` (sstabledump): times as numbers.
    pub raw_timestamps: bool,
    /// `--output cql`: a partition's static content alone is a row (only
    /// for reads whose clustering is not bounded, as in Cassandra).
    pub static_alone: bool,
}

/// The renderer of one output document (an sstable's, or a merged
/// table's): a sink whose document is begun when it is made.
pub enum Renderer<'a, 'w> {
    /// json / ndjson (the scylla writer, with its cached texts, is boxed).
    Scylla(Box<ScyllaWriter<'a, 'w>>),
    /// sstabledump `-e`.
    SdKeys(SdKeys<'a>),
    /// sstabledump, or its `-l` form.
    Sd(SdSink<'a>),
    /// text.
    Text(TextWriter<&'a mut dyn Write>),
    /// cql.
    Cql(CqlWriter<&'a mut dyn Write>),
}

impl<'a, 'w> Renderer<'a, 'w> {
    /// The renderer of `format` into `json`, its document begun. The scylla
    /// writer frames its partitions in `json`'s sstable entry, which the
    /// caller opens and closes.
    pub fn new(
        format: DataOutputFormat,
        json: &'a mut JsonOut<'w>,
        table: &Table<'_>,
        schema: Option<&TableSchema>,
        o: RenderOptions,
    ) -> io::Result<Self> {
        Ok(match format {
            DataOutputFormat::Json | DataOutputFormat::Ndjson => Renderer::Scylla(Box::new(
                ScyllaWriter::new(json, format == DataOutputFormat::Ndjson, o.tombstones_only),
            )),
            DataOutputFormat::Sstabledump | DataOutputFormat::SstabledumpLines if o.keys_only => {
                let mut w = KeysWriter::new(json.raw());
                w.begin()?;
                Renderer::SdKeys(SdKeys { w })
            }
            DataOutputFormat::Sstabledump | DataOutputFormat::SstabledumpLines => {
                let lines = format == DataOutputFormat::SstabledumpLines;
                let mut w =
                    SstabledumpWriter::new(json.raw(), lines).raw_timestamps(o.raw_timestamps);
                w.begin()?;
                Renderer::Sd(SdSink::new(w, o.tombstones_only))
            }
            DataOutputFormat::Cql => {
                Renderer::Cql(CqlWriter::new(json.raw(), table, schema, o.static_alone))
            }
            DataOutputFormat::Text => {
                Renderer::Text(TextWriter::new(json.raw(), o.tombstones_only))
            }
        })
    }

    /// The renderer as the engine's sink.
    pub fn sink(&mut self) -> &mut dyn Sink {
        match self {
            Renderer::Scylla(s) => s.as_mut(),
            Renderer::SdKeys(s) => s,
            Renderer::Sd(s) => s,
            Renderer::Text(s) => s,
            Renderer::Cql(s) => s,
        }
    }

    /// Continue a document whose first partitions another renderer of the
    /// same format rendered (a parallel read: [`crate::sink::pieces`]): the next
    /// partition is rendered as a later one, after its separator.
    pub fn resume(&mut self) {
        match self {
            Renderer::Scylla(s) => s.resume(),
            Renderer::SdKeys(s) => s.w.resume(),
            Renderer::Sd(s) => s.w.resume(),
            // Their partitions are rendered alike wherever they come.
            Renderer::Text(_) | Renderer::Cql(_) => {}
        }
    }

    /// True when a partition's rows can be rendered in parts by several
    /// renderers ([`Sink::rows_resume`]): not where a filter may drop
    /// every row of a part (`--tombstones-only`), nor for CQL rows, which
    /// depend on the range tombstone open before them.
    pub fn splits_rows(format: DataOutputFormat, o: RenderOptions) -> bool {
        !o.tombstones_only && !o.keys_only && format != DataOutputFormat::Cql
    }

    /// True while the next partition would be rendered as the document's
    /// first, in a form that differs from a later one's.
    pub fn at_start(&self) -> bool {
        match self {
            Renderer::Scylla(s) => s.at_start(),
            Renderer::SdKeys(s) => s.w.at_start(),
            Renderer::Sd(s) => s.w.at_start(),
            Renderer::Text(_) | Renderer::Cql(_) => false,
        }
    }

    /// Render into `buffer` and keep the output there until
    /// [`Renderer::take_buffered`] (the formats with a buffer of their own;
    /// the others write through as before): a piece is handed over whole.
    pub fn hold_output(&mut self, buffer: Vec<u8>) {
        match self {
            Renderer::Scylla(s) => s.hold_output(buffer),
            Renderer::Sd(s) => s.w.hold_output(buffer),
            Renderer::SdKeys(_) | Renderer::Text(_) | Renderer::Cql(_) => {}
        }
    }

    /// What [`Renderer::write_through`] would write before its bytes, taken
    /// out of the buffer; `None` for the formats that keep no buffer of
    /// their own (what they rendered is already written).
    pub fn take_buffered(&mut self) -> Option<Vec<u8>> {
        match self {
            Renderer::Scylla(s) => Some(s.take_buffered()),
            Renderer::Sd(s) => Some(s.w.take_buffered()),
            Renderer::SdKeys(_) | Renderer::Text(_) | Renderer::Cql(_) => None,
        }
    }

    /// Write what is buffered, then `bytes` (rendered by another renderer
    /// of the same format), keeping the document open.
    pub fn write_through(&mut self, bytes: &[u8]) -> io::Result<()> {
        match self {
            Renderer::Scylla(s) => s.write_through(bytes),
            Renderer::SdKeys(s) => s.w.writer()?.write_all(bytes),
            Renderer::Sd(s) => s.w.writer()?.write_all(bytes),
            Renderer::Text(s) => s.writer().write_all(bytes),
            Renderer::Cql(s) => s.writer().write_all(bytes),
        }
    }

    /// The renderer as the engine's sink, to ask it.
    pub fn sink_ref(&self) -> &dyn Sink {
        match self {
            Renderer::Scylla(s) => s.as_ref(),
            Renderer::SdKeys(s) => s,
            Renderer::Sd(s) => s,
            Renderer::Text(s) => s,
            Renderer::Cql(s) => s,
        }
    }

    /// End the document: what is buffered is written, and the closing
    /// brackets. Not after an output error (the writer may be mid-token).
    pub fn finish(self) -> io::Result<()> {
        match self {
            Renderer::Scylla(mut s) => s.flush(),
            Renderer::SdKeys(s) => s.w.finish().map(|_| ()),
            Renderer::Sd(s) => s.w.finish().map(|_| ()),
            Renderer::Cql(mut s) => s.flush(),
            Renderer::Text(_) => Ok(()),
        }
    }
}

/// sstabledump `-e` as a sink.
pub struct SdKeys<'w> {
    w: KeysWriter<&'w mut dyn Write>,
}

impl Sink for SdKeys<'_> {
    fn key_only(&mut self, t: &Table<'_>, key: &[u8]) -> io::Result<()> {
        self.w.key(t, key)
    }
}

/// sstabledump JSON as a sink, with the `--tombstones-only` filter.
pub struct SdSink<'w> {
    w: SstabledumpWriter<&'w mut dyn Write>,
    tombstones_only: bool,
    /// Partition header not yet written (tombstones-only: written lazily).
    pending: Option<(Vec<u8>, DeletionTime, u64)>,
    open: bool,
    written: bool,
}

impl<'w> SdSink<'w> {
    fn new(w: SstabledumpWriter<&'w mut dyn Write>, tombstones_only: bool) -> Self {
        SdSink {
            w,
            tombstones_only,
            pending: None,
            open: false,
            written: false,
        }
    }

    fn ensure_open(&mut self, t: &Table<'_>) -> io::Result<()> {
        if let Some((k, d, p)) = self.pending.take() {
            self.w.partition_start(t, &k, &d, p)?;
            self.open = true;
        }
        Ok(())
    }
}

impl Sink for SdSink<'_> {
    fn rows_resume(&mut self) -> io::Result<()> {
        // What the partition's start rendered is written out (the caller
        // skips it); the rows array is the innermost container.
        self.w.writer()?;
        self.w.resume();
        Ok(())
    }
    fn partition_start(
        &mut self,
        t: &Table<'_>,
        key: &[u8],
        deletion: &DeletionTime,
        header_end: u64,
    ) -> io::Result<()> {
        self.pending = Some((key.to_vec(), *deletion, header_end));
        if !self.tombstones_only || !deletion.is_live() {
            self.ensure_open(t)?;
        }
        Ok(())
    }

    fn static_row(&mut self, t: &Table<'_>, row: &Row<'_>, position: u64) -> io::Result<()> {
        if self.tombstones_only {
            let Some(r) = tombstones_of(row) else {
                return Ok(());
            };
            self.ensure_open(t)?;
            return self.w.row(t, &r, position);
        }
        if row_is_empty(row) {
            return Ok(());
        }
        self.w.row(t, row, position)
    }

    fn row(&mut self, t: &Table<'_>, row: &Row<'_>) -> io::Result<()> {
        if self.tombstones_only {
            let Some(r) = tombstones_of(row) else {
                return Ok(());
            };
            self.ensure_open(t)?;
            return self.w.row(t, &r, r.position.0);
        }
        self.w.row(t, row, row.position.0)
    }

    fn takes_lazy_rows(&self) -> bool {
        !self.tombstones_only
    }

    fn lazy_row(&mut self, t: &Table<'_>, row: LazyRow<'_>) -> Result<(), EngineError> {
        self.w.lazy_row(t, row)
    }

    fn marker(&mut self, t: &Table<'_>, m: &RangeTombstoneMarker<'_>) -> io::Result<()> {
        self.ensure_open(t)?;
        self.w.marker(t, m)
    }

    fn partition_end(&mut self, _t: &Table<'_>) -> io::Result<()> {
        self.pending = None;
        self.written = self.open;
        if self.open {
            self.open = false;
            self.w.partition_end()?;
        }
        Ok(())
    }

    fn last_partition_written(&self) -> bool {
        self.written
    }

    fn abort_partition(&mut self, t: &Table<'_>) -> io::Result<()> {
        self.partition_end(t)
    }
}
