//! Support for the fuzz targets of the server engines (`fuzz/` at the repository root):
//! a one-connection server on a Unix socket that plays back fixed bytes, so a client's
//! real connect, handshake and response paths read what a fuzzer wrote. Not part of the
//! engine API.

use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Mutex, Once, OnceLock};

/// Runs `client` against a server that accepts one connection on a fresh Unix socket,
/// writes `script` to it, closes its sending side (the client then reads end of file) and
/// reads whatever the client sends until the client closes. `client` gets the socket path
/// and must connect at most once and close its connection before it returns; it never
/// blocks on the server: every read ends at the script's end and every write is drained.
pub fn replay_server<T>(script: &[u8], client: impl FnOnce(&Path) -> T) -> T {
    ignore_sigpipe();
    let path = socket_path();
    let _ = std::fs::remove_file(&path);
    let listener = UnixListener::bind(&path).expect("bind the replay socket");
    let (done, finished) = mpsc::channel();
    server()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .send(Job {
            listener,
            script: script.to_vec(),
            done,
        })
        .expect("the replay server runs");
    let out = client(&path);
    // When the client did not connect, the server still waits in accept: wake it. A
    // connect queued behind an accepted one is discarded with the listener.
    drop(UnixStream::connect(&path));
    let _ = finished.recv();
    let _ = std::fs::remove_file(&path);
    out
}

/// One connection to serve.
struct Job {
    listener: UnixListener,
    script: Vec<u8>,
    done: mpsc::Sender<()>,
}

/// The server thread, started once and kept for the process: a thread per call would cost
/// a spawn per fuzz input, and LeakSanitizer reports glibc's per-thread destructor list of
/// every exited thread.
fn server() -> &'static Mutex<mpsc::Sender<Job>> {
    static SERVER: OnceLock<Mutex<mpsc::Sender<Job>>> = OnceLock::new();
    SERVER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("replay-server".into())
            .spawn(move || {
                for job in rx {
                    if let Ok((mut sock, _)) = job.listener.accept() {
                        // The client may hang up early (an error in the first message).
                        let _ = sock.write_all(&job.script);
                        let _ = sock.shutdown(std::net::Shutdown::Write);
                        let mut sink = [0u8; 4096];
                        while matches!(sock.read(&mut sink), Ok(n) if n > 0) {}
                    }
                    drop(job.listener);
                    let _ = job.done.send(());
                }
            })
            .expect("spawn the replay server");
        Mutex::new(tx)
    })
}

/// A socket path unique to this process and call.
fn socket_path() -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("dbdelta-fuzz-{}-{n}.sock", std::process::id()))
}

/// libFuzzer's `main` is not Rust's: SIGPIPE is not ignored, and a write to a closed
/// socket would kill the process instead of returning `EPIPE`.
fn ignore_sigpipe() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: setting a signal's disposition to SIG_IGN has no preconditions.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plays_back_the_script_and_drains_the_client() {
        let got = replay_server(b"hello", |path| {
            let mut s = UnixStream::connect(path).unwrap();
            s.write_all(&vec![7u8; 1 << 20]).unwrap();
            let mut v = Vec::new();
            s.read_to_end(&mut v).unwrap();
            v
        });
        assert_eq!(got, b"hello");
    }

    #[test]
    fn a_client_that_never_connects_does_not_hang() {
        assert_eq!(replay_server(b"x", |_| 42), 42);
    }
}
