//! A start/finish rendezvous of a step's threads that can be broken: when a worker thread
//! cannot be created, the ones already waiting must be let go instead of waiting forever
//! for a party that will never come (a `std::sync::Barrier` cannot be broken).

use std::sync::{Condvar, Mutex};

#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    Waiting(usize),
    Open,
    Broken,
}

/// Opens when `parties` threads arrived, or at once for everyone when broken.
pub(crate) struct Gate {
    parties: usize,
    state: Mutex<State>,
    opened: Condvar,
}

impl Gate {
    /// A gate for `parties` threads.
    pub(crate) fn new(parties: usize) -> Self {
        Gate {
            parties,
            state: Mutex::new(State::Waiting(0)),
            opened: Condvar::new(),
        }
    }

    /// Arrives and waits until every party arrived (true) or the gate was broken (false).
    pub(crate) fn wait(&self) -> bool {
        let Ok(mut s) = self.state.lock() else {
            return false;
        };
        if let State::Waiting(n) = *s {
            if n + 1 >= self.parties {
                *s = State::Open;
                self.opened.notify_all();
            } else {
                *s = State::Waiting(n + 1);
            }
        }
        while let State::Waiting(_) = *s {
            match self.opened.wait(s) {
                Ok(g) => s = g,
                Err(_) => return false,
            }
        }
        *s == State::Open
    }

    /// Lets every waiting and future party through at once.
    pub(crate) fn break_open(&self) {
        if let Ok(mut s) = self.state.lock() {
            if *s != State::Open {
                *s = State::Broken;
            }
            self.opened.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Gate;

    #[test]
    fn opens_when_all_arrive() {
        let g = Gate::new(3);
        std::thread::scope(|s| {
            let a = s.spawn(|| g.wait());
            let b = s.spawn(|| g.wait());
            assert!(g.wait());
            assert!(a.join().unwrap() && b.join().unwrap());
        });
    }

    #[test]
    fn a_broken_gate_lets_the_waiting_go() {
        let g = Gate::new(3);
        std::thread::scope(|s| {
            let a = s.spawn(|| g.wait());
            std::thread::sleep(std::time::Duration::from_millis(50));
            g.break_open();
            assert!(!a.join().unwrap());
            assert!(!g.wait(), "a later arrival passes too");
        });
    }
}
