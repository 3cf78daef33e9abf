//! Threads reused from call to call: a call runs on a thread that an earlier call ended on,
//! when one is idle, else on a new one; a thread idle for [`IDLE`] ends. Spawning a thread per
//! call costs more than a short intent on some machines (130 us to spawn and join one on a
//! 2-core VM, against 71 us for a round trip between two threads).

use std::sync::mpsc::{sync_channel, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

/// How long a thread waits for another call before it ends.
pub const IDLE: Duration = Duration::from_secs(30);

/// Work for one thread.
pub type Job = Box<dyn FnOnce() + Send>;

/// The idle threads, each waiting on its own channel (cheap to clone: one pool).
#[derive(Clone, Default)]
pub struct Threads(Arc<Mutex<Vec<SyncSender<Job>>>>);

impl Threads {
    /// Runs `job` on an idle thread, or a new one named `name`.
    pub fn run(&self, name: &str, job: Job) -> std::io::Result<()> {
        let mut job = job;
        while let Some(idle) = self.0.lock().ok().and_then(|mut idle| idle.pop()) {
            match idle.try_send(job) {
                Ok(()) => return Ok(()),
                // That thread ended (or is not waiting): the job comes back for the next one.
                Err(TrySendError::Full(back) | TrySendError::Disconnected(back)) => job = back,
            }
        }
        let pool = Arc::downgrade(&self.0);
        std::thread::Builder::new().name(name.into()).spawn(move || serve(job, &pool)).map(drop)
    }
}

/// Runs `job`, then the jobs handed to this thread while it is idle in `pool`, until it has
/// waited [`IDLE`] or the pool is gone.
fn serve(job: Job, pool: &Weak<Mutex<Vec<SyncSender<Job>>>>) {
    job();
    let (sender, jobs) = sync_channel::<Job>(1);
    loop {
        let Some(idle) = pool.upgrade() else { return };
        match idle.lock() {
            Ok(mut idle) => idle.push(sender.clone()),
            Err(_) => return,
        }
        drop(idle);
        match jobs.recv_timeout(IDLE) {
            Ok(job) => job(),
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;

    #[test]
    fn a_thread_serves_the_next_job_when_idle() {
        let threads = Threads::default();
        let (sender, ran_on) = channel();
        let ids: Vec<_> = (0..3)
            .map(|_| {
                let sender = sender.clone();
                threads.run("test", Box::new(move || sender.send(std::thread::current().id()).unwrap())).unwrap();
                let id = ran_on.recv().unwrap();
                while threads.0.lock().unwrap().is_empty() {
                    std::thread::yield_now();
                }
                id
            })
            .collect();
        assert!(ids.iter().all(|id| *id == ids[0]), "the idle thread was reused: {ids:?}");
    }
}
