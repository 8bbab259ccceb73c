//! The multiplexed client: event-loop threads that each drive many connections in
//! session form (sans-IO protocol state plus a non-blocking socket).

mod epoll;
pub(crate) mod event_loop;
