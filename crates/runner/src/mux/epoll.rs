//! A minimal level-triggered epoll instance: the readiness source of an event-loop thread.
//!
//! Level-triggered, so a response that arrives in pieces is simply reported again until
//! the session has what it needs; no drain-until-EAGAIN read per operation.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

/// Interest in reading, or in reading and writing (while a request is only partly sent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Interest {
    Read,
    ReadWrite,
}

impl Interest {
    fn bits(self) -> u32 {
        match self {
            Interest::Read => (libc::EPOLLIN | libc::EPOLLRDHUP) as u32,
            Interest::ReadWrite => (libc::EPOLLIN | libc::EPOLLRDHUP | libc::EPOLLOUT) as u32,
        }
    }
}

/// One readiness report: the token given at registration and what is ready.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ready {
    pub token: u64,
    pub readable: bool,
    pub writable: bool,
}

/// An epoll file descriptor with a reused event buffer.
pub(crate) struct Epoll {
    fd: OwnedFd,
    events: Vec<libc::epoll_event>,
}

impl Epoll {
    /// A new instance reporting up to `capacity` events per wait.
    pub(crate) fn new(capacity: usize) -> io::Result<Epoll> {
        // SAFETY: epoll_create1 has no memory preconditions; the result is checked.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fd is a fresh descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let events = vec![libc::epoll_event { events: 0, u64: 0 }; capacity.max(1)];
        Ok(Epoll { fd, events })
    }

    fn ctl(&self, op: i32, fd: RawFd, token: u64, interest: Interest) -> io::Result<()> {
        let mut ev = libc::epoll_event {
            events: interest.bits(),
            u64: token,
        };
        // SAFETY: both descriptors are valid for the call; ev lives across it.
        let rc = unsafe { libc::epoll_ctl(self.fd.as_raw_fd(), op, fd, &mut ev) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Starts watching `fd` under `token`.
    pub(crate) fn add(&self, fd: RawFd, token: u64, interest: Interest) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_ADD, fd, token, interest)
    }

    /// Stops watching `fd` (before it is closed and replaced).
    pub(crate) fn delete(&self, fd: RawFd) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_DEL, fd, 0, Interest::Read)
    }

    /// Changes what `fd` is watched for.
    pub(crate) fn modify(&self, fd: RawFd, token: u64, interest: Interest) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_MOD, fd, token, interest)
    }

    /// Waits up to `timeout` and calls `each` for every ready descriptor.
    pub(crate) fn wait(
        &mut self,
        timeout: Duration,
        mut each: impl FnMut(Ready),
    ) -> io::Result<()> {
        let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
        // SAFETY: the buffer is valid for `len` events.
        let n = unsafe {
            libc::epoll_wait(
                self.fd.as_raw_fd(),
                self.events.as_mut_ptr(),
                self.events.len() as i32,
                ms,
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::Interrupted {
                Ok(())
            } else {
                Err(e)
            };
        }
        for ev in &self.events[..n as usize] {
            let bits = ev.events;
            let hangup = bits & (libc::EPOLLHUP | libc::EPOLLERR | libc::EPOLLRDHUP) as u32 != 0;
            each(Ready {
                token: ev.u64,
                // A hang-up is reported as readable: the read then sees EOF or the error.
                readable: hangup || bits & libc::EPOLLIN as u32 != 0,
                writable: bits & libc::EPOLLOUT as u32 != 0,
            });
        }
        Ok(())
    }
}
