//! Object storage (`s3://bucket/key`, `az://container/key`, `gs://bucket/key`,
//! `http(s)://host/path`): the backend
//! behind the IO layer's open files (`OpenFile`) for paths that are URLs.
//!
//! One process-wide backend owns a tokio current-thread runtime and one
//! `object_store` client per bucket (or host); every request is a
//! `block_on` on that runtime, so the rest of the IO layer stays
//! synchronous and reads are counted, aligned and coalesced exactly as for
//! local files (a physical read is one ranged GET).
//!
//! Object lengths come from listings (a directory argument, or the one LIST
//! of an sstable's components that [`list_sstable`] makes when it is
//! opened) or from a HEAD, and are cached for the life of the process: no
//! request per read asks for a length.
//!
//! Credentials and endpoints: `AmazonS3Builder::from_env` (the standard
//! `AWS_*` variables), else the `[profile]` of the shared credentials file
//! (`AWS_PROFILE`, default `default`); region `AWS_REGION` /
//! `AWS_DEFAULT_REGION`, else the profile's, else `us-east-1`;
//! [`set_endpoint`] (`--s3-endpoint`) or `AWS_ENDPOINT_URL` for
//! S3-compatible stores (path-style requests; `http://` allowed when given
//! explicitly). Azure and Google Cloud Storage take the `object_store`
//! crate's own environment variables (`AZURE_*`, `GOOGLE_*`). Transient failures (5xx, throttling, timeouts) are retried
//! by `object_store` with bounded exponential backoff (`retry()`: at most
//! [`MAX_RETRIES`] retries, and none after its timeout), so a flaky store
//! slows a read down but never hangs it.

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use futures::TryStreamExt;
use object_store::path::Path as ObjPath;
use object_store::{BackoffConfig, ObjectStore, RetryConfig};

/// Retries of one request after a transient failure (so at most
/// `MAX_RETRIES + 1` attempts).
pub const MAX_RETRIES: usize = 4;

/// The `--s3-endpoint` URL, set once before the first request.
static ENDPOINT: OnceLock<String> = OnceLock::new();

/// Use `url` as the endpoint of every `s3://` store (an S3-compatible
/// server); call before any request. A second call is ignored.
pub fn set_endpoint(url: &str) {
    let _ = ENDPOINT.set(url.trim_end_matches('/').to_string());
}

/// Requests made so far by the process, by kind (LIST and HEAD are not in
/// the per-component [`super::IoStats`], which counts the GETs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Requests {
    /// Ranged or whole-object GETs.
    pub gets: u64,
    /// HEAD requests (object lengths not known from a listing).
    pub heads: u64,
    /// LIST requests (pages of a listing).
    pub lists: u64,
}

static GETS: AtomicU64 = AtomicU64::new(0);
static HEADS: AtomicU64 = AtomicU64::new(0);
static LISTS: AtomicU64 = AtomicU64::new(0);

/// The requests made so far by this process.
pub fn requests() -> Requests {
    Requests {
        gets: GETS.load(Ordering::Relaxed),
        heads: HEADS.load(Ordering::Relaxed),
        lists: LISTS.load(Ordering::Relaxed),
    }
}

struct Backend {
    rt: tokio::runtime::Runtime,
    /// One client per `scheme://bucket` (or host).
    stores: Mutex<HashMap<String, Arc<dyn ObjectStore>>>,
    /// Object lengths by URL, from listings and HEADs.
    sizes: Mutex<HashMap<String, u64>>,
    /// Directory URLs (with a trailing `/`) and sstable prefixes already
    /// listed: every object under them is in `sizes`.
    listed: Mutex<HashSet<String>>,
}

fn backend() -> std::io::Result<&'static Backend> {
    static B: OnceLock<std::result::Result<Backend, String>> = OnceLock::new();
    let b = B.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the object storage runtime: {e}"))?;
        Ok(Backend {
            rt,
            stores: Mutex::new(HashMap::new()),
            sizes: Mutex::new(HashMap::new()),
            listed: Mutex::new(HashSet::new()),
        })
    });
    b.as_ref().map_err(|m| std::io::Error::other(m.clone()))
}

/// A URL split into its store (`scheme://bucket`) and the key in it.
struct Url {
    scheme: String,
    bucket: String,
    key: String,
}

impl Url {
    fn parse(p: &Path) -> std::io::Result<Url> {
        let s = p.to_str().ok_or_else(|| bad_url(p, "not UTF-8"))?;
        let (scheme, rest) = s.split_once("://").ok_or_else(|| bad_url(p, "no scheme"))?;
        let (bucket, key) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err(bad_url(p, "no bucket or host"));
        }
        Ok(Url {
            scheme: scheme.to_ascii_lowercase(),
            bucket: bucket.to_string(),
            key: key.trim_matches('/').to_string(),
        })
    }

    fn store_id(&self) -> String {
        format!("{}://{}", self.scheme, self.bucket)
    }

    fn full(&self) -> String {
        format!("{}/{}", self.store_id(), self.key)
    }

    fn obj_path(&self) -> ObjPath {
        // Keys are taken as written (no percent-decoding).
        ObjPath::from_iter(self.key.split('/').filter(|s| !s.is_empty()))
    }
}

fn bad_url(p: &Path, why: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("{}: not an object storage URL ({why})", p.display()),
    )
}

fn retry() -> RetryConfig {
    RetryConfig {
        backoff: BackoffConfig {
            init_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(2),
            base: 2.0,
        },
        max_retries: MAX_RETRIES,
        retry_timeout: Duration::from_secs(30),
    }
}

/// `key = value` lines of the `[section]` of an AWS ini file.
fn ini_section(path: &Path, section: &str) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let Ok(text) = std::fs::read_to_string(path) else {
        return out;
    };
    let mut inside = false;
    for line in text.lines() {
        let line = line.trim();
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            let name = name.trim();
            inside = name == section || name.strip_prefix("profile ") == Some(section);
        } else if inside {
            if let Some((k, v)) = line.split_once('=') {
                out.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
            }
        }
    }
    out
}

fn s3_store(bucket: &str) -> std::io::Result<Arc<dyn ObjectStore>> {
    use object_store::aws::AmazonS3Builder;
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let mut b = AmazonS3Builder::from_env()
        .with_bucket_name(bucket)
        .with_retry(retry());
    let home = env("HOME").map(std::path::PathBuf::from);
    let profile = env("AWS_PROFILE").unwrap_or_else(|| "default".into());
    let shared = env("AWS_SHARED_CREDENTIALS_FILE")
        .map(Into::into)
        .or_else(|| home.as_ref().map(|h| h.join(".aws/credentials")));
    let config = env("AWS_CONFIG_FILE")
        .map(Into::into)
        .or_else(|| home.as_ref().map(|h| h.join(".aws/config")));
    if env("AWS_ACCESS_KEY_ID").is_none() {
        let creds = shared
            .map(|p| ini_section(&p, &profile))
            .unwrap_or_default();
        if let (Some(id), Some(secret)) = (
            creds.get("aws_access_key_id"),
            creds.get("aws_secret_access_key"),
        ) {
            b = b.with_access_key_id(id).with_secret_access_key(secret);
            if let Some(t) = creds.get("aws_session_token") {
                b = b.with_token(t);
            }
        }
    }
    if env("AWS_REGION").is_none() && env("AWS_DEFAULT_REGION").is_none() {
        let conf = config
            .map(|p| ini_section(&p, &profile))
            .unwrap_or_default();
        b = b.with_region(conf.get("region").map_or("us-east-1", String::as_str));
    }
    if let Some(ep) = ENDPOINT.get().cloned().or_else(|| env("AWS_ENDPOINT_URL")) {
        b = b
            .with_endpoint(&ep)
            .with_allow_http(ep.starts_with("http://"))
            .with_virtual_hosted_style_request(false);
    }
    b.build()
        .map(|s| Arc::new(s) as Arc<dyn ObjectStore>)
        .map_err(|e| std::io::Error::other(format!("s3://{bucket}: {}", plain(&e))))
}

fn store(u: &Url) -> std::io::Result<Arc<dyn ObjectStore>> {
    let be = backend()?;
    let id = u.store_id();
    if let Some(s) = lock(&be.stores).get(&id) {
        return Ok(Arc::clone(s));
    }
    let s: Arc<dyn ObjectStore> = match u.scheme.as_str() {
        "s3" | "s3a" => s3_store(&u.bucket)?,
        "http" | "https" => object_store::http::HttpBuilder::new()
            .with_url(&id)
            // Plain http is refused unless allowed, and the URL asked for it.
            .with_client_options(
                object_store::ClientOptions::new().with_allow_http(u.scheme == "http"),
            )
            .with_retry(retry())
            .build()
            .map(|s| Arc::new(s) as Arc<dyn ObjectStore>)
            .map_err(|e| std::io::Error::other(format!("{id}: {}", plain(&e))))?,
        "gs" => object_store::gcp::GoogleCloudStorageBuilder::from_env()
            .with_url(&id)
            .with_retry(retry())
            .build()
            .map(|s| Arc::new(s) as Arc<dyn ObjectStore>)
            .map_err(|e| std::io::Error::other(format!("{id}: {}", plain(&e))))?,
        "az" | "abfs" | "abfss" => object_store::azure::MicrosoftAzureBuilder::from_env()
            .with_url(&id)
            .with_retry(retry())
            .build()
            .map(|s| Arc::new(s) as Arc<dyn ObjectStore>)
            .map_err(|e| std::io::Error::other(format!("{id}: {}", plain(&e))))?,
        other => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                format!(
                    "{}: {other}:// is not supported (s3://, gs://, az://, abfs(s):// and http(s):// are)",
                    u.full()
                ),
            ))
        }
    };
    lock(&be.stores).insert(id, Arc::clone(&s));
    Ok(s)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The first line of an error's message (the source chain of
/// `object_store` errors can carry a whole response body).
fn plain(e: &dyn std::fmt::Display) -> String {
    let s = e.to_string();
    let line = s.lines().next().unwrap_or("").trim();
    let mut line = line.to_string();
    if line.len() > 300 {
        let mut cut = 300;
        while !line.is_char_boundary(cut) {
            cut -= 1;
        }
        line.truncate(cut);
        line.push('…');
    }
    line
}

/// An `object_store` error as an `std::io::Error` that names the object:
/// not found, refused credentials, or what the store said.
fn io_error(url: &str, what: &str, e: object_store::Error) -> std::io::Error {
    use std::io::ErrorKind as K;
    match e {
        object_store::Error::NotFound { .. } => {
            std::io::Error::new(K::NotFound, format!("{url}: no such object ({what})"))
        }
        object_store::Error::PermissionDenied { .. } => std::io::Error::new(
            K::PermissionDenied,
            format!("{url}: access denied by the store ({what}): the credentials lack permission"),
        ),
        object_store::Error::Unauthenticated { .. } => std::io::Error::new(
            K::PermissionDenied,
            format!(
                "{url}: authentication failed ({what}): check the AWS credentials \
                 (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or AWS_PROFILE)"
            ),
        ),
        other => {
            // The store's XML answer names the error code: kept out of the
            // message, looked at for the kind.
            let full = other.to_string();
            let msg = plain(
                &full
                    .split("<?xml")
                    .next()
                    .unwrap_or("")
                    .trim_end_matches([':', ' ']),
            );
            let kind = if full.contains("NoSuchBucket") {
                K::NotFound
            } else if [
                "AccessDenied",
                "403 Forbidden",
                "InvalidAccessKeyId",
                "SignatureDoesNotMatch",
            ]
            .iter()
            .any(|c| full.contains(c))
            {
                K::PermissionDenied
            } else {
                K::Other
            };
            let why = match kind {
                K::NotFound => " (no such bucket)",
                K::PermissionDenied => " (the credentials were refused)",
                _ => "",
            };
            std::io::Error::new(kind, format!("{url}: {what} failed{why}: {msg}"))
        }
    }
}

/// One object, opened for ranged reads.
pub(crate) struct Object {
    store: Arc<dyn ObjectStore>,
    path: ObjPath,
    url: String,
    /// Length in bytes.
    pub(crate) len: u64,
}

impl std::fmt::Debug for Object {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Object")
            .field("url", &self.url)
            .field("len", &self.len)
            .finish()
    }
}

impl Object {
    /// Open the object at `p` (its length from the cache, else a HEAD).
    pub(crate) fn open(p: &Path) -> std::io::Result<Object> {
        let u = Url::parse(p)?;
        let store = store(&u)?;
        let len = object_len(p)?;
        Ok(Object {
            store,
            path: u.obj_path(),
            url: u.full(),
            len,
        })
    }

    /// GET bytes `range` and append them to `out` (one request; a short
    /// answer is an error).
    pub(crate) fn get_into(&self, range: Range<u64>, out: &mut Vec<u8>) -> std::io::Result<()> {
        let want = range.end - range.start;
        if want == 0 {
            return Ok(());
        }
        let be = backend()?;
        GETS.fetch_add(1, Ordering::Relaxed);
        let bytes = be
            .rt
            .block_on(self.store.get_range(&self.path, range.clone()))
            .map_err(|e| io_error(&self.url, "GET", e))?;
        if bytes.len() as u64 != want {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!(
                    "{}: GET of bytes {}..{} returned {} bytes",
                    self.url,
                    range.start,
                    range.end,
                    bytes.len()
                ),
            ));
        }
        out.extend_from_slice(&bytes);
        Ok(())
    }
}

/// Length of the object at `p`: from a listing, else one HEAD (cached).
pub fn object_len(p: &Path) -> std::io::Result<u64> {
    let u = Url::parse(p)?;
    let full = u.full();
    let be = backend()?;
    if let Some(n) = lock(&be.sizes).get(&full) {
        return Ok(*n);
    }
    // Absent from a listing of its directory, or of its sstable's prefix.
    let dir = full.rsplit_once('/').map_or("", |(d, _)| d);
    let listed = lock(&be.listed).iter().any(|l| {
        l == dir || (l.len() > dir.len() && l.starts_with(dir) && full.starts_with(l.as_str()))
    });
    if listed {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("{full}: no such object"),
        ));
    }
    let store = store(&u)?;
    HEADS.fetch_add(1, Ordering::Relaxed);
    let meta = be
        .rt
        .block_on(store.head(&u.obj_path()))
        .map_err(|e| io_error(&full, "HEAD", e))?;
    lock(&be.sizes).insert(full, meta.size);
    Ok(meta.size)
}

/// An entry of a listed "directory" (a prefix).
#[derive(Debug, Clone)]
pub struct Entry {
    /// The last path segment.
    pub name: String,
    /// A common prefix (a "directory") rather than an object.
    pub is_dir: bool,
}

/// List the objects and common prefixes directly under the prefix `p` (a
/// LIST with delimiter `/`); lengths go to the cache.
pub fn list_dir(p: &Path) -> std::io::Result<Vec<Entry>> {
    let u = Url::parse(p)?;
    let store = store(&u)?;
    let be = backend()?;
    let prefix = u.obj_path();
    LISTS.fetch_add(1, Ordering::Relaxed);
    let res = be
        .rt
        .block_on(store.list_with_delimiter(Some(&prefix)))
        .map_err(|e| io_error(&format!("{}/", u.full()), "LIST", e))?;
    let base = u.store_id();
    let mut out = Vec::new();
    {
        let mut sizes = lock(&be.sizes);
        for o in &res.objects {
            let name = o.location.filename().unwrap_or("").to_string();
            sizes.insert(format!("{base}/{}", o.location), o.size);
            out.push(Entry {
                name,
                is_dir: false,
            });
        }
    }
    for d in &res.common_prefixes {
        out.push(Entry {
            name: d.filename().unwrap_or("").to_string(),
            is_dir: true,
        });
    }
    lock(&be.listed).insert(u.full());
    Ok(out)
}

/// List the objects whose names start with `prefix` in the directory `dir`
/// (an sstable's components: one LIST that starts after `dir/prefix` and
/// stops at the first other name); lengths go to the cache. Nothing is
/// requested when `dir` was listed already, nor for `http(s)://` (no
/// listing there: each component's length is a HEAD).
pub fn list_sstable(dir: &Path, prefix: &str) -> std::io::Result<Vec<String>> {
    let u = Url::parse(dir)?;
    let be = backend()?;
    let base = u.store_id();
    let full_dir = u.full();
    let key = |n: &str| {
        if u.key.is_empty() {
            n.to_string()
        } else {
            format!("{}/{n}", u.key)
        }
    };
    let already = {
        let listed = lock(&be.listed);
        listed.contains(&full_dir) || listed.contains(&format!("{full_dir}/{prefix}"))
    };
    if already {
        let start = format!("{base}/{}", key(prefix));
        return Ok(lock(&be.sizes)
            .keys()
            .filter_map(|k| k.strip_prefix(&start))
            .filter(|rest| !rest.contains('/'))
            .map(|rest| format!("{prefix}{rest}"))
            .collect());
    }
    if u.scheme.starts_with("http") {
        // A plain web server has no listing: lengths come from HEADs.
        return Ok(Vec::new());
    }
    let store = store(&u)?;
    let dir_path = u.obj_path();
    let start = key(prefix);
    let offset = ObjPath::from(start.clone());
    let mut found = Vec::new();
    be.rt
        .block_on(async {
            LISTS.fetch_add(1, Ordering::Relaxed);
            let mut stream = store.list_with_offset(Some(&dir_path), &offset);
            while let Some(o) = stream.try_next().await? {
                let loc = o.location.to_string();
                let Some(rest) = loc.strip_prefix(&start) else {
                    break;
                };
                if rest.contains('/') {
                    break;
                }
                lock(&be.sizes).insert(format!("{base}/{loc}"), o.size);
                found.push(format!("{prefix}{rest}"));
            }
            Ok::<(), object_store::Error>(())
        })
        .map_err(|e| io_error(&format!("{full_dir}/{prefix}*"), "LIST", e))?;
    lock(&be.listed).insert(format!("{full_dir}/{prefix}"));
    Ok(found)
}
