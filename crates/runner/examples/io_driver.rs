//! Which I/O driver should the multiplexed client use on this kernel? Measures the client
//! CPU per request/response round trip over loopback TCP for the three ways to drive
//! connections: a blocking thread per connection, one level-triggered epoll loop (what the
//! runner uses), and one io_uring loop (send and receive linked into one submission).
//!
//! An epoll echo server on its own thread answers every request; only the client threads'
//! CPU (RUSAGE_THREAD) is counted.
//!
//! `cargo run --release -p dbdelta-runner --example io_driver -- [SECONDS] [CONNS,…]`

use io_uring::{opcode, squeue, types, IoUring};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const REQUEST: usize = 64;

fn thread_cpu() -> f64 {
    // SAFETY: getrusage writes into the zeroed struct.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// An epoll echo server: answers each 64-byte request with the same 64 bytes.
fn server(listener: TcpListener, conns: usize, stop: Arc<AtomicBool>) {
    let ep = unsafe { libc::epoll_create1(0) };
    let mut socks = Vec::new();
    for i in 0..conns {
        let (s, _) = listener.accept().unwrap();
        s.set_nodelay(true).unwrap();
        s.set_nonblocking(true).unwrap();
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: i as u64,
        };
        unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, s.as_raw_fd(), &mut ev) };
        socks.push(s);
    }
    let mut evs = vec![libc::epoll_event { events: 0, u64: 0 }; 1024];
    let mut buf = [0u8; 4096];
    while !stop.load(Ordering::Relaxed) {
        let n = unsafe { libc::epoll_wait(ep, evs.as_mut_ptr(), 1024, 50) };
        for ev in &evs[..n.max(0) as usize] {
            let s = &mut socks[ev.u64 as usize];
            if let Ok(k) = s.read(&mut buf) {
                let _ = s.write_all(&buf[..k]);
            }
        }
    }
}

fn connect(conns: usize) -> (Vec<TcpStream>, Arc<AtomicBool>, std::thread::JoinHandle<()>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let s2 = Arc::clone(&stop);
    let h = std::thread::spawn(move || server(l, conns, s2));
    let socks = (0..conns)
        .map(|_| {
            let s = TcpStream::connect(addr).unwrap();
            s.set_nodelay(true).unwrap();
            s
        })
        .collect();
    (socks, stop, h)
}

/// Round trips and client CPU seconds.
fn blocking(conns: usize, secs: f64) -> (u64, f64) {
    let (socks, stop, h) = connect(conns);
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let results: Vec<(u64, f64)> = std::thread::scope(|s| {
        let hs: Vec<_> = socks
            .into_iter()
            .map(|mut sock| {
                s.spawn(move || {
                    let (req, mut resp) = ([7u8; REQUEST], [0u8; REQUEST]);
                    let c0 = thread_cpu();
                    let mut n = 0;
                    while Instant::now() < end {
                        sock.write_all(&req).unwrap();
                        sock.read_exact(&mut resp).unwrap();
                        n += 1;
                    }
                    (n, thread_cpu() - c0)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    stop.store(true, Ordering::Relaxed);
    h.join().unwrap();
    results
        .iter()
        .fold((0, 0.0), |(n, c), (a, b)| (n + a, c + b))
}

fn epoll(conns: usize, secs: f64) -> (u64, f64) {
    let (mut socks, stop, h) = connect(conns);
    let ep = unsafe { libc::epoll_create1(0) };
    for (i, s) in socks.iter().enumerate() {
        s.set_nonblocking(true).unwrap();
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: i as u64,
        };
        unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, s.as_raw_fd(), &mut ev) };
    }
    let req = [7u8; REQUEST];
    let mut got = vec![0usize; conns];
    let mut buf = [0u8; 4096];
    let mut evs = vec![libc::epoll_event { events: 0, u64: 0 }; 1024];
    let c0 = thread_cpu();
    for s in &mut socks {
        s.write_all(&req).unwrap();
    }
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let mut n = 0;
    while Instant::now() < end {
        let k = unsafe { libc::epoll_wait(ep, evs.as_mut_ptr(), 1024, 50) };
        for ev in &evs[..k.max(0) as usize] {
            let i = ev.u64 as usize;
            if let Ok(r) = socks[i].read(&mut buf) {
                got[i] += r;
                if got[i] >= REQUEST {
                    got[i] = 0;
                    n += 1;
                    socks[i].write_all(&req).unwrap();
                }
            }
        }
    }
    let cpu = thread_cpu() - c0;
    stop.store(true, Ordering::Relaxed);
    h.join().unwrap();
    (n, cpu)
}

fn uring(conns: usize, secs: f64) -> (u64, f64) {
    let (socks, stop, h) = connect(conns);
    let mut ring = IoUring::new((conns * 2).next_power_of_two().max(8) as u32).unwrap();
    let req = [7u8; REQUEST];
    let mut bufs = vec![[0u8; REQUEST]; conns];
    let push = |ring: &mut IoUring, i: usize, buf: *mut u8| {
        let fd = types::Fd(socks[i].as_raw_fd());
        let send = opcode::Send::new(fd, req.as_ptr(), REQUEST as u32)
            .build()
            .flags(squeue::Flags::IO_LINK)
            .user_data(u64::MAX);
        let recv = opcode::Recv::new(fd, buf, REQUEST as u32)
            .build()
            .user_data(i as u64);
        // SAFETY: the buffers outlive the ring's use of them (joined before they drop).
        unsafe {
            let mut sq = ring.submission();
            sq.push(&send).unwrap();
            sq.push(&recv).unwrap();
        }
    };
    let c0 = thread_cpu();
    for (i, b) in bufs.iter_mut().enumerate() {
        push(&mut ring, i, b.as_mut_ptr());
    }
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let mut n = 0;
    let mut done = Vec::with_capacity(conns);
    while Instant::now() < end {
        ring.submit_and_wait(1).unwrap();
        done.clear();
        for cqe in ring.completion() {
            if cqe.user_data() != u64::MAX && cqe.result() > 0 {
                done.push(cqe.user_data() as usize);
            }
        }
        for &i in &done {
            n += 1;
            push(&mut ring, i, bufs[i].as_mut_ptr());
        }
    }
    let cpu = thread_cpu() - c0;
    stop.store(true, Ordering::Relaxed);
    drop(ring);
    h.join().unwrap();
    (n, cpu)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let secs: f64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(3.0);
    let levels: Vec<usize> = args
        .next()
        .map(|s| s.split(',').filter_map(|x| x.parse().ok()).collect())
        .unwrap_or_else(|| vec![1, 4, 64]);
    println!("driver\tconns\tround trips/s\tclient CPU us/round trip");
    for &c in &levels {
        for (name, f) in [
            ("blocking", blocking as fn(usize, f64) -> (u64, f64)),
            ("epoll", epoll),
            ("io_uring", uring),
        ] {
            if name == "blocking" && c > 256 {
                continue;
            }
            let (n, cpu) = f(c, secs);
            println!(
                "{name}\t{c}\t{:.0}\t{:.2}",
                n as f64 / secs,
                cpu * 1e6 / n.max(1) as f64
            );
        }
    }
}
