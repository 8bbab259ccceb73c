//! Client sockets shared by the server engines: TCP connects with a deadline and an
//! optional loopback source address, and the handshake deadline on a socket.

use std::io;
use std::net::{Ipv4Addr, SocketAddr, TcpStream, ToSocketAddrs};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

/// `IP_BIND_ADDRESS_NO_PORT` (linux/in.h): bind the source address now, choose the port at
/// connect time from the (source, destination) pair, so 127.0.0.x sources multiply the
/// ephemeral ports instead of each bind taking one for good.
const IP_BIND_ADDRESS_NO_PORT: libc::c_int = 24;

/// Connects to `host:port` within `timeout` (every resolved address shares the deadline),
/// binding the client side to `source` when given, with `TCP_NODELAY` (every message is a
/// whole round trip).
pub fn connect_tcp(
    host: &str,
    port: u16,
    source: Option<Ipv4Addr>,
    timeout: Duration,
) -> io::Result<TcpStream> {
    let deadline = Instant::now() + timeout;
    let mut last = io::Error::new(io::ErrorKind::NotFound, "host name resolved to nothing");
    for addr in (host, port).to_socket_addrs()? {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("connect timed out after {:.1} s", timeout.as_secs_f64()),
            ));
        }
        let attempt = match (addr, source) {
            // A loopback source cannot reach another interface (a netns link's server):
            // the kernel's own choice then.
            (SocketAddr::V4(v4), Some(src)) if v4.ip().is_loopback() || !src.is_loopback() => {
                connect_from(addr, src, left)
            }
            _ => TcpStream::connect_timeout(&addr, left),
        };
        match attempt {
            Ok(s) => {
                s.set_nodelay(true)?;
                return Ok(s);
            }
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// A TCP connect from `source` (port chosen by the kernel at connect time).
fn connect_from(addr: SocketAddr, source: Ipv4Addr, timeout: Duration) -> io::Result<TcpStream> {
    // SAFETY: plain socket(2); the result is checked and owned right away.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a fresh descriptor nobody else owns.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    let one: libc::c_int = 1;
    // SAFETY: valid fd, option value lives across the call.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_IP,
            IP_BIND_ADDRESS_NO_PORT,
            (&one as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    let sin = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: 0,
        sin_addr: libc::in_addr {
            s_addr: u32::from(source).to_be(),
        },
        sin_zero: [0; 8],
    };
    // SAFETY: sin is a valid sockaddr_in for the call's duration.
    let rc = unsafe {
        libc::bind(
            fd,
            (&sin as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(
            e.kind(),
            format!("bind to source {source}: {e}"),
        ));
    }
    let stream = TcpStream::from(owned);
    stream.set_nonblocking(true)?;
    let SocketAddr::V4(v4) = addr else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "a source address needs an IPv4 destination",
        ));
    };
    let dst = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: v4.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(*v4.ip()).to_be(),
        },
        sin_zero: [0; 8],
    };
    // SAFETY: dst is a valid sockaddr_in for the call's duration.
    let rc = unsafe {
        libc::connect(
            stream.as_raw_fd(),
            (&dst as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINPROGRESS) {
            return Err(e);
        }
        wait_writable(&stream, timeout)?;
        if let Some(e) = stream.take_error()? {
            return Err(e);
        }
    }
    stream.set_nonblocking(false)?;
    Ok(stream)
}

fn wait_writable(s: &TcpStream, timeout: Duration) -> io::Result<()> {
    let mut pfd = libc::pollfd {
        fd: s.as_raw_fd(),
        events: libc::POLLOUT,
        revents: 0,
    };
    let ms = timeout.as_millis().clamp(1, i32::MAX as u128) as i32;
    loop {
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut pfd, 1, ms) };
        match n {
            0 => {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("connect timed out after {:.1} s", timeout.as_secs_f64()),
                ))
            }
            n if n > 0 => return Ok(()),
            _ => {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }
}

/// Bounds every read and write of a handshake: a server that accepts the connection and
/// then never answers fails the connect instead of hanging it. `None` clears the bound.
pub fn handshake_deadline(s: &TcpStream, limit: Option<Duration>) -> io::Result<()> {
    s.set_read_timeout(limit)?;
    s.set_write_timeout(limit)
}

/// True for the error a socket timeout gives (`EAGAIN`/`ETIMEDOUT` on a blocking read).
pub fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn connects_from_a_chosen_loopback_source() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let s = connect_tcp(
            "127.0.0.1",
            port,
            Some(Ipv4Addr::new(127, 0, 0, 9)),
            Duration::from_secs(5),
        )
        .unwrap();
        assert_eq!(
            s.local_addr().unwrap().ip(),
            std::net::IpAddr::V4(Ipv4Addr::new(127, 0, 0, 9))
        );
        let (_, peer) = l.accept().unwrap();
        assert_eq!(peer.ip().to_string(), "127.0.0.9");
    }

    #[test]
    fn a_refused_connect_is_an_error_not_a_hang() {
        let port = {
            let l = TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let t = Instant::now();
        assert!(connect_tcp(
            "127.0.0.1",
            port,
            Some(Ipv4Addr::new(127, 0, 0, 3)),
            Duration::from_secs(5)
        )
        .is_err());
        assert!(t.elapsed() < Duration::from_secs(5));
    }
}
