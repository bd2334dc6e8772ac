//! The queue of checks: at most `controller.max_concurrent_checks` run at
//! once, the next `controller.max_queued_checks` wait their turn in the
//! order they came, and one more is refused. A waiting check knows its
//! position and hears when the queue moves ([`Queue::subscribe`]); one whose
//! callers have gone leaves it ([`Ticket`] dropped) without ever running.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::watch;
use tonic::Status;

/// The places for checks at one controller and the line waiting for them.
#[derive(Debug)]
pub(crate) struct Queue {
    line: Mutex<Line>,
    /// Bumped whenever a place is freed or taken or the line changes.
    moved: watch::Sender<u64>,
    max_running: usize,
    max_waiting: usize,
}

#[derive(Debug, Default)]
struct Line {
    running: usize,
    /// The tickets waiting, first come first.
    waiting: VecDeque<u64>,
    next: u64,
}

/// A check's place in the line until it gets a place to run ([`Ticket::poll`]);
/// dropped before that, it leaves the line.
#[derive(Debug)]
pub(crate) struct Ticket {
    queue: Arc<Queue>,
    id: u64,
    placed: bool,
}

/// A place among the checks running at once, given back when dropped.
#[derive(Debug)]
pub(crate) struct Place {
    queue: Arc<Queue>,
}

/// Where a waiting ticket stands: 1 is next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Standing {
    pub(crate) position: u32,
    pub(crate) waiting: u32,
}

impl Queue {
    /// `max_running` places (at least one), and room for `max_waiting` in the line.
    pub(crate) fn new(max_running: usize, max_waiting: usize) -> Arc<Queue> {
        Arc::new(Queue {
            line: Mutex::default(),
            moved: watch::Sender::new(0),
            max_running: max_running.max(1),
            max_waiting,
        })
    }

    fn line(&self) -> MutexGuard<'_, Line> {
        self.line.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn moved(&self) {
        self.moved.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Hear when the queue moves.
    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        self.moved.subscribe()
    }

    /// Checks running now.
    pub(crate) fn running(&self) -> usize {
        self.line().running
    }

    /// Checks waiting now.
    pub(crate) fn waiting(&self) -> usize {
        self.line().waiting.len()
    }

    /// Join the end of the line, or be refused RESOURCE_EXHAUSTED naming
    /// `controller.max_queued_checks` when the places are taken and the line
    /// is full.
    pub(crate) fn join(self: &Arc<Self>) -> Result<Ticket, Status> {
        let mut line = self.line();
        let runs_at_once = line.waiting.is_empty() && line.running < self.max_running;
        if !runs_at_once && line.waiting.len() >= self.max_waiting {
            let (running, waiting) = (line.running, line.waiting.len());
            let reason = format!(
                "{running} {} running and {waiting} waiting, the most this controller holds \
                 (controller.max_concurrent_checks = {}, controller.max_queued_checks = {}); try again when some \
                 have finished",
                if running == 1 { "check is" } else { "checks are" },
                self.max_running,
                self.max_waiting
            );
            let code = tonic::Code::ResourceExhausted;
            return Err(crate::error::RequestError { code, field: "max_queued_checks".into(), reason }.into());
        }
        let id = line.next;
        line.next += 1;
        line.waiting.push_back(id);
        drop(line);
        self.moved();
        Ok(Ticket { queue: self.clone(), id, placed: false })
    }
}

impl Ticket {
    /// A place, if this ticket is first in line and one is free; else where it stands.
    pub(crate) fn poll(&mut self) -> Result<Place, Standing> {
        let mut line = self.queue.line();
        let index = line.waiting.iter().position(|&id| id == self.id).expect("a ticket not placed is in line");
        if index == 0 && line.running < self.queue.max_running {
            line.waiting.pop_front();
            line.running += 1;
            self.placed = true;
            drop(line);
            self.queue.moved();
            return Ok(Place { queue: self.queue.clone() });
        }
        Err(Standing { position: index as u32 + 1, waiting: line.waiting.len() as u32 })
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if self.placed {
            return;
        }
        self.queue.line().waiting.retain(|&id| id != self.id);
        self.queue.moved();
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        self.queue.line().running -= 1;
        self.queue.moved();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One place and room for two in line: the first runs at once, the next two wait at positions
    /// 1 and 2, a fourth is refused naming `max_queued_checks`; when the second leaves the line
    /// the third moves up to 1; when the place is freed the third takes it, and the line is empty.
    #[test]
    fn the_line_is_first_come_first_served_and_bounded() {
        let q = Queue::new(1, 2);
        let place = q.join().unwrap().poll().expect("a free place");
        let (mut second, mut third) = (q.join().unwrap(), q.join().unwrap());
        assert_eq!(second.poll().unwrap_err(), Standing { position: 1, waiting: 2 });
        assert_eq!(third.poll().unwrap_err(), Standing { position: 2, waiting: 2 });
        let e = q.join().unwrap_err();
        assert_eq!(e.code(), tonic::Code::ResourceExhausted);
        assert!(e.message().starts_with("max_queued_checks: 1 check is running and 2 waiting"), "{e:?}");
        assert!(e.message().contains("controller.max_queued_checks = 2"), "{e:?}");
        drop(second);
        assert_eq!(third.poll().unwrap_err(), Standing { position: 1, waiting: 1 });
        drop(place);
        let _running = third.poll().expect("the place freed");
        assert_eq!((q.running(), q.waiting()), (1, 0));
    }
}
