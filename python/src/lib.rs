//! `sstkit._native`: the Python package's door to the engine. A read runs
//! `export`'s batch stream ([`sstkit_commands::cmd::export::stream`]) on a
//! thread of its own; its record batches cross a bounded channel (one batch
//! waiting, one being built: memory stays flat) and reach pyarrow through
//! the Arrow C data interface, without a copy. The GIL is released while a
//! batch is awaited. Other calls run a CLI command and return its JSON.
//! For the Spark source the batches are converted to Spark's types on the
//! reading thread too ([`spark`]).

mod spark;

use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::Mutex;

use arrow_array::ffi::{to_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::{Array, RecordBatch, StructArray};
use arrow_schema::SchemaRef;
use clap::Parser;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use sstkit_commands::cli::{Cli, Command, ExportArgs, KeySelectArgs};
use sstkit_commands::cmd::export::stream::{batches, Options, Records};
use sstkit_commands::CmdError;

pyo3::create_exception!(
    sstkit,
    SstableError,
    PyOSError,
    "An sstable could not be read: `file`, `component`, `offset` and `partition` say where (None when unknown)."
);
pyo3::create_exception!(
    sstkit,
    UsageError,
    PyValueError,
    "Arguments that do not fit: an unknown option or column, a key that does not parse as its type."
);

/// What the reading thread sends.
enum Msg {
    Schema(SchemaRef),
    Batch(RecordBatch),
    Error(CmdError),
    End,
}

/// A command line of `sstkit` parsed as the binary does; `--s3-endpoint` applied.
fn parse(argv: &[String]) -> PyResult<Command> {
    let cli = Cli::try_parse_from(argv).map_err(|e| UsageError::new_err(e.to_string()))?;
    if let Some(ep) = &cli.s3_endpoint {
        sstkit_commands::set_s3_endpoint(ep).map_err(py_err)?;
    }
    Ok(cli.command)
}

/// A command's error as the Python exception of its kind.
fn py_err(e: CmdError) -> PyErr {
    match e {
        CmdError::Usage(m) => UsageError::new_err(m),
        CmdError::Output(e) => PyOSError::new_err(e.to_string()),
        CmdError::Format(f) => Python::attach(|py| {
            let err = SstableError::new_err(f.to_string());
            let v = err.value(py);
            let file = f.file.as_ref().map(|p| p.display().to_string());
            let component = f.component.map(|c| format!("{c:?}"));
            let set = || -> PyResult<()> {
                v.setattr("file", file)?;
                v.setattr("component", component)?;
                v.setattr("offset", f.offset)?;
                v.setattr("partition", f.partition.as_deref())?;
                Ok(())
            };
            match set() {
                Ok(()) => err,
                Err(e) => e,
            }
        }),
    }
}

/// An error of unreadable input that has no single location (several
/// sstables failed, each reported on stderr by the command).
fn sstkit_format_error(msg: String) -> CmdError {
    CmdError::Format(Box::new(sstkit_format::Error::new(
        sstkit_format::ErrorKind::BadValue(msg),
        "sstables",
    )))
}

/// The channel closed by the consumer: the read stops.
fn closed<T>(_: T) -> CmdError {
    CmdError::Output(std::io::Error::from(std::io::ErrorKind::BrokenPipe))
}

/// A stream of record batches read on a thread of its own; Python iterates it.
#[pyclass(module = "sstkit._native")]
struct Stream {
    rx: Mutex<Receiver<Msg>>,
    schema: SchemaRef,
}

#[pymethods]
impl Stream {
    /// The batches' schema as a `pyarrow.Schema`.
    #[getter]
    fn schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let s = FFI_ArrowSchema::try_from(self.schema.as_ref())
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        let s = Box::new(s);
        let pa = py.import("pyarrow")?;
        // pyarrow moves the schema out of the struct; the box then drops an empty one.
        let addr = &*s as *const FFI_ArrowSchema as usize;
        pa.getattr("Schema")?
            .call_method1("_import_from_c", (addr,))
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let msg = py.detach(|| match self.rx.lock() {
            Ok(rx) => rx.recv().ok(),
            Err(_) => None,
        });
        match msg {
            Some(Msg::Batch(b)) => Ok(Some(to_pyarrow(py, b)?)),
            Some(Msg::End) => Ok(None),
            Some(Msg::Error(e)) => Err(py_err(e)),
            Some(Msg::Schema(_)) | None => Err(PyRuntimeError::new_err(
                "sstkit: the reading thread stopped without a result",
            )),
        }
    }
}

/// A record batch as a `pyarrow.RecordBatch` (its buffers shared, not copied).
fn to_pyarrow<'py>(py: Python<'py>, b: RecordBatch) -> PyResult<Bound<'py, PyAny>> {
    let data = StructArray::from(b).into_data();
    let (array, schema) = to_ffi(&data).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    let (array, schema) = (Box::new(array), Box::new(schema));
    let a = &*array as *const FFI_ArrowArray as usize;
    let s = &*schema as *const FFI_ArrowSchema as usize;
    let pa = py.import("pyarrow")?;
    pa.getattr("RecordBatch")?
        .call_method1("_import_from_c", (a, s))
}

/// Start a read: `kind` is `rows` or `tombstones`; `argv` is an `sstkit
/// export` command line (its flags and paths); the other arguments are
/// what export's flags do not carry.
#[pyfunction]
#[pyo3(signature = (argv, kind, columns, keys, token_range, batch_rows, spark=false))]
#[allow(clippy::too_many_arguments)]
fn stream(
    py: Python<'_>,
    argv: Vec<String>,
    kind: &str,
    columns: Option<Vec<String>>,
    keys: Vec<String>,
    token_range: Option<String>,
    batch_rows: usize,
    spark: bool,
) -> PyResult<Stream> {
    let records = match kind {
        "rows" => Records::Rows,
        "tombstones" => Records::Tombstones,
        k => return Err(UsageError::new_err(format!("unknown record kind {k:?}"))),
    };
    if batch_rows == 0 {
        return Err(UsageError::new_err("batch_rows: at least 1"));
    }
    let Command::Export(a) = parse(&argv)? else {
        return Err(UsageError::new_err("not an export command line"));
    };
    let o = Options {
        records,
        select: KeySelectArgs {
            key: keys,
            token_range,
            ..Default::default()
        },
        columns,
        batch_rows,
    };
    let rx = start(a, o, spark);
    // The first message is the schema, or why there is none.
    let (rx, first) = py.detach(move || {
        let m = rx.recv().ok();
        (rx, m)
    });
    match first {
        Some(Msg::Schema(schema)) => Ok(Stream {
            rx: Mutex::new(rx),
            schema,
        }),
        Some(Msg::Error(e)) => Err(py_err(e)),
        _ => Err(PyRuntimeError::new_err(
            "sstkit: the reading thread stopped without a result",
        )),
    }
}

/// Run the read on a thread of its own; at most one batch waits in the
/// channel. `spark`: batches in Spark's types ([`spark::schema`]).
fn start(a: ExportArgs, o: Options, spark: bool) -> Receiver<Msg> {
    let (tx, rx) = sync_channel(1);
    std::thread::spawn(move || {
        let (ts, tb) = (tx.clone(), tx.clone());
        let mut target: Option<SchemaRef> = None;
        let r = batches(
            &a,
            &o,
            &mut |s| {
                let s = if spark { spark::schema(&s) } else { s };
                ts.send(Msg::Schema(s)).map_err(closed)
            },
            &mut |b| {
                let b = if spark {
                    let t = target.get_or_insert_with(|| spark::schema(&b.schema()));
                    spark::batch(&b, t).map_err(CmdError::Usage)?
                } else {
                    b
                };
                tb.send(Msg::Batch(b)).map_err(closed)
            },
        );
        // A consumer that went away gets nothing more.
        let _ = tx.send(match r {
            Ok(()) => Msg::End,
            Err(e) => Msg::Error(e),
        });
    });
    rx
}

/// Run an `sstkit` command line (`argv[0]` is the program name) and return
/// what it wrote to stdout.
#[pyfunction]
fn run<'py>(py: Python<'py>, argv: Vec<String>) -> PyResult<Bound<'py, PyBytes>> {
    let command = parse(&argv)?;
    let out = py.detach(|| -> Result<Vec<u8>, CmdError> {
        let mut out = Vec::new();
        let cli = Cli {
            command,
            color: sstkit_commands::cli::ColorWhen::Never,
            s3_endpoint: None,
        };
        let o = sstkit_commands::run(cli, &mut out)?;
        if o.unreadable > 0 {
            let kind = sstkit_format_error(format!(
                "{} sstable(s) could not be read (the errors are on stderr)",
                o.unreadable
            ));
            return Err(kind);
        }
        Ok(out)
    });
    match out {
        Ok(b) => Ok(PyBytes::new(py, &b)),
        Err(e) => Err(py_err(e)),
    }
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(stream, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_class::<Stream>()?;
    m.add("SstableError", m.py().get_type::<SstableError>())?;
    m.add("UsageError", m.py().get_type::<UsageError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
